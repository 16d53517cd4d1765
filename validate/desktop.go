package validate

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cfix-dev/cfix/desktop"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/store"
)

// desktopIndex checks Claude Desktop's entries against the store (see
// package desktop for what Desktop does with each): an entry whose
// transcript is missing (whole runs only: a targeted run does not see every
// transcript), holds another session's entries only, or sits outside the
// project folder of the entry's cwd. No index, no finding.
func (s *storeCheck) desktopIndex() {
	x := s.desktop
	if x == nil {
		return
	}
	for _, p := range x.Problems {
		var fe *desktop.FileError
		if errors.As(p, &fe) {
			s.add(DesktopUnreadable, fe.Path, 0, "not read: %v", fe.Err)
			continue
		}
		s.add(DesktopUnreadable, x.Dir, 0, "%v", p)
	}
	for i := range x.Entries {
		e := &x.Entries[i]
		if e.CLISessionID == "" {
			continue
		}
		rs := s.sessions[e.CLISessionID]
		if len(rs) == 0 {
			if !s.whole || e.Empty() {
				continue
			}
			fd := s.add(DesktopMissing, e.Path, 0, "Claude Desktop lists session %s%s, whose transcript is not in the store: Desktop shows \"Session not found on disk\" for it, and a message sent there starts a new, empty session in its place", e.CLISessionID, titled(e))
			if e.Archived {
				fd.Severity = Notice
				fd.Message += " (Desktop archived the entry)"
			}
			continue
		}
		own := false
		for _, r := range rs {
			if !r.noOwnID || r.metaOnly {
				own = true
			}
		}
		if !own {
			r := rs[0]
			fd := s.add(DesktopMismatch, r.file.Path, 0, "Claude Desktop lists this session%s (%s), but no entry of the transcript carries its id: they carry session %s's; Desktop shows \"Session not found on disk\" for it", titled(e), e.Path, r.sessionID)
			fd.unfixed = true
			continue
		}
		if e.Cwd == "" || !filepath.IsAbs(e.Cwd) && !windowsAbs(e.Cwd) {
			continue
		}
		here := false
		for _, r := range rs {
			if store.FolderMatches(filepath.Base(filepath.Dir(r.file.Path)), e.Cwd) {
				here = true
			}
		}
		if !here {
			r := rs[0]
			fd := s.add(DesktopElsewhere, r.file.Path, 0, "Claude Desktop lists this session%s (%s) and resumes it in %s, whose project folder %s does not hold it: Desktop says its history is no longer on disk, and a message sent there starts a new, empty session in its place; cfix move %s --to %s puts it there",
				titled(e), e.Path, e.Cwd, store.EncodeProject(e.Cwd), e.CLISessionID, shell.Quote(e.Cwd))
			fd.unfixed = true
		}
	}
}

// titled is the entry's title for a message: ` "title"`, or nothing.
func titled(e *desktop.Entry) string {
	if e.Title == "" {
		return ""
	}
	return fmt.Sprintf(" %q", e.Title)
}

// windowsAbs reports whether p is an absolute Windows path (X:\ or X:/),
// which filepath.IsAbs does not take on other systems.
func windowsAbs(p string) bool {
	if len(p) < 3 || p[1] != ':' || (p[2] != '\\' && p[2] != '/') {
		return false
	}
	c := p[0] | 0x20
	return c >= 'a' && c <= 'z'
}
