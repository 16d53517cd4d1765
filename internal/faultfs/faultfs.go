// Package faultfs runs applies where room runs out: on a small tmpfs it
// mounts (root only), filled to leave a few bytes at a chosen step, for
// the tests that prove a full disk leaves every file as it was or as
// planned.
package faultfs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fillerName is the file Fill makes at the top of the mount.
const fillerName = "filler"

// Mount mounts a tmpfs of size bytes on a new temporary folder and returns
// it; the test unmounts it at its end. It skips the test when not root.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("fault injection needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("fault injection: cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// Clear removes everything in the mount.
func Clear(t testing.TB, mnt string) {
	t.Helper()
	ents, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(mnt, e.Name())
		exec.Command("chmod", "-R", "u+w", p).Run()
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
}

// Free reports the bytes free on the file system of dir.
func Free(t testing.TB, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// Fill grows a filler file at the top of the mount until at most leave
// bytes are free.
func Fill(t testing.TB, mnt string, leave int64) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(mnt, fillerName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if n := Free(t, mnt) - leave; n > 0 {
		if err := unix.Fallocate(int(f.Fd()), 0, fi.Size(), n); err != nil {
			t.Fatalf("fill %s: %v", mnt, err)
		}
	}
}

// Unfill removes the filler.
func Unfill(t testing.TB, mnt string) {
	t.Helper()
	if err := os.Remove(filepath.Join(mnt, fillerName)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// Tree describes every file (path, mode, size, sha256), link and folder
// under root; folder mtimes and file mtimes are left out.
func Tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel+"/"] = fmt.Sprintf("dir %v", fi.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link " + l
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = fmt.Sprintf("file %v %d %s", fi.Mode().Perm(), fi.Size(), hex.EncodeToString(sum[:8]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Diff lists how got differs from want, one path a line; empty when equal.
// Folders are left out when skipDirs.
func Diff(want, got map[string]string, skipDirs bool) string {
	var diffs []string
	for k, w := range want {
		if skipDirs && strings.HasSuffix(k, "/") {
			continue
		}
		if g, ok := got[k]; !ok {
			diffs = append(diffs, "- "+k+" "+w)
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("~ %s: was %s, now %s", k, w, g))
		}
	}
	for k, g := range got {
		if skipDirs && strings.HasSuffix(k, "/") {
			continue
		}
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "+ "+k+" "+g)
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "\n")
}
