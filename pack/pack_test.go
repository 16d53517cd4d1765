package pack_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/carry/carrytest"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/pack"
	"github.com/cfix-dev/cfix/store"
)

// Sessions of the corpus stores with a family: flat subagents and todo
// lists (2.0.77), subagents in the session folder (2.1.332).
var families = []struct{ version, session, cwd string }{
	{"2.0.77", "bcfb4a37-f117-427a-803b-14bc8ef2f0f7", ""},
	{"2.1.332", "bc1c66c0-560d-4a6f-b0d4-796e1f92068c", "/home/dev/work/alpha"},
	{"wild 2.1.81-2.1.97", "8c880a68-969b-4b92-8733-a4927179d072", ""}, // tool-results
}

// copyStore copies the store of a family's case.
func copyStore(t *testing.T, version string) string {
	if w, ok := strings.CutPrefix(version, "wild "); ok {
		return wild.Copy(t, w)
	}
	return damage.CopyStore(t, version)
}

// packed writes the pack of sessions of root into a file.
func packed(t *testing.T, root string, o pack.Options, sessions ...string) (string, *pack.Written) {
	t.Helper()
	o.Root, o.Sessions = root, sessions
	if o.Host == "" {
		o.Host, o.Home = "laptop", "/home/dev"
	}
	path := filepath.Join(t.TempDir(), "s.cfixpack")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pack.Write(f, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, w
}

// unpack plans and applies the unpack of path into root.
func unpack(t *testing.T, root, path string, o pack.UnpackOptions) *pack.Plan {
	t.Helper()
	o.Root, o.Pack, o.Staging = root, path, t.TempDir()
	p, err := pack.Unpack(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Cleanup)
	carrytest.Apply(t, p.ChangeSet)
	return p
}

func TestRoundTrip(t *testing.T) {
	for _, c := range families {
		t.Run(c.version, func(t *testing.T) {
			src := copyStore(t, c.version)
			main := carrytest.MainOf(t, src, c.session)
			cwd := carry.FirstCWD(main, 200)
			path, w := packed(t, src, pack.Options{}, c.session)
			m := w.Manifest
			if len(m.Sessions) != 1 || m.Sessions[0].ID != c.session || m.Sessions[0].CWD != cwd || m.Host != "laptop" {
				t.Fatalf("manifest: %+v", m.Sessions)
			}
			members, _, err := carry.Members(src, carrytest.Scan(t, src), store.File{Path: main, Session: c.session, Project: filepath.Base(filepath.Dir(main))})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Files) < len(members) {
				t.Fatalf("the pack holds %d members, the family %d", len(m.Files), len(members))
			}

			dst := carrytest.EmptyStore(t)
			to := filepath.Join(t.TempDir(), "work")
			p := unpack(t, dst, path, pack.UnpackOptions{Place: pack.Place{To: to}})
			if len(p.Sessions) != 1 || p.Sessions[0].How != carry.LandNew || p.Sessions[0].ID != c.session {
				t.Fatalf("landed: %+v", p.Sessions)
			}
			got := filepath.Join(dst, "projects", store.EncodeProject(to), c.session+".jsonl")
			carrytest.SameButCWD(t, main, got, cwd, to)
			// Every other member of the family, byte for byte, in its place.
			for _, mb := range members {
				if mb.Dir || mb.Path == main {
					continue
				}
				rel := mb.Rel
				if strings.HasPrefix(rel, "projects/") {
					parts := strings.SplitN(rel, "/", 3)
					rel = "projects/" + store.EncodeProject(to) + "/" + parts[2]
				}
				gb, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(rel)))
				if err != nil {
					t.Fatalf("%s: %v", mb.Rel, err)
				}
				if strings.HasSuffix(rel, ".jsonl") {
					carrytest.SameButCWD(t, mb.Path, filepath.Join(dst, filepath.FromSlash(rel)), cwd, to)
					continue
				}
				if wb, _ := os.ReadFile(mb.Path); !bytes.Equal(wb, gb) {
					t.Errorf("%s differs", mb.Rel)
				}
			}
			carrytest.NoErrors(t, dst)

			// Again: the same session, nothing to do.
			p = unpack(t, dst, path, pack.UnpackOptions{})
			if p.Sessions[0].How != carry.LandSame || !p.ChangeSet.Empty() {
				t.Fatalf("a second unpack: %+v, %d changes", p.Sessions, len(p.ChangeSet.Ops))
			}
		})
	}
}

