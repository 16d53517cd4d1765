package outfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDeviceWrittenInPlace: /dev/null stays a device (an atomic rename over
// it made it a regular file holding the export, as root).
func TestDeviceWrittenInPlace(t *testing.T) {
	f, err := Create(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(os.DevNull)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", os.DevNull, fi.Mode(), err)
	}
}

// TestFIFOWrittenInPlace: a FIFO gets the bytes, and stays a FIFO.
func TestFIFOWrittenInPlace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(p)
		got <- b
	}()
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("through the pipe"))
	if err := f.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "through the pipe" {
		t.Fatalf("read %q", b)
	}
	if fi, _ := os.Lstat(p); fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is no longer a FIFO: %v", p, fi.Mode())
	}
}

// TestRegularReplacedAtomically: a regular file is replaced whole, keeping
// its mode; a failed write (Cleanup without commit) leaves it as it was.
func TestRegularReplacedAtomically(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.md")
	os.WriteFile(p, []byte("old"), 0o640)
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Cleanup()
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("a cleaned-up write changed the file: %q", b)
	}
	f, _ = Create(p)
	f.Write([]byte("new"))
	if err := f.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "new" || fi.Mode().Perm() != 0o640 {
		t.Fatalf("got %q %v", b, fi.Mode())
	}
	if _, err := Create(filepath.Dir(p)); err == nil {
		t.Fatal("a directory was accepted")
	}
}
