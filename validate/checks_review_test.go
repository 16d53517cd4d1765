package validate

// Second-review tests: each one shows a bug (see the comment on each).
// They are expected to FAIL on the code as reviewed.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/store"
)

const (
	rvSessA = "11111111-1111-4111-8111-111111111111"
	rvSessB = "22222222-2222-4222-8222-222222222222"
)

func rvEntry(sess, uuid, parent, typ, ts, version, content string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/home/x","sessionId":"%s","version":"%s","type":"%s","message":{"role":"%s","content":%s},"uuid":"%s","timestamp":"%s"}`,
		p, sess, version, typ, typ, content, uuid, ts)
}

func rvWrite(t *testing.T, root, name, content string) string {
	t.Helper()
	p := filepath.Join(root, "projects", "-home-x", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func rvCodesAt(t *testing.T, opts Options, path string) map[Code]Severity {
	t.Helper()
	rep, err := Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[Code]Severity{}
	for _, f := range rep.Findings {
		if f.Path == path && (f.Code == ParentMissing || f.Code == ParentElsewhere) {
			out[f.Code] = f.Severity
		}
	}
	return out
}

// BUG (validate/store.go:222, searchStore): a targeted run looks for a
// missing parent by the bytes `"uuid":"X"` anywhere in a line of the other
// files, nested values included. 2.1.x agent_progress entries embed a
// subagent's message with its uuid (data.message.uuid). A parent written
// nowhere as an entry, but named so inside another session's progress
// entry, is parent-missing (error, the resumed chain is cut) in a
// whole-store run and parent-elsewhere (a link) in a targeted run of the
// same file. repair --aggressive with that target then leaves it alone.
func TestReviewTargetedParentLookup(t *testing.T) {
	root := t.TempDir()
	const v = "2.1.120"
	a := rvWrite(t, root, rvSessA+".jsonl", strings.Join([]string{
		rvEntry(rvSessA, "a0", "", "user", "2026-01-01T00:00:01.000Z", v, `"hi"`),
		rvEntry(rvSessA, "a1", "a0", "assistant", "2026-01-01T00:00:02.000Z", v, `[{"type":"text","text":"ok"}]`),
		rvEntry(rvSessA, "c1", "ghost-0000", "user", "2026-01-01T00:00:03.000Z", v, `"again"`),
	}, "\n")+"\n")
	rvWrite(t, root, rvSessB+".jsonl", strings.Join([]string{
		rvEntry(rvSessB, "b0", "", "user", "2026-01-01T00:00:00.000Z", v, `"hi"`),
		`{"parentUuid":"b0","isSidechain":false,"sessionId":"` + rvSessB + `","version":"` + v + `","type":"progress","data":{"message":{"type":"user","message":{"role":"user","content":[]},"uuid":"ghost-0000","timestamp":"2026-01-01T00:00:00.100Z"},"type":"agent_progress","agentId":"a1b2c3"},"uuid":"b1","timestamp":"2026-01-01T00:00:00.100Z"}`,
	}, "\n")+"\n")
	whole := rvCodesAt(t, Options{Root: root}, a)
	targeted := rvCodesAt(t, Options{Root: root, Targets: []string{a}}, a)
	if fmt.Sprint(whole) != fmt.Sprint(targeted) {
		t.Errorf("the same file gets different parent verdicts: whole store %v, targeted %v", whole, targeted)
	}
}

// BUG (validate/loaded.go:43-47 vs validate/file.go work): LoadedChain,
// the model the oracle test holds to the real clients, parses the raw line
// and skips a line with NUL bytes (as the client's JSON.parse does), while
// checkChain strips the NULs and loads the entry. A crash that left NULs
// before an appended entry (a common pattern) makes the two models pick
// different versions (so loaders) and chains for the same file.
func TestReviewLoadedChainMatchesCheck(t *testing.T) {
	root := t.TempDir()
	p := rvWrite(t, root, rvSessA+".jsonl", strings.Join([]string{
		rvEntry(rvSessA, "u1", "", "user", "2026-01-01T00:00:01.000Z", "2.1.90", `"hi"`),
		rvEntry(rvSessA, "a1", "u1", "assistant", "2026-01-01T00:00:02.000Z", "2.1.90", `[{"type":"text","text":"ok"}]`),
		"\x00\x00\x00\x00" + rvEntry(rvSessA, "u2", "a1", "user", "2026-01-01T00:00:03.000Z", "2.1.120", `"again"`),
	}, "\n")+"\n")
	fi, _ := os.Stat(p)
	res := newChecker().check(store.File{Path: p, Project: "-home-x", Kind: store.KindSession, Session: rvSessA, Size: fi.Size(), ModTime: fi.ModTime()})
	ld, err := LoadedChain(p)
	if err != nil {
		t.Fatal(err)
	}
	if res.loader.Name != ld.Loader || res.version != ld.Version {
		t.Errorf("validate's checks use %s (version %s); LoadedChain, validate's model for the oracle, uses %s (version %s)", res.loader.Name, res.version, ld.Loader, ld.Version)
	}
}