// TestAppendAndFork: a session here that the pack continues gets what it
// lacks appended; one that went its own way stays, and the pack's lands
// beside it under a new id, titled with the machine it came from.
func TestAppendAndFork(t *testing.T) {
	c := families[1]
	src := damage.CopyStore(t, c.version)
	path, _ := packed(t, src, pack.Options{}, c.session)
	dst := carrytest.EmptyStore(t)
	to := filepath.Join(t.TempDir(), "work")
	unpack(t, dst, path, pack.UnpackOptions{Place: pack.Place{To: to}})
	here := carrytest.MainOf(t, dst, c.session)

	// The session goes on at the source: the pack holds more.
	main := carrytest.MainOf(t, src, c.session)
	carrytest.AppendLine(t, main, `{"type":"custom-title","customTitle":"went on","sessionId":"`+c.session+`"}`)
	path, _ = packed(t, src, pack.Options{}, c.session)
	p := unpack(t, dst, path, pack.UnpackOptions{})
	if p.Sessions[0].How != carry.LandAppend || p.Sessions[0].Dir != to {
		t.Fatalf("landed: %+v", p.Sessions)
	}
	carrytest.SameButCWD(t, main, here, c.cwd, to)

	// Both go on, each its own way: a fork.
	carrytest.AppendLine(t, main, `{"type":"custom-title","customTitle":"at the source","sessionId":"`+c.session+`"}`)
	carrytest.AppendLine(t, here, `{"type":"custom-title","customTitle":"here","sessionId":"`+c.session+`"}`)
	before, _ := os.ReadFile(here)
	path, _ = packed(t, src, pack.Options{}, c.session)
	p = unpack(t, dst, path, pack.UnpackOptions{})
	l := p.Sessions[0]
	if l.How != carry.LandFork || l.ID == c.session || !store.IsUUID(l.ID) {
		t.Fatalf("landed: %+v", p.Sessions)
	}
	if after, _ := os.ReadFile(here); !bytes.Equal(before, after) {
		t.Fatal("the session here changed")
	}
	fork := carrytest.MainOf(t, dst, l.ID)
	fb, _ := os.ReadFile(fork)
	if !bytes.Contains(fb, []byte(`"customTitle":"at the source (from laptop)"`)) || !bytes.Contains(fb, []byte(`"sessionId":"`+l.ID+`"`)) ||
		bytes.Contains(fb, []byte(`"sessionId":"`+c.session+`"`)) {
		t.Fatalf("the fork is not titled with its machine, or its entries name the old id")
	}
	carrytest.NoErrors(t, dst)
}

// TestEncrypted: a pack encrypted to an X25519 recipient or with a
// passphrase unpacks to the same bytes with its key, and is refused
// without it, with a sentence saying what to give.
func TestEncrypted(t *testing.T) {
	c := families[1]
	src := damage.CopyStore(t, c.version)
	plain, _ := packed(t, src, pack.Options{}, c.session)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := age.GenerateX25519Identity()
	enc, _ := packed(t, src, pack.Options{Recipients: []age.Recipient{id.Recipient()}}, c.session)
	sr, err := age.NewScryptRecipient("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	sr.SetWorkFactor(10)
	pass, _ := packed(t, src, pack.Options{Recipients: []age.Recipient{sr}, Passphrase: true}, c.session)

	for _, b := range []string{enc, pass} {
		raw, _ := os.ReadFile(b)
		if bytes.Contains(raw, []byte(c.session)) {
			t.Fatalf("%s holds the session id in clear", b)
		}
	}
	refused := func(path string, keys pack.Keys, want string) {
		t.Helper()
		_, err := pack.Unpack(pack.UnpackOptions{Root: carrytest.EmptyStore(t), Pack: path, Keys: keys, Staging: t.TempDir()})
		var ke *pack.KeyError
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), want) {
			t.Fatalf("unpack of %s: %v, want a KeyError saying %q", path, err, want)
		}
	}
	refused(enc, pack.Keys{}, "give --identity FILE")
	refused(enc, pack.Keys{Identities: []age.Identity{other}}, "encrypted to other recipients")
	refused(pass, pack.Keys{}, "encrypted with a passphrase")
	refused(pass, pack.Keys{Passphrase: func() (string, error) { return "wrong", nil }}, "passphrase does not open")

	to := filepath.Join(t.TempDir(), "work")
	want := carrytest.EmptyStore(t)
	unpack(t, want, plain, pack.UnpackOptions{Place: pack.Place{To: to}})
	for _, k := range []struct {
		path string
		keys pack.Keys
	}{
		{enc, pack.Keys{Identities: []age.Identity{other, id}}},
		{pass, pack.Keys{Passphrase: func() (string, error) { return "correct horse", nil }}},
	} {
		dst := carrytest.EmptyStore(t)
		p := unpack(t, dst, k.path, pack.UnpackOptions{Keys: k.keys, Place: pack.Place{To: to}})
		if p.Encrypted == "" {
			t.Errorf("%s: not seen as encrypted", k.path)
		}
		sameTree(t, filepath.Join(want, "projects"), filepath.Join(dst, "projects"))
	}
}

