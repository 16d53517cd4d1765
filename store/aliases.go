package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// AliasesFile is the name of a project folder's alias file.
//
// Measured with 2.1.223 (testdata/facts/session-aliases-2.1.223): /add-dir
// DIR in a session appends the absolute path of that session's project
// folder, and "\n", to projects/<folder of DIR>/.session-aliases (mode
// 0600), unless a line already holds it. The resume picker and `claude -c`
// run in DIR then list the sessions of every folder the file names. The
// client splits the file on "\n" and drops empty lines; a line naming no
// folder (gone, or no path at all) lists nothing, and a last line without
// its newline counts.
const AliasesFile = ".session-aliases"

// maxAliases bounds what AliasLines reads of one alias file: each line
// is one path, and a file the client grows by one line per /add-dir of
// another folder stays far below.
const maxAliases = 1 << 20

// AliasLines returns the lines of the alias file at path as the client
// reads them: split on "\n", empty lines dropped, repeats dropped. A
// missing file holds none.
func AliasLines(path string) ([]string, error) {
	f, err := rfile.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxAliases+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxAliases {
		return nil, fmt.Errorf("%s: over %d bytes, not read", path, maxAliases)
	}
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(string(raw), "\n") {
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
	}
	return out, nil
}

// Alias is one project folder's alias file naming another folder.
type Alias struct {
	File   string // the alias file: projects/<folder>/.session-aliases
	Folder string // the project folder holding it
	Names  string // the project folder its line names (as written)
}

// Aliases lists, for every project folder of the store with an alias file,
// each line naming a folder.
func Aliases(root string) ([]Alias, error) {
	pdir := ProjectsDir(root)
	ents, err := os.ReadDir(pdir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Alias
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		folder := filepath.Join(pdir, e.Name())
		file := filepath.Join(folder, AliasesFile)
		lines, err := AliasLines(file)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			out = append(out, Alias{File: file, Folder: folder, Names: l})
		}
	}
	return out, nil
}

// Job is a background session's record: jobs/<short>/state.json.
//
// Measured with 2.1.332 (testdata/facts/bg-job-2.1.332): `claude --bg
// PROMPT` writes jobs/<the session id's first 8 characters>/state.json
// (with timeline.jsonl beside it) naming the session (sessionId,
// resumeSessionId), its transcript (linkScanPath), its cwd and its state;
// `claude attach`, `logs`, `stop` and `rm` take the short id.
type Job struct {
	Dir             string // jobs/<short>
	Short           string
	SessionID       string `json:"sessionId"`
	ResumeSessionID string `json:"resumeSessionId"`
	Transcript      string `json:"linkScanPath"`
	Cwd             string `json:"cwd"`
	State           string `json:"state"`
	Version         string `json:"cliVersion"`
}

// maxJobState bounds what Jobs reads of one state.json (the client caps
// its own reads at 8 MiB).
const maxJobState = 8 << 20

// Jobs lists the store's background-session records. A state.json that
// is not a JSON object, or is too large, is skipped: the client treats
// such a job as unreadable, and it names no session cfix could act on.
func Jobs(root string) ([]Job, error) {
	dir := filepath.Join(root, "jobs")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Job
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		j := Job{Dir: filepath.Join(dir, e.Name()), Short: e.Name()}
		f, err := rfile.Open(filepath.Join(j.Dir, "state.json"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, rfile.ErrNotRegular) {
				continue
			}
			return nil, err
		}
		raw, err := io.ReadAll(io.LimitReader(f, maxJobState+1))
		f.Close()
		if err != nil {
			return nil, err
		}
		if len(raw) > maxJobState || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &j) != nil {
			continue
		}
		out = append(out, j)
	}
	return out, nil
}
