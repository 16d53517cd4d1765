package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/cfix-dev/cfix/internal/rfile"
)

// Prompt is a line of history.jsonl: a prompt as the user typed it.
type Prompt struct {
	Display   string `json:"display"`
	Timestamp int64  `json:"timestamp"` // ms since the epoch
	Project   string `json:"project"`
	SessionID string `json:"sessionId"`
	Line      int    `json:"-"`
}

// SessionPrompts reads history.jsonl once and returns, for each id of ids,
// the prompts whose sessionId names it, in file order. Lines written
// without a sessionId (before 1.0.x wrote it) cannot be told apart and
// are left out; a line that is not JSON is skipped (validate reports it).
func SessionPrompts(root string, ids map[string]bool) (map[string][]Prompt, error) {
	out := map[string][]Prompt{}
	p := filepath.Join(root, "history.jsonl")
	fh, err := rfile.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := bufio.NewReaderSize(fh, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			for id := range ids {
				if !strings.Contains(string(line), id) {
					continue
				}
				var pr Prompt
				if json.Unmarshal(line, &pr) == nil && pr.SessionID == id {
					pr.Line = n
					out[id] = append(out[id], pr)
				}
				break
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
}

// FileHistoryBackups counts the files of file-history/<id>/: the copies of
// the files the session edited, kept for /rewind.
func FileHistoryBackups(root, id string) int {
	n := 0
	filepath.WalkDir(filepath.Join(root, "file-history", id), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// Left says what is left of a session whose conversation is gone: its
// subagent transcripts, file-history backups and history.jsonl prompts,
// as a phrase ("2 subagent transcripts, 5 file-history backups, 3
// prompts in history.jsonl").
func Left(agents, backups, prompts int) string {
	count := func(n int, one, more string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, more)
	}
	return strings.Join([]string{
		count(agents, "subagent transcript", "subagent transcripts"),
		count(backups, "file-history backup", "file-history backups"),
		count(prompts, "prompt in history.jsonl", "prompts in history.jsonl"),
	}, ", ")
}
