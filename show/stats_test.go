package show

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadNULBytes: a line holding NUL bytes is read as the chain reader
// and validate read it, with them taken out: its entries count, and it is
// no line "not JSON".
func TestReadNULBytes(t *testing.T) {
	rec := func(uuid, parent, typ, text string) string {
		return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":` + parent + `,"version":"2.1.88","message":{"role":"` + typ + `","content":"` + text + `"}}`
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := rec("u1", "null", "user", "hello \x00") + "\n" + rec("u2", `"u1"`, "assistant", "reply") + rec("u3", `"u2"`, "user", "again \x00") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := Read(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 3 || st.NotJSON != 0 || st.Turns != 2 {
		t.Errorf("%d entries, %d lines not JSON, %d turns; want 3, 0, 2", st.Entries, st.NotJSON, st.Turns)
	}
	if n := len(st.chain.Graph.Nodes); n != st.Entries {
		t.Errorf("the chain reader holds %d entries, the stats %d", n, st.Entries)
	}
}
