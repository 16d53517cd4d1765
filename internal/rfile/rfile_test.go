//go:build unix

package rfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRegularOnly opens a FIFO (no writer, no reader), a directory and a
// device as a reader and as a writer: each is refused at once, naming
// what it is; a regular file, and a link to one, open, and blocking.
func TestRegularOnly(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file.json")
	os.WriteFile(file, []byte(`{"a":1}`), 0o600)
	link := filepath.Join(dir, "link.json")
	os.Symlink(file, link)
	fifoLink := filepath.Join(dir, "fifo-link.jsonl")
	os.Symlink(fifo, fifoLink)

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, c := range []struct {
			path, want string
			flag       int
		}{
			{fifo, "named pipe", os.O_RDONLY},
			{fifoLink, "named pipe", os.O_RDONLY},
			{fifo, "named pipe", os.O_WRONLY | os.O_APPEND},
			{fifo, "named pipe", os.O_WRONLY | os.O_APPEND | os.O_CREATE},
			{fifo, "named pipe", os.O_RDWR},
			{dir, "directory", os.O_RDONLY},
			{"/dev/null", "character device", os.O_RDONLY},
			{link, "", os.O_RDONLY | NoFollow},
		} {
			f, err := OpenFile(c.path, c.flag, 0o600)
			if err == nil {
				f.Close()
				t.Errorf("%s (flag %#x): opened", c.path, c.flag)
				continue
			}
			if c.want != "" && (!errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), c.path+": not a regular file but a "+c.want)) {
				t.Errorf("%s: %v, want it named %s", c.path, err, c.want)
			}
		}
		if _, err := ReadFile(fifo); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile of a FIFO: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("an open of a FIFO blocked")
	}

	for _, p := range []string{file, link} {
		b, err := ReadFile(p)
		if err != nil || string(b) != `{"a":1}` {
			t.Errorf("%s: %q %v", p, b, err)
		}
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		if err != nil || fl&unix.O_NONBLOCK != 0 {
			t.Errorf("%s: flags %#x %v: O_NONBLOCK left set", p, fl, err)
		}
		f.Close()
	}
	// Appending to a regular file appends.
	f, err := OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n")
	f.Close()
	if b, _ := os.ReadFile(file); string(b) != "{\"a\":1}\n" {
		t.Errorf("append: %q", b)
	}
	if _, err := Open(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
