// Package store knows where Claude Code's store is and what is in it: the
// project-folder encoding, projects, sessions, subagents in both layouts,
// sidecars, the index, history, the folders that grow forever, and live
// sessions.
package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf16"
)

// Resolve returns the store's directory: flagRoot when set, else
// $CLAUDE_CONFIG_DIR, else ~/.claude. It checks that the directory exists,
// can be read and is a Claude Code store: it has a projects folder (Claude
// Code makes it with the first session it saves).
func Resolve(flagRoot string) (string, error) {
	root := flagRoot
	if root == "" {
		root = os.Getenv("CLAUDE_CONFIG_DIR")
	}
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("store: no home directory: %w", err)
		}
		root = filepath.Join(home, ".claude")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("store %s: %w", root, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("store %s: no such directory", abs)
		}
		return "", fmt.Errorf("store %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("store %s: not a directory", abs)
	}
	if fi, err := os.Stat(ProjectsDir(abs)); err != nil || !fi.IsDir() {
		// --root ~ names the folder above the store.
		below := filepath.Join(abs, ".claude")
		if fi, err := os.Stat(ProjectsDir(below)); err == nil && fi.IsDir() {
			return "", fmt.Errorf("store %s: no projects folder; did you mean %s?", abs, below)
		}
		return "", fmt.Errorf("store %s: not a Claude Code store (it has no projects folder)", abs)
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("store %s: %w", abs, err)
	}
	_, err = f.Readdirnames(1)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("store %s: cannot read: %w", abs, err)
	}
	return abs, nil
}

// MaxFolderLen is the length past which Claude Code cuts a project folder
// name and appends a hash of the path.
const MaxFolderLen = 200

// EncodeProject returns the project folder name Claude Code uses for the
// absolute path cwd: every UTF-16 code unit that is not [a-zA-Z0-9] becomes
// '-'. A name longer than MaxFolderLen is cut to it and followed by '-' and
// a hash; since the hash function changed between builds, the hash part
// here is only a placeholder: match long names with FolderMatches.
func EncodeProject(cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 0x10000:
			b.WriteString("--") // two UTF-16 code units
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > MaxFolderLen {
		s = s[:MaxFolderLen] + "-" + hash36(cwd)
	}
	return s
}

// hash36 is the base-36 Java-style string hash Claude Code used in some
// builds for long project folder names.
func hash36(s string) string {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	v := int64(h)
	if v < 0 {
		v = -v
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	if v == 0 {
		return "0"
	}
	var out []byte
	for v > 0 {
		out = append([]byte{digits[v%36]}, out...)
		v /= 36
	}
	return string(out)
}

// FolderMatches reports whether folder is the project folder of cwd,
// using the 200-character prefix rule for long paths. A Windows path's
// folder matches whatever the case of its letters: NTFS folds case, so
// C:\Users\x\Desktop and c:\users\x\desktop write into one folder,
// named as the first run that made it spelled its path (the drive letter's
// case varies between runs, and a shell's cd keeps the case typed).
func FolderMatches(folder, cwd string) bool {
	enc := EncodeProject(cwd)
	eq := func(a, b string) bool { return a == b }
	if windowsPath(cwd) {
		eq = strings.EqualFold // folder names hold [A-Za-z0-9-] only
	}
	if len(enc) <= MaxFolderLen {
		return eq(folder, enc)
	}
	return len(folder) > MaxFolderLen && eq(folder[:MaxFolderLen+1], enc[:MaxFolderLen+1])
}

// FolderFor returns the project folder name Claude Code uses for the
// working directory dir (absolute and clean): EncodeProject, and for a name
// past MaxFolderLen an existing folder of the store with the same
// 200-character prefix when there is one (the hash suffix differs between
// Claude Code builds).
func FolderFor(root, dir string) string {
	enc := EncodeProject(dir)
	if len(enc) <= MaxFolderLen {
		return enc
	}
	pdir := ProjectsDir(root)
	ents, err := os.ReadDir(pdir)
	if err != nil {
		return enc
	}
	for _, e := range ents {
		if !FolderMatches(e.Name(), dir) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(pdir, e.Name())); err == nil && fi.IsDir() {
			return e.Name()
		}
	}
	return enc
}

// windowsPath reports whether cwd is a Windows path (X:\ or X:/).
func windowsPath(cwd string) bool {
	if len(cwd) < 3 || cwd[1] != ':' || (cwd[2] != '\\' && cwd[2] != '/') {
		return false
	}
	c := cwd[0] | 0x20
	return c >= 'a' && c <= 'z'
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// IsUUID reports whether s is a UUID in its canonical text form.
func IsUUID(s string) bool { return len(s) == 36 && uuidRE.MatchString(s) }
