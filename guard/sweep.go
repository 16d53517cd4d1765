package guard

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/store"
)

// Margin is how many days before Claude Code's sweep would delete a
// session the SessionStart hook archives it.
const Margin = 5

// archiveEvery is how often the hook starts an archive: Claude Code
// sweeps at most once a day (.last-cleanup) too.
const archiveEvery = 24 * time.Hour

// CleanupDays is the cleanupPeriodDays of the store's settings.json, as
// Claude Code reads it (store.SweepOf: 30 when unset or unreadable; 0
// turns the sweep off).
func CleanupDays(root string) int { return store.SweepOf(root, time.Now()).PeriodDays }

// ArchiveArgs are the cfix arguments that archive, in the store at root,
// every session the sweep deletes within Margin days; nil when the sweep
// is off or cleanupPeriodDays leaves no such age (Margin days or fewer).
func ArchiveArgs(root string) []string {
	days := archiveDays(root)
	if days <= 0 {
		return nil
	}
	return []string{"archive", "--older-than", fmt.Sprintf("%dd", days), "--by-transcript", "--root", root, "--apply", "--yes"}
}

// Archiver starts cfix with args in the background, its output going to
// the log at logPath, and does not wait for it (a hook has a short
// budget). Tests replace it.
var Archiver = func(args []string, logPath string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	log, err := rfile.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = log, log
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// archiveBeforeSweep starts the archive of the sessions the next sweep
// deletes, once a day at most, at the start of a session: Claude Code
// sweeps 10 minutes after the first prompt of an interactive session, new
// or resumed, never in -p mode (measured with 2.1.205 and 2.1.332). The
// session being resumed (except) is left in the store: the client is
// about to append to it.
func archiveBeforeSweep(dir, root string, last time.Time, except string, run *Run) error {
	if time.Since(last) < archiveEvery {
		return nil
	}
	args := ArchiveArgs(root)
	if args == nil {
		return nil
	}
	if except != "" {
		args = append(args, "--except", except)
	}
	if err := Log(dir, fmt.Sprintf("archive: cfix %v", args)); err != nil {
		return err
	}
	run.Archive = args[2]
	return Archiver(args, LogPath(dir))
}
