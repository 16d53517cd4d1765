// Package desktop reads Claude Desktop's index of the Claude Code sessions it
// shows: one local_<uuid>.json file per session, outside the store, naming
// the transcript of the store it resumes. cfix reads it and never writes it.
//
// What is known of it comes from public tracker threads (Desktop is an
// Electron app with no published format); each fact below names its source.
//
//   - The index lives in claude-code-sessions under Desktop's app-data
//     folder: %APPDATA%\Claude on Windows, ~/Library/Application
//     Support/Claude on macOS, ~/.config/Claude on Linux, two folders down
//     (an account's uuid, then an organization's or workspace's):
//     claude-code-sessions/<account>/<org>/local_<uuid>.json
//     (https://github.com/anthropics/claude-code/issues/92825,
//     https://github.com/anthropics/claude-code/issues/73526,
//     https://github.com/anthropics/claude-code/issues/78196). An older
//     Desktop kept them in local-agent-mode-sessions
//     (https://github.com/anthropics/claude-code/issues/63839).
//   - A file holds sessionId (local_ and a uuid: Desktop's own id, not the
//     transcript's), cliSessionId (the transcript
//     ~/.claude/projects/<folder of cwd>/<cliSessionId>.jsonl), cwd and
//     originCwd, title, createdAt, lastActivityAt and lastFocusedAt
//     (milliseconds), isArchived, completedTurns, transcriptUnavailable,
//     scheduledTaskId, and the session's whole MCP configuration, which
//     makes a file a few hundred kilobytes
//     (https://github.com/anthropics/claude-code/issues/53225,
//     https://github.com/anthropics/claude-code/issues/79940,
//     https://github.com/anthropics/claude-code/issues/75573,
//     https://github.com/anthropics/claude-code/issues/92825).
//   - Desktop logs "Mapping internal session local_<a> to CLI session <b>"
//     and resumes <b> with its bundled claude in cwd
//     (https://github.com/anthropics/claude-code/issues/21948).
//   - An entry whose transcript is not on disk, or whose transcript's lines
//     carry another session's id, shows "Session not found on disk"
//     (https://github.com/anthropics/claude-code/issues/63904,
//     https://github.com/anthropics/claude-code/issues/91997); a resume
//     that fails says "No conversation found with session ID" and offers
//     "Start fresh", after which Desktop binds the entry to a new, empty
//     transcript and the old one is orphaned
//     (https://github.com/anthropics/claude-code/issues/75229,
//     https://github.com/anthropics/claude-code/issues/78284).
//   - Desktop looks for the transcript in the project folder of the entry's
//     cwd: a transcript in another folder (a session that worked in a git
//     worktree, a project folder renamed) is "no longer on disk" to it
//     (https://github.com/anthropics/claude-code/issues/83541,
//     https://github.com/anthropics/claude-code/issues/78940,
//     https://github.com/anthropics/claude-code/issues/78284); a cwd that
//     is gone gives "Working directory no longer exists"
//     (https://github.com/anthropics/claude-code/issues/53225).
//   - Desktop reads the index when it starts
//     (https://github.com/anthropics/claude-code/issues/78196); putting a
//     transcript back on disk does not bring back an entry Desktop
//     deleted (https://github.com/anthropics/claude-code/issues/67224).
package desktop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// EnvDir names the environment variable that sets the index folder (the
// claude-code-sessions folder itself), as --desktop-dir does.
const EnvDir = "CFIX_DESKTOP_DIR"

// MaxFileSize is the size past which an index file is refused unread. The
// files seen hold a session's MCP configuration and run to a few hundred
// kilobytes.
const MaxFileSize = 8 << 20

// MaxFiles is the number of index files read; past it the rest are left
// unread and said so.
const MaxFiles = 100_000

// Entry is what cfix reads of one local_<uuid>.json file.
type Entry struct {
	// Path is the file's path.
	Path string `json:"path"`
	// ID is Desktop's own id of the session (local_<uuid>).
	ID string `json:"sessionId"`
	// CLISessionID names the transcript Desktop resumes.
	CLISessionID string `json:"cliSessionId"`
	Title        string `json:"title,omitempty"`
	Cwd          string `json:"cwd,omitempty"`
	OriginCwd    string `json:"originCwd,omitempty"`
	Archived     bool   `json:"isArchived,omitempty"`
	// TranscriptUnavailable is Desktop's own mark of an entry whose
	// transcript it lost.
	TranscriptUnavailable bool `json:"transcriptUnavailable,omitempty"`
	// CompletedTurns is nil when the file does not say.
	CompletedTurns *int `json:"completedTurns,omitempty"`
}

// titled is the entry's title for a message: ` "title"`, or nothing.
func (e *Entry) titled() string {
	if e.Title == "" {
		return ""
	}
	return fmt.Sprintf(" %q", e.Title)
}

