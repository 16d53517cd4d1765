package pack_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/carry/carrytest"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/pack"
)

// TestLandingTimes: a session unpacked under its own id is the same
// session: its files keep the times they had where it was packed (as a
// move's and a restore's do); one that lands as a fork under a new id is
// a new session, and its files have the time of the plan (as a clone's).
func TestLandingTimes(t *testing.T) {
	c := families[1]
	src := damage.CopyStore(t, c.version)
	old := time.Now().Add(-20 * 24 * time.Hour).Truncate(time.Second)
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return err
	})
	path, w := packed(t, src, pack.Options{}, c.session)
	dst := carrytest.EmptyStore(t)
	to := filepath.Join(t.TempDir(), "work")
	p := unpack(t, dst, path, pack.UnpackOptions{Place: pack.Place{To: to}})
	if p.Sessions[0].How != carry.LandNew {
		t.Fatalf("landed: %+v", p.Sessions)
	}
	files := 0
	for _, f := range w.Manifest.Files {
		if f.Dir || f.Path == pack.HistoryName {
			continue
		}
		files++
		landed := filepath.Join(dst, f.Path)
		if f.Path == w.Manifest.Sessions[0].Main {
			landed = carrytest.MainOf(t, dst, c.session)
		} else if rel, err := filepath.Rel(filepath.Join("projects", w.Manifest.Sessions[0].Project), f.Path); err == nil && filepath.IsLocal(rel) {
			landed = filepath.Join(filepath.Dir(carrytest.MainOf(t, dst, c.session)), rel)
		}
		fi, err := os.Stat(landed)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(old) {
			t.Errorf("%s: mtime %s, want the packed %s", landed, fi.ModTime(), old)
		}
	}
	if files < 2 {
		t.Fatalf("%d files checked", files)
	}

	// Both go on: the pack's lands as a fork, a new session.
	carrytest.AppendLine(t, carrytest.MainOf(t, src, c.session), `{"type":"custom-title","customTitle":"at the source","sessionId":"`+c.session+`"}`)
	carrytest.AppendLine(t, carrytest.MainOf(t, dst, c.session), `{"type":"custom-title","customTitle":"here","sessionId":"`+c.session+`"}`)
	path, _ = packed(t, src, pack.Options{}, c.session)
	start := time.Now().Add(-time.Second)
	p = unpack(t, dst, path, pack.UnpackOptions{})
	if p.Sessions[0].How != carry.LandFork {
		t.Fatalf("landed: %+v", p.Sessions)
	}
	fork := carrytest.MainOf(t, dst, p.Sessions[0].ID)
	n := 0
	filepath.WalkDir(filepath.Dir(fork), func(q string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (q != fork && !carry.Under(filepath.Join(filepath.Dir(fork), p.Sessions[0].ID), q)) {
			return err
		}
		n++
		if fi, err := os.Stat(q); err != nil || fi.ModTime().Before(start) {
			t.Errorf("%s of the fork: mtime %v, want the plan's", q, fi.ModTime())
		}
		return nil
	})
	if n < 2 {
		t.Fatalf("%d files of the fork checked", n)
	}
}
