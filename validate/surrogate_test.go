package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// TestLoneSurrogateClient: a lone surrogate escape in a tool_use's input
// (\ud88d, as a reply cut inside an emoji leaves it) is sent as it is by
// 2.1.131 and older, and the API answers 400 (no low surrogate in string)
// on every resume; 2.1.132 and later send U+FFFD in its place and resume
// (measured on the session 2.1.140 wrote, the escape put into its Bash
// call's description, resumed by 1.0.128 to 2.1.332 and bisected). So the
// finding is an error for a client that sends it and a warning for one
// that does not, the writing version's verdict kept on the finding; ls's
// glance says the same for a client of the file's version.
func TestLoneSurrogateClient(t *testing.T) {
	root := copyFact(t, "tool-surrogate-2.1.140")
	path := filepath.Join(root, "projects", "-tmp-fid2-w", "a905e947-d630-482e-a080-849e072acb05.jsonl")
	replaceIn(t, path, `"description":"Run echo hi"`, `"description":"Run echo hi\ud88d"`, "the tool_use input")
	for _, c := range []struct {
		client, severity, writer string
	}{
		{"", "warning", ""},             // the store's newest: 2.1.140
		{"2.1.132", "warning", ""},      // the first to send U+FFFD
		{"2.1.131", "error", "warning"}, // the last to send the escape
		{"2.0.77", "error", "warning"},
		{"2.1.332", "warning", ""},
	} {
		rep, err := validate.Run(validate.Options{Root: root, Client: c.client, ClientFrom: "--client"})
		if err != nil {
			t.Fatal(err)
		}
		got := withCode(rep, validate.SurrogateLone)
		if len(got) != 1 {
			t.Errorf("client %q: %d surrogate-lone findings, want 1: %+v", c.client, len(got), got)
			continue
		}
		f := got[0]
		if f.Severity.String() != c.severity || f.Line != 5 {
			t.Errorf("client %q: %s on line %d, want %s on line 5 (%s)", c.client, f.Severity, f.Line, c.severity, f.Message)
		}
		w := ""
		if f.Writer != nil {
			w = f.Writer.Severity
			if f.Writer.Version != "2.1.140" {
				t.Errorf("client %q: writer %+v, want 2.1.140's", c.client, f.Writer)
			}
		}
		if w != c.writer {
			t.Errorf("client %q: the writer's verdict %q, want %q", c.client, w, c.writer)
		}
		if want := map[string]string{"error": "answers 400", "warning": "U+FFFD in its place"}[c.severity]; !strings.Contains(f.Message, want) {
			t.Errorf("client %q: message %q does not say %q", c.client, f.Message, want)
		}
		if rep.Counts[c.severity] == 0 {
			t.Errorf("client %q: counts %v", c.client, rep.Counts)
		}
	}

	glance := func() string {
		l, err := store.Scan(root)
		if err != nil || len(l.Files) != 1 {
			t.Fatalf("scan: %v, %d files", err, len(l.Files))
		}
		for _, q := range store.GlanceAt(l.Files[0]).Quick {
			if q.Code == "surrogate-lone" {
				return q.Severity
			}
		}
		return "none"
	}
	if s := glance(); s != "warning" {
		t.Errorf("the glance of the 2.1.140 file: %s, want warning", s)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), `"version":"2.1.140"`, `"version":"2.1.131"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	if s := glance(); s != "error" {
		t.Errorf("the glance of the file as 2.1.131 wrote it: %s, want error", s)
	}
}