// Empty reports whether the entry says it has no completed turn: Desktop
// made it, and its transcript may not be written yet
// (https://github.com/anthropics/claude-code/issues/62017).
func (e *Entry) Empty() bool { return e.CompletedTurns != nil && *e.CompletedTurns == 0 }

// FileError is an index file cfix could not read, or refused.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return "desktop index " + e.Path + ": " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

// Index is Claude Desktop's index, as read.
type Index struct {
	// Dir is the claude-code-sessions folder.
	Dir     string
	Entries []Entry
	// Problems are the files not read (each a *FileError), and the
	// count of those left past MaxFiles.
	Problems []error
	bySID    map[string][]int
}

// For returns the entries that name the transcript of session id.
func (x *Index) For(id string) []Entry {
	if x == nil {
		return nil
	}
	var out []Entry
	for _, i := range x.bySID[id] {
		out = append(out, x.Entries[i])
	}
	return out
}

// DefaultDir returns the claude-code-sessions folder of Claude Desktop on
// this system, or "" when there is no home folder to find it under.
func DefaultDir() string {
	return defaultDir(runtime.GOOS, os.Getenv, os.UserHomeDir)
}

func defaultDir(goos string, env func(string) string, home func() (string, error)) string {
	h, err := home()
	switch goos {
	case "windows":
		if d := env("APPDATA"); d != "" {
			return filepath.Join(d, "Claude", "claude-code-sessions")
		}
		if err != nil {
			return ""
		}
		return filepath.Join(h, "AppData", "Roaming", "Claude", "claude-code-sessions")
	case "darwin":
		if err != nil {
			return ""
		}
		return filepath.Join(h, "Library", "Application Support", "Claude", "claude-code-sessions")
	}
	if d := env("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "Claude", "claude-code-sessions")
	}
	if err != nil {
		return ""
	}
	return filepath.Join(h, ".config", "Claude", "claude-code-sessions")
}

// Dir returns the index folder to read for the store root: flagDir when
// set, else $CFIX_DESKTOP_DIR, else DefaultDir when root is the store
// Desktop uses (~/.claude); "" otherwise. Desktop's entries name
// transcripts of ~/.claude: checked against another store (a copy, a
// backup, a CLAUDE_CONFIG_DIR of the terminal's) every one would look
// missing.
func Dir(flagDir, root string) string {
	if flagDir != "" {
		return flagDir
	}
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || root == "" {
		return ""
	}
	if !sameDir(root, filepath.Join(home, ".claude")) {
		return ""
	}
	return DefaultDir()
}

