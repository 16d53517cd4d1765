package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plant"
	"github.com/cfix-dev/cfix/validate"
)

// TestScanFindsPlanted: every planted secret is found where it was put,
// with its rule, and no finding shows more than the start of its secret.
func TestScanFindsPlanted(t *testing.T) {
	p := plant.New(t)
	root, where := plant.Store(t, p)
	got := map[string][]string{}
	var all []*Finding
	_, err := Scan(Options{Root: root}, func(f *Finding) error {
		all = append(all, f)
		for name, s := range p.All() {
			if strings.Contains(s, f.secret) || strings.Contains(f.secret, s) {
				got[name] = append(got[name], fmt.Sprintf("%s:%d %s", f.Path, f.Line, f.Where))
			}
		}
		if len([]rune(f.Preview)) > 5 || strings.Contains(f.secret, strings.TrimSuffix(f.Preview, "…")) == false {
			t.Errorf("%s:%d: preview %q", f.Path, f.Line, f.Preview)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range where {
		for _, w := range want {
			found := false
			for _, g := range got[name] {
				found = found || g == w
			}
			if !found {
				t.Errorf("%s: not found at %s; found at %q", name, w, got[name])
			}
		}
	}
	rules := map[string]bool{}
	for _, f := range all {
		rules[f.Rule] = true
	}
	for _, r := range []string{"github-pat", "aws-access-token", "slack-bot-token", "anthropic-api-key", "private-key", "stripe-access-token", "generic-api-key"} {
		if !rules[r] {
			t.Errorf("no finding of rule %s; rules found: %v", r, rules)
		}
	}
}

// TestNeverFindings: ids, signatures, hashes and base64 data hold no
// finding, even holding what a rule would find in text.
func TestNeverFindings(t *testing.T) {
	p := plant.New(t)
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-x")
	os.MkdirAll(dir, 0o700)
	line := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	tok := p.GitHub
	body := line(map[string]any{"type": "assistant", "uuid": tok, "parentUuid": tok, "sessionId": tok, "requestId": tok,
		"message": map[string]any{"id": tok, "role": "assistant", "content": []any{
			map[string]any{"type": "thinking", "thinking": "plain", "signature": tok},
			map[string]any{"type": "tool_use", "id": tok, "name": "Bash", "input": map[string]any{"command": "ls"}},
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "token=" + p.Stripe}},
			map[string]any{"type": "redacted_thinking", "data": "token=" + p.Stripe},
		}}})
	result := line(map[string]any{"type": "user", "uuid": "u2", "message": map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": tok, "content": "ok"}}}, "toolUseResult": map[string]any{"contentHash": tok}})
	if err := os.WriteFile(filepath.Join(dir, "11111111-2222-3333-4444-555555555555.jsonl"), []byte(body+"\n"+result+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	Scan(Options{Root: root}, func(f *Finding) error {
		n++
		t.Errorf("%s:%d: %s in %s %s", f.Path, f.Line, f.Rule, f.Where, f.Field)
		return nil
	})
	// The same token in a prompt is found: the test can fail.
	prompt := line(map[string]any{"type": "user", "uuid": "u3", "message": map[string]any{"role": "user", "content": "use " + tok}})
	os.WriteFile(filepath.Join(dir, "11111111-2222-3333-4444-555555555556.jsonl"), []byte(prompt+"\n"), 0o600)
	Scan(Options{Root: root}, func(f *Finding) error { n++; return nil })
	if n != 1 {
		t.Errorf("%d findings, want the prompt's only", n)
	}
}

// TestRedactApply: the redaction of the planted store, applied, leaves no
// byte of any secret in the store (raw or JSON-escaped), keeps every line
// JSON with the same members, uuid and parentUuid, adds no validate
// finding; its diff shows no secret; the journal holds the secrets until
// it is removed.
func TestRedactApply(t *testing.T) {
	p := plant.New(t)
	root, _ := plant.Store(t, p)
	before, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	shapes := lineShapes(t, root)
	plan, err := PlanRedact(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if plan.CS.Empty() || plan.Secrets < len(p.All()) {
		t.Fatalf("plan: %d ops, %d secrets", len(plan.CS.Ops), plan.Secrets)
	}
	var shown bytes.Buffer
	if err := plan.Show(&shown); err != nil {
		t.Fatal(err)
	}
	if err := changeset.Show(&shown, plan.CS); err != nil {
		t.Fatal(err)
	}
	for name, s := range p.All() {
		for _, l := range strings.Split(s, "\n") {
			if len(l) > 12 && strings.Contains(shown.String(), l[4:]) {
				t.Errorf("the plan shows secret %s:\n%s", name, shown.String())
			}
		}
	}
	if !strings.Contains(shown.String(), "[REDACTED:github-pat]") {
		t.Errorf("the diff shows no marker:\n%s", shown.String())
	}
	jdir := t.TempDir()
	res, err := changeset.Apply(plan.CS, changeset.ApplyOptions{JournalDir: jdir})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range p.All() {
		if files := plant.Grep(t, root, s); len(files) > 0 {
			t.Errorf("secret %s still in %v", name, files)
		}
		if files := plant.Grep(t, res.Journal, s); len(files) == 0 && name != "github-file" {
			t.Errorf("the journal holds no copy of secret %s", name)
		}
	}
	after := lineShapes(t, root)
	for path, ls := range shapes {
		if len(after[path]) != len(ls) {
			t.Errorf("%s: %d lines, was %d", path, len(after[path]), len(ls))
			continue
		}
		for i := range ls {
			if ls[i] != after[path][i] {
				t.Errorf("%s:%d: shape changed:\n was %s\n now %s", path, i+1, ls[i], after[path][i])
			}
		}
	}
	now, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(codes(before)) != fmt.Sprint(codes(now)) {
		t.Errorf("validate: before %v, after %v", codes(before), codes(now))
	}
	n := 0
	Scan(Options{Root: root}, func(f *Finding) error { n++; t.Errorf("left: %s:%d %s", f.Path, f.Line, f.Rule); return nil })
	again, err := PlanRedact(Options{Root: root})
	if err != nil || !again.CS.Empty() {
		t.Errorf("a second plan: %v, %d ops", err, len(again.CS.Ops))
	}
	if err := changeset.RemoveJournal(jdir, res.Journal); err != nil {
		t.Fatal(err)
	}
	for name, s := range p.All() {
		if files := plant.Grep(t, jdir, s); len(files) > 0 {
			t.Errorf("secret %s still in %v after the journal went", name, files)
		}
	}
}

func codes(r *validate.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%s %s %d", filepath.Base(f.Path), f.Code, f.Line))
	}
	sort.Strings(out)
	return out
}

// lineShapes returns, for each JSON lines file of the store, each line's
// shape: its members and their kinds, recursively, and its uuid and
// parentUuid (strings are left out but for those).
func lineShapes(t testing.TB, root string) map[string][]string {
	out := map[string][]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		raw, _ := os.ReadFile(p)
		for _, l := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
			var v any
			if err := json.Unmarshal(l, &v); err != nil {
				out[p] = append(out[p], "not JSON")
				continue
			}
			out[p] = append(out[p], shape(v, ""))
		}
		return nil
	})
	return out
}

func shape(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		var ks []string
		for k := range x {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var b strings.Builder
		b.WriteString("{")
		for _, k := range ks {
			b.WriteString(k + ":" + shape(x[k], k) + ",")
		}
		return b.String() + "}"
	case []any:
		var b strings.Builder
		b.WriteString("[")
		for _, e := range x {
			b.WriteString(shape(e, key) + ",")
		}
		return b.String() + "]"
	case string:
		switch key {
		case "uuid", "parentUuid", "type", "signature", "id", "tool_use_id", "sessionId":
			return x
		}
		return "s"
	}
	return fmt.Sprintf("%T", v)
}

// TestIgnoreFile: a fingerprint in the store's .cfix-secrets-ignore leaves
// that secret out of the scan, wherever it is, and in place in a
// redaction; the others go. A line that is no fingerprint is an error
// naming the file and line.
func TestIgnoreFile(t *testing.T) {
	p := plant.New(t)
	root, _ := plant.Store(t, p)
	var fp string
	all := 0
	Scan(Options{Root: root}, func(f *Finding) error {
		all++
		if f.Rule == "stripe-access-token" {
			fp = f.Fingerprint
		}
		return nil
	})
	if fp == "" {
		t.Fatal("no stripe finding")
	}
	if err := os.WriteFile(filepath.Join(root, IgnoreFile), []byte("# a test key\n"+fp+"  # the stripe key of the docs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	st, err := Scan(Options{Root: root}, func(f *Finding) error {
		n++
		if f.Fingerprint == fp {
			t.Errorf("%s:%d: an ignored secret is found", f.Path, f.Line)
		}
		return nil
	})
	if err != nil || st.Ignored == 0 || n+st.Ignored != all {
		t.Errorf("scan: %v; %d found, %d ignored, %d before", err, n, st.Ignored, all)
	}
	plan, err := PlanRedact(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(plan.CS, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if len(plant.Grep(t, root, p.Stripe)) == 0 {
		t.Errorf("the ignored secret was redacted")
	}
	if in := plant.Grep(t, root, p.GitHub); len(in) > 0 {
		t.Errorf("a secret not ignored is still in %v", in)
	}
	os.WriteFile(filepath.Join(root, IgnoreFile), []byte(fp+"\nnot-a-fingerprint\n"), 0o600)
	if _, err := Scan(Options{Root: root}, func(*Finding) error { return nil }); err == nil || !strings.Contains(err.Error(), IgnoreFile+":2:") {
		t.Errorf("a bad line: %v", err)
	}
}
