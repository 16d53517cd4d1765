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
