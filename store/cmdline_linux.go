package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// processIsClaude reads /proc/<pid>/cmdline: the process is Claude Code
// when an argument names claude (the native binary "claude", or node
// running .../@anthropic-ai/claude-code/cli.js). name is the program's
// base name; known is false when the command line cannot be read.
func processIsClaude(pid int) (name string, claude, known bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return "", false, false
	}
	args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
	name = filepath.Base(string(args[0]))
	for _, a := range args {
		if strings.Contains(strings.ToLower(string(a)), "claude") {
			return name, true, true
		}
	}
	return name, false, true
}
