package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ExtraKind tells which kind of non-resumable transcript an Extra is.
type ExtraKind int

const (
	// ExtraExport is a compact transcript export: transcripts/ses_*.jsonl,
	// lines with a simple type, timestamp, content and tool fields. The
	// file name is its only stable id.
	ExtraExport ExtraKind = iota
	// ExtraPreCompact is a session's history saved before a compaction:
	// pre-compact-session-histories/*.jsonl, entries much like a
	// transcript's (sessionId, cwd, message, uuid, parentUuid).
	ExtraPreCompact
)

func (k ExtraKind) String() string {
	if k == ExtraExport {
		return "transcript export"
	}
	return "pre-compact history"
}

// Dir returns the folder of the store that holds extras of kind k.
func (k ExtraKind) Dir() string {
	if k == ExtraExport {
		return "transcripts"
	}
	return "pre-compact-session-histories"
}

// Extra is a transcript Claude Code keeps outside projects/ and never
// resumes: commands list, show and search it, and never treat it as a
// session (no chain checks, no repair, no resume).
type Extra struct {
	Path    string
	Kind    ExtraKind
	Name    string // the file name without .jsonl: ses_<id> for an export
	Size    int64
	ModTime time.Time
	// Dev, Ino and CTime complete its identity (see File).
	Dev, Ino uint64
	CTime    int64
}

// extraOf is the extra of kind k at path, whose stat is fi.
func extraOf(k ExtraKind, path string, fi os.FileInfo) Extra {
	var f File
	f.Identify(fi)
	return Extra{Path: path, Kind: k, Name: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Size: f.Size, ModTime: f.ModTime,
		Dev: f.Dev, Ino: f.Ino, CTime: f.CTime}
}

// File is the extra as a transcript file of the store (its Session "").
func (x Extra) File() File {
	return File{Path: x.Path, Kind: KindSession, Size: x.Size, ModTime: x.ModTime, Dev: x.Dev, Ino: x.Ino, CTime: x.CTime}
}

// Extras lists the extras of the store at root, sorted by path. A store
// without their folders has none.
func Extras(root string) ([]Extra, error) {
	var out []Extra
	for _, k := range []ExtraKind{ExtraExport, ExtraPreCompact} {
		dir := filepath.Join(root, k.Dir())
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			name := e.Name()
			if !strings.HasSuffix(name, ".jsonl") || k == ExtraExport && !strings.HasPrefix(name, "ses_") {
				continue
			}
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			if !fi.Mode().IsRegular() {
				continue
			}
			out = append(out, extraOf(k, filepath.Join(dir, name), fi))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ExtraAt returns the extra at path, if path is one of the store's.
func ExtraAt(root, path string) (Extra, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Extra{}, false
	}
	for _, k := range []ExtraKind{ExtraExport, ExtraPreCompact} {
		dir := filepath.Join(root, k.Dir())
		name := filepath.Base(abs)
		if filepath.Dir(abs) != dir && filepath.Dir(RealPath(abs)) != RealPath(dir) || !strings.HasSuffix(name, ".jsonl") ||
			k == ExtraExport && !strings.HasPrefix(name, "ses_") {
			continue
		}
		fi, err := os.Stat(abs)
		if err != nil || !fi.Mode().IsRegular() {
			return Extra{}, false
		}
		return extraOf(k, filepath.Join(dir, name), fi), true
	}
	return Extra{}, false
}
