package secrets

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/plant"
	"github.com/cfix-dev/cfix/internal/rsstest"
	"github.com/cfix-dev/cfix/session"
)

// TestRedactLongLine: a secret on a line over session.MaxLine is found in
// the line's skeleton, and its redaction refused, naming the line: the
// plan would write the skeleton, not the line.
func TestRedactLongLine(t *testing.T) {
	p := plant.New(t)
	root, path := rsstest.Store(t, rsstest.NULTail)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":%q,"message":{"role":"user","content":"my token is %s and then `, rsstest.Session, p.GitHub)
	b.WriteString(strings.Repeat("pasted text ", (session.MaxLine+(1<<20))/12))
	b.WriteString("\"}}\n")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := PlanRedact(Options{Root: root})
	if err == nil || !strings.Contains(err.Error(), ":1: line of 65.") || !strings.Contains(err.Error(), "cfix does not redact it") {
		t.Fatalf("err = %v", err)
	}
}
