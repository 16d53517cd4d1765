// Package pack writes and reads packs: one file holding whole sessions
// of a store (each session's family as package carry copies it: main
// transcript, subagents, tool-results, todos, file-history, task list)
// and its prompt lines of history.jsonl, to carry them to another machine
// or person, optionally encrypted with age; and plans their unpacking
// into a store (carry.Land), where each session lands in the folder of a
// directory of this machine, its cwd fields mapped, under a new id only
// when the store has another session of that id.
//
// A pack is a stream: a tar stream (PAX) compressed with zstd, whose
// first member is ManifestName, the JSON Manifest (its sessions, every
// member's path relative to the store, size, mode, mtime and sha256, the
// machine it was made on), then every member in the manifest's order.
// Encrypted, that whole stream is an age file. Reading a pack is bounded
// by its manifest: every path is checked to be a packed session's own
// before anything is read, every member must be what the manifest says
// (kind, size, sha256), and nothing else may follow.
package pack

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"time"
)

// ManifestName is the name of a pack's first member.
const ManifestName = "cfix-pack.json"

// HistoryName is the member holding the prompt lines of history.jsonl
// of the packed sessions.
const HistoryName = "history.jsonl"

// FormatName and FormatVersion identify a pack's manifest.
const (
	FormatName    = "cfix-pack"
	FormatVersion = 1
)

// Manifest describes a pack.
type Manifest struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Cfix    string    `json:"cfix"`
	Created time.Time `json:"created"`
	// Host and Home are the source machine's host name and home folder;
	// Root the store the sessions were packed from.
	Host string `json:"host"`
	Home string `json:"home"`
	Root string `json:"root"`
	// Encrypted says how the pack was encrypted ("" for not,
	// "recipients", "passphrase"); written for listings (ls --remote),
	// never trusted by a reader.
	Encrypted string `json:"encrypted,omitempty"`
	// Redacted says the sessions were packed with their secrets taken
	// out (cfix pack --redact).
	Redacted bool      `json:"redacted,omitempty"`
	Sessions []Session `json:"sessions"`
	// Files are the members after the manifest, in order: each session's
	// files and folders, then HistoryName when there is one.
	Files []File `json:"files"`
}

// Session is one packed session.
type Session struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	// CWD is the directory it ran in (its main transcript's first cwd),
	// Project its project folder's name in the source store.
	CWD     string `json:"cwd,omitempty"`
	Project string `json:"project"`
	// First and Last are the timestamps of its first and last entry.
	First string `json:"first,omitempty"`
	Last  string `json:"last,omitempty"`
	// Main is its main transcript's member path.
	Main  string `json:"main"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	// Prompts is how many lines of history.jsonl the pack holds for it.
	Prompts int `json:"prompts,omitempty"`
	// Redacted is how many secrets were taken out of its files, its
	// prompts, its title and its index entry; Rules counts them by rule.
	Redacted int            `json:"redacted,omitempty"`
	Rules    map[string]int `json:"rules,omitempty"`
	// Index is its sessions-index.json entry in the source store.
	Index json.RawMessage `json:"index,omitempty"`
}

// File is one member: a file, or a folder (Dir).
type File struct {
	Path    string      `json:"path"` // relative to the store, forward slashes
	Dir     bool        `json:"dir,omitempty"`
	Mode    fs.FileMode `json:"mode"` // permission bits
	ModTime time.Time   `json:"mtime"`
	Size    int64       `json:"size,omitempty"`
	SHA256  string      `json:"sha256,omitempty"`
	// Session is the id of the session it belongs to ("" for HistoryName).
	Session string `json:"session,omitempty"`
}

// Bytes is the size of the files a manifest lists.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// DamagedError is a pack that cannot be read whole, or whose content
// differs from its manifest.
type DamagedError struct {
	Name   string // the pack (a path, or what the caller calls it)
	Reason string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("pack %s is damaged, truncated or not a cfix pack: %s; nothing was unpacked", e.Name, e.Reason)
}
