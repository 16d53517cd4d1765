package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// StateDir is cfix's own folder for the hooks' log and state:
// $XDG_STATE_HOME/cfix, else ~/.local/state/cfix.
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "cfix"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "cfix"), nil
}

const (
	logName   = "guard.log"
	stateName = "guard-state.json"
	// LogLimit is the size at which the log is rotated (to guard.log.1).
	LogLimit = 1 << 20
)

// Run is what one hook run did, kept in the state file.
type Run struct {
	At       time.Time `json:"at"`
	Session  string    `json:"session,omitempty"`
	Source   string    `json:"source,omitempty"`
	Path     string    `json:"path,omitempty"`     // the transcript, when it has problems
	Problems []string  `json:"problems,omitempty"` // codes of the findings of severity error
	Error    string    `json:"error,omitempty"`
	// Archive is the --older-than of the archive the run started.
	Archive string `json:"archive,omitempty"`
}

// State is the state file: the last run of each hook, and the last run
// that found problems.
type State struct {
	Last     map[string]Run `json:"last"`
	Problems map[string]Run `json:"last_problems,omitempty"`
	// Archived is the last run that started an archive.
	Archived *Run `json:"last_archive,omitempty"`
}

// ReadState reads the state file in dir (empty when there is none).
func ReadState(dir string) (State, error) {
	st := State{Last: map[string]Run{}, Problems: map[string]Run{}}
	b, err := rfile.ReadFile(filepath.Join(dir, stateName))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %v", filepath.Join(dir, stateName), err)
	}
	if st.Last == nil {
		st.Last = map[string]Run{}
	}
	if st.Problems == nil {
		st.Problems = map[string]Run{}
	}
	return st, nil
}

// Record keeps run as the last of event in the state file in dir (written
// to a temporary file and renamed: a reader sees the old or the new one).
func Record(dir, event string, run Run) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, _ := ReadState(dir) // a damaged state file is replaced
	st.Last[event] = run
	if len(run.Problems) > 0 {
		st.Problems[event] = run
	}
	if run.Archive != "" {
		st.Archived = &run
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, stateName+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, stateName))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// LogPath is the hooks' log in dir.
func LogPath(dir string) string { return filepath.Join(dir, logName) }

// Log appends a line to the log in dir, moving a log past LogLimit to
// guard.log.1 first (the one before is dropped).
func Log(dir, line string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	p := LogPath(dir)
	if fi, err := os.Stat(p); err == nil && fi.Size() >= LogLimit {
		os.Rename(p, p+".1")
	}
	f, err := rfile.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339), line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// installsName is the file of what each install found (Before), by the
// absolute path of the settings file it changed.
const installsName = "guard-installs.json"

// LoadBefore returns what the install of the settings file at path found,
// as SaveBefore kept it in dir; nil when nothing was kept (installed by an
// earlier cfix, or the file is damaged: uninstall then works without it).
func LoadBefore(dir, path string) *Before {
	all := readInstalls(dir)
	return all[path]
}

// SaveBefore keeps what the install of the settings file at path found
// (nil forgets it), written to a temporary file and renamed.
func SaveBefore(dir, path string, b *Before) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	all := readInstalls(dir)
	if b == nil {
		if _, ok := all[path]; !ok {
			return nil
		}
		delete(all, path)
	} else {
		all[path] = b
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, installsName), append(data, '\n'))
}

func readInstalls(dir string) map[string]*Before {
	all := map[string]*Before{}
	b, err := os.ReadFile(filepath.Join(dir, installsName))
	if err == nil && len(b) < 1<<20 {
		json.Unmarshal(b, &all)
	}
	if all == nil {
		all = map[string]*Before{}
	}
	return all
}

// writeAtomic writes data to path through a temporary file beside it.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