func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// Read reads the index in dir: dir/<account>/<org>/local_*.json. A folder
// that does not exist is no index: Read returns nil and no error. A file it
// cannot read, or refuses (not a regular file, past MaxFileSize, not a JSON
// object), is a Problem; the error is for dir itself.
func Read(dir string) (*Index, error) {
	if dir == "" {
		return nil, nil
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("desktop index %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("desktop index %s: not a folder", dir)
	}
	x := &Index{Dir: dir, bySID: map[string][]int{}}
	files, err := x.list(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range files {
		e, err := readEntry(p)
		if err != nil {
			x.Problems = append(x.Problems, &FileError{Path: p, Err: err})
			continue
		}
		x.Entries = append(x.Entries, e)
		if e.CLISessionID != "" {
			x.bySID[e.CLISessionID] = append(x.bySID[e.CLISessionID], len(x.Entries)-1)
		}
	}
	return x, nil
}

// list returns the local_*.json files two folders down, sorted; folders
// reached through symbolic links are not entered.
func (x *Index) list(dir string) ([]string, error) {
	var out []string
	accounts, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("desktop index %s: %w", dir, err)
	}
	left := 0
	for _, a := range accounts {
		if !a.IsDir() {
			continue
		}
		orgs, err := os.ReadDir(filepath.Join(dir, a.Name()))
		if err != nil {
			x.Problems = append(x.Problems, &FileError{Path: filepath.Join(dir, a.Name()), Err: err})
			continue
		}
		for _, o := range orgs {
			if !o.IsDir() {
				continue
			}
			od := filepath.Join(dir, a.Name(), o.Name())
			ents, err := os.ReadDir(od)
			if err != nil {
				x.Problems = append(x.Problems, &FileError{Path: od, Err: err})
				continue
			}
			for _, e := range ents {
				n := e.Name()
				if !strings.HasPrefix(n, "local_") || !strings.HasSuffix(n, ".json") || e.IsDir() {
					continue
				}
				if len(out) >= MaxFiles {
					left++
					continue
				}
				out = append(out, filepath.Join(od, n))
			}
		}
	}
	if left > 0 {
		x.Problems = append(x.Problems, fmt.Errorf("desktop index %s: more than %d session files: %d left unread", dir, MaxFiles, left))
	}
	sort.Strings(out)
	return out, nil
}

// readEntry decodes one file, refusing what is not a regular file (a
// symbolic link is not followed) or is past MaxFileSize.
func readEntry(path string) (Entry, error) {
	e := Entry{Path: path}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return e, errors.New("a symbolic link: not followed")
	}
	f, err := rfile.OpenFile(path, os.O_RDONLY|rfile.NoFollow, 0)
	if err != nil {
		return e, unwrapPath(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return e, err
	}
	if fi.Size() > MaxFileSize {
		return e, fmt.Errorf("%d bytes, more than the %d cfix reads of an index file", fi.Size(), MaxFileSize)
	}
	dec := json.NewDecoder(io.LimitReader(f, MaxFileSize+1))
	var raw struct {
		ID                    any `json:"sessionId"`
		CLISessionID          any `json:"cliSessionId"`
		Title                 any `json:"title"`
		Cwd                   any `json:"cwd"`
		OriginCwd             any `json:"originCwd"`
		Archived              any `json:"isArchived"`
		TranscriptUnavailable any `json:"transcriptUnavailable"`
		CompletedTurns        any `json:"completedTurns"`
	}
	tok, err := dec.Token()
	if err != nil {
		return e, fmt.Errorf("not JSON: %v", syntaxMessage(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return e, errors.New("not a JSON object")
	}
	// Read member by member: a value cfix does not use (the MCP
	// configuration) is decoded into nothing kept.
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return e, fmt.Errorf("not JSON: %v", syntaxMessage(err))
		}
		key, _ := kt.(string)
		var dst any
		switch key {
		case "sessionId":
			dst = &raw.ID
		case "cliSessionId":
			dst = &raw.CLISessionID
		case "title":
			dst = &raw.Title
		case "cwd":
			dst = &raw.Cwd
		case "originCwd":
			dst = &raw.OriginCwd
		case "isArchived":
			dst = &raw.Archived
		case "transcriptUnavailable":
			dst = &raw.TranscriptUnavailable
		case "completedTurns":
			dst = &raw.CompletedTurns
		default:
			dst = &skip{}
		}
		if err := dec.Decode(dst); err != nil {
			return e, fmt.Errorf("not JSON: %v", syntaxMessage(err))
		}
	}
	if _, err := dec.Token(); err != nil {
		return e, fmt.Errorf("not JSON: %v", syntaxMessage(err))
	}
	e.ID, _ = raw.ID.(string)
	e.CLISessionID, _ = raw.CLISessionID.(string)
	e.Title, _ = raw.Title.(string)
	e.Cwd, _ = raw.Cwd.(string)
	e.OriginCwd, _ = raw.OriginCwd.(string)
	e.Archived, _ = raw.Archived.(bool)
	e.TranscriptUnavailable, _ = raw.TranscriptUnavailable.(bool)
	if n, ok := raw.CompletedTurns.(float64); ok && n >= 0 && n < 1<<31 {
		c := int(n)
		e.CompletedTurns = &c
	}
	return e, nil
}

// skip takes any JSON value and keeps nothing of it.
type skip struct{}

func (*skip) UnmarshalJSON([]byte) error { return nil }

func syntaxMessage(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the file ends inside its object"
	}
	return err.Error()
}

// unwrapPath drops the path a *fs.PathError repeats: FileError gives it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Change is what a plan does to the main transcripts of one session: the
// paths that hold it before the plan and after it.
type Change struct {
	Session       string
	Before, After []string
}

// Notes returns what a plan's changes do to the sessions Desktop lists, one
// note per entry they break: a transcript that leaves the store, or leaves
// the project folder of the entry's cwd, where Desktop resumes it. folder
// matches a transcript's folder name with a cwd (store.FolderMatches).
func (x *Index) Notes(changes []Change, folder func(name, cwd string) bool) []string {
	if x == nil {
		return nil
	}
	var notes []string
	in := func(paths []string, cwd string) bool {
		for _, p := range paths {
			if folder(filepath.Base(filepath.Dir(p)), cwd) {
				return true
			}
		}
		return false
	}
	for _, c := range changes {
		for _, e := range x.For(c.Session) {
			switch {
			case len(c.Before) > 0 && len(c.After) == 0:
				notes = append(notes, fmt.Sprintf("Claude Desktop lists session %s%s (%s): without its transcript Desktop shows \"Session not found on disk\", and a message sent there starts a new, empty session (Desktop's index is left as it is)", c.Session, e.titled(), e.Path))
			case e.Cwd != "" && in(c.Before, e.Cwd) && !in(c.After, e.Cwd):
				notes = append(notes, fmt.Sprintf("Claude Desktop lists session %s%s (%s) and resumes it in %s, whose project folder will no longer hold its transcript: Desktop will say its history is no longer on disk, and a message sent there starts a new, empty session (Desktop's index is left as it is)", c.Session, e.titled(), e.Path, e.Cwd))
			}
		}
	}
	return notes
}