// sameTree compares the files of two folders.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	n := 0
	filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		wb, _ := os.ReadFile(p)
		gb, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(wb, gb) {
			t.Errorf("%s differs (%v)", rel, err)
		}
		n++
		return nil
	})
	if n == 0 {
		t.Fatalf("%s holds no file", a)
	}
}

// TestHistory: a pack holds the session's prompts of history.jsonl (and
// no other session's); unpack appends them with their project mapped,
// once.
func TestHistory(t *testing.T) {
	c := families[1]
	src := damage.CopyStore(t, c.version)
	other := "0d423dc0-97a8-47b0-95de-fc3e59d22508"
	lines := []string{
		`{"display":"hello","pastedContents":{},"timestamp":1,"project":"/home/dev/work/alpha","sessionId":"` + c.session + `"}`,
		`{"display":"not this one","pastedContents":{},"timestamp":2,"project":"/home/dev/work/delta","sessionId":"` + other + `"}`,
		`{"display":"no id","pastedContents":{},"timestamp":3,"project":"/home/dev/work/alpha"}`,
		`{"display":"again","pastedContents":{},"timestamp":4,"project":"/home/dev/work/alpha/sub","sessionId":"` + c.session + `"}`,
	}
	if err := os.WriteFile(filepath.Join(src, "history.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path, w := packed(t, src, pack.Options{}, c.session)
	if w.Manifest.Sessions[0].Prompts != 2 {
		t.Fatalf("packed %d prompts, want 2", w.Manifest.Sessions[0].Prompts)
	}
	dst := carrytest.EmptyStore(t)
	mine := `{"display":"mine","timestamp":9,"project":"/x","sessionId":"` + other + `"}` + "\n"
	if err := os.WriteFile(filepath.Join(dst, "history.jsonl"), []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(t.TempDir(), "work")
	unpack(t, dst, path, pack.UnpackOptions{Place: pack.Place{To: to}})
	want := mine + strings.Replace(lines[0], "/home/dev/work/alpha", to, 1) + "\n" + strings.Replace(lines[3], "/home/dev/work/alpha", to, 1) + "\n"
	got, _ := os.ReadFile(filepath.Join(dst, "history.jsonl"))
	if string(got) != want {
		t.Fatalf("history.jsonl:\n%s\nwant:\n%s", got, want)
	}
	unpack(t, dst, path, pack.UnpackOptions{})
	if again, _ := os.ReadFile(filepath.Join(dst, "history.jsonl")); string(again) != want {
		t.Fatalf("a second unpack changed history.jsonl:\n%s", again)
	}
}

// TestTwoIntoOneIndex: two sessions landing in one folder whose
// sessions-index.json lists others are both added to it, in one rewrite.
func TestTwoIntoOneIndex(t *testing.T) {
	src := damage.CopyStore(t, "2.1.332")
	a, b := "3889a50a-2e6b-4eb4-8d05-b4092bcb402d", "0d423dc0-97a8-47b0-95de-fc3e59d22508"
	path, _ := packed(t, src, pack.Options{}, a, b)
	dst := wild.Copy(t, "2.1.205")
	dir := "/home/unmatched-0"
	index := filepath.Join(dst, "projects", "-home-unmatched-0", "sessions-index.json")
	before, err := carry.ReadIndex(index)
	if err != nil || before == nil {
		t.Fatalf("%s: %v", index, err)
	}
	had, _ := carry.IndexIDs(before)
	damage.Age(t, dst)
	p := unpack(t, dst, path, pack.UnpackOptions{Place: pack.Place{To: dir}})
	n := 0
	for _, op := range p.ChangeSet.Ops {
		if op.Path == index {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d ops write %s, want 1", n, index)
	}
	after, err := carry.ReadIndex(index)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := carry.IndexIDs(after)
	want := append(append([]string(nil), had...), a, b)
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("the index lists %v, want %v", ids, want)
	}
	carrytest.NoErrors(t, dst)
}

// toyRedactor takes one planted token out, as secrets.Filter takes
// secrets out.
type toyRedactor struct{}

const token = "TOKEN-9f8e7d6c5b4a"

func (toyRedactor) LineRules(raw []byte, rules map[string]int) ([]byte, int) {
	n := bytes.Count(raw, []byte(token))
	if rules != nil && n > 0 {
		rules["toy"] += n
	}
	return bytes.ReplaceAll(raw, []byte(token), []byte("[REDACTED:toy]")), n
}

func (toyRedactor) TextRules(s string, rules map[string]int) (string, int) {
	n := strings.Count(s, token)
	if rules != nil && n > 0 {
		rules["toy"] += n
	}
	return strings.ReplaceAll(s, token, "[REDACTED:toy]"), n
}

// TestRedact: with Redact, nothing of a secret planted in a prompt, a
// subagent, a .meta.json, the title and history.jsonl is in the pack nor
// lands; the manifest counts what went, and every file still verifies.
func TestRedact(t *testing.T) {
	c := families[1]
	src := damage.CopyStore(t, c.version)
	main := carrytest.MainOf(t, src, c.session)
	carrytest.AppendLine(t, main, `{"type":"custom-title","customTitle":"deploy with `+token+`","sessionId":"`+c.session+`"}`)
	sub, _ := filepath.Glob(filepath.Join(filepath.Dir(main), c.session, "subagents", "agent-*"))
	for _, p := range sub {
		if strings.HasSuffix(p, ".jsonl") {
			carrytest.AppendLine(t, p, `{"type":"user","message":{"role":"user","content":"use `+token+`"},"sessionId":"`+c.session+`"}`)
		} else if err := os.WriteFile(p, []byte(`{"agentType":"general-purpose","description":"`+token+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hist := `{"display":"token ` + token + `","timestamp":1,"project":"/home/dev/work/alpha","sessionId":"` + c.session + `"}` + "\n"
	if err := os.WriteFile(filepath.Join(src, "history.jsonl"), []byte(hist), 0o600); err != nil {
		t.Fatal(err)
	}
	path, w := packed(t, src, pack.Options{Redact: toyRedactor{}}, c.session)
	// Five: the title line, the subagent, its .meta.json, the prompt of
	// history.jsonl, and the title the manifest holds.
	if s := w.Manifest.Sessions[0]; !w.Manifest.Redacted || s.Redacted != 5 || s.Rules["toy"] != 5 || len(s.Rules) != 1 || strings.Contains(s.Title, token) {
		t.Fatalf("manifest: redacted %v, %d secrets, title %q", w.Manifest.Redacted, w.Manifest.Sessions[0].Redacted, w.Manifest.Sessions[0].Title)
	}
	dst := carrytest.EmptyStore(t)
	unpack(t, dst, path, pack.UnpackOptions{Place: pack.Place{To: filepath.Join(t.TempDir(), "work")}})
	n := 0
	filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(token)) {
			t.Errorf("%s holds the secret", p)
		}
		n += bytes.Count(b, []byte("[REDACTED:toy]"))
		return nil
	})
	if n != 4 {
		t.Errorf("%d markers landed, want 4 (prompt line of the title, subagent, meta, history)", n)
	}
	// Without Redact, every byte as it is.
	path, w = packed(t, src, pack.Options{AllowSecrets: true}, c.session)
	if w.Manifest.Redacted || w.Manifest.Sessions[0].Redacted != 0 {
		t.Fatalf("redacted without Redact")
	}
}
