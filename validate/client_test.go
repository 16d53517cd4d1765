package validate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/validate"
)

// TestResumingClient: findings are judged by the client that will resume
// the sessions, the newest version that wrote to the store unless told.
// The wild 2.1.12-2.1.29 store's 119 tool-result-missing warnings are
// parallel calls whose results sit beside the chain: 2.1.29 and older do
// not put them back, 2.1.80 and later do. Once a 2.1.111 session is in the
// store, 2.1.111 is the client that resumes them all: the warnings go, and
// the writers' verdict stays in WriterFindings.
func TestResumingClient(t *testing.T) {
	root := wild.Copy(t, "2.1.12-2.1.29")
	src := filepath.Join(wild.Root("2.1.81-2.1.111"), "projects", "c--Users-d1-d2-d3", "4e1f519b-0c87-4b0b-9f45-bdf046f7c96f.jsonl")
	dst := filepath.Join(root, "projects", "c--Users-d1-d2-d3")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-p", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	count := func(fs []validate.Finding, code validate.Code) (n int) {
		for _, f := range fs {
			if f.Code == code {
				n++
			}
		}
		return n
	}

	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Client.Version != "2.1.111" {
		t.Errorf("client %+v, want 2.1.111, the newest version that wrote to the store", rep.Client)
	}
	if n := count(rep.Findings, validate.ToolResultMiss); n != 0 {
		t.Errorf("%d tool-result-missing as 2.1.111 resumes the store, want 0", n)
	}
	if n := count(rep.WriterFindings, validate.ToolResultMiss); n != 119 {
		t.Errorf("%d tool-result-missing in the writers' verdict, want 119", n)
	}
	for _, f := range rep.WriterFindings {
		if f.Writer == nil || f.Writer.Version == "" || f.Writer.Version == "2.1.111" || f.Writer.Severity != f.Severity.String() {
			t.Errorf("writer finding %s:%d %s: writer %+v", f.Path, f.Line, f.Code, f.Writer)
			break
		}
	}

	rep, err = validate.Run(validate.Options{Root: root, Client: "2.1.29", ClientFrom: "--client"})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(rep.Findings, validate.ToolResultMiss); n != 119 || len(rep.WriterFindings) != 0 {
		t.Errorf("as 2.1.29 resumes: %d tool-result-missing, %d writer findings; want 119 and 0", n, len(rep.WriterFindings))
	}
}
