package changeset_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
)

// TestCheckStore: a saved plan and a journal apply only to the store they
// are given. A plan whose root is another folder that holds projects/
// (the home above the store) is refused with a StoreError naming both
// roots, resolved; a plan whose root leads to the store through a
// symbolic link, or is spelled with a trailing slash, is of the store.
// The journals of a store are those whose root is that folder, however
// it is named, and none other.
func TestCheckStore(t *testing.T) {
	home := storeDir(t) // a home folder with a projects/ folder
	store := filepath.Join(home, ".claude")
	if err := os.MkdirAll(filepath.Join(store, "projects"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(store, link); err != nil {
		t.Fatal(err)
	}
	realHome, _ := filepath.EvalSymlinks(home)

	cs := changeset.New(home, "repair")
	cs.Add(changeset.Op{Action: changeset.Create, Path: filepath.Join(home, ".bash_login"), Data: []byte("x\n"), HasData: true, Reason: "r"})
	err := cs.CheckStore("plan p.json", store)
	var se *changeset.StoreError
	if !errors.As(err, &se) || se.Root != realHome || se.Given != filepath.Join(realHome, ".claude") {
		t.Fatalf("a plan of the home given the store: %v", err)
	}
	if want := "plan p.json is of the store " + realHome + ", not of " + filepath.Join(realHome, ".claude") + ", the store this command was given"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want it to start %q", err, want)
	}
	for _, root := range []string{store, link} {
		for _, given := range []string{store, link, store + "/"} {
			if err := changeset.New(root, "repair").CheckStore("plan p.json", given); err != nil {
				t.Errorf("a plan of %s given %s: %v", root, given, err)
			}
		}
	}
	if err := changeset.New(store, "repair").CheckStore("plan p.json", home); err == nil {
		t.Error("a plan of the store given the home was taken")
	}

	// Journals of the store, made through its link, and of the home.
	journals := t.TempDir()
	f := filepath.Join(store, "projects", "a.jsonl")
	write(t, f, "a\n")
	for _, root := range []string{store, link} {
		cs := changeset.New(root, "test")
		p := filepath.Join(root, "projects", "a.jsonl")
		cs.Add(changeset.Op{Action: changeset.Rewrite, Path: p, Reason: "r", Expect: fp(t, p), Data: []byte(root + "\n"), HasData: true})
		if _, err := changeset.Apply(cs, changeset.ApplyOptions{JournalDir: journals}); err != nil {
			t.Fatal(err)
		}
	}
	hcs := changeset.New(home, "test")
	hcs.Add(changeset.Op{Action: changeset.Create, Path: filepath.Join(home, "b.txt"), Reason: "r", Data: []byte("b\n"), HasData: true})
	if _, err := changeset.Apply(hcs, changeset.ApplyOptions{JournalDir: journals}); err != nil {
		t.Fatal(err)
	}
	for _, given := range []string{store, link} {
		js, err := changeset.ListJournals(journals, given)
		if err != nil || len(js) != 2 {
			t.Fatalf("journals of %s: %v %+v, want the two of the store", given, err, js)
		}
		for _, j := range js {
			if err := j.CheckStore(given); err != nil {
				t.Error(err)
			}
			if err := j.CheckStore(home); err == nil || !strings.HasPrefix(err.Error(), "journal "+j.Dir+" is of the store ") {
				t.Errorf("journal of the store given the home: %v", err)
			}
		}
	}
	if js, _ := changeset.ListJournals(journals, home); len(js) != 1 || js[0].Root != home {
		t.Errorf("journals of the home: %+v", js)
	}
}
