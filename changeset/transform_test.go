package changeset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMapPath(t *testing.T) {
	cases := []struct {
		old, new, p, want string
		ok                bool
	}{
		{"/a/foo", "/b/bar", "/a/foo", "/b/bar", true},
		{"/a/foo", "/b/bar", "/a/foo/x/y", "/b/bar/x/y", true},
		{"/a/foo", "/b/bar", "/a/foobar", "/a/foobar", false},
		{"/a/foo", "/b/bar", "/a/foo.txt", "/a/foo.txt", false},
		{"/a/foo", "/b/bar", "/a", "/a", false},
		{"/a/foo/", "/b/bar", "/a/foo/x", "/b/bar/x", true},
		{"/a/foo", "/", "/a/foo/x", "/x", true},
		{"/a/foo", "/b", "", "", false},
		{"/", "/b", "/x", "/x", false},
		// A session run on Windows: letter case does not matter, the part
		// under old takes slashes.
		{`C:\Users\x\proj`, "/home/x/proj", `C:\Users\x\proj`, "/home/x/proj", true},
		{`C:\Users\x\proj`, "/home/x/proj", `c:\users\X\Proj\src\app`, "/home/x/proj/src/app", true},
		{`C:\Users\x\proj\`, "/home/x/proj", `C:\Users\x\proj\src\`, "/home/x/proj/src", true},
		{`C:\Users\x\proj`, "/home/x/proj", `C:/Users/x/proj/src`, "/home/x/proj/src", true},
		{`C:\Users\x\proj`, "/home/x/proj", `C:\Users\x\project`, `C:\Users\x\project`, false},
		{`C:\Users\x\proj`, "/home/x/proj", `D:\Users\x\proj`, `D:\Users\x\proj`, false},
		{`\\srv\share\proj`, "/mnt/proj", `\\SRV\share\proj\a`, "/mnt/proj/a", true},
	}
	for _, c := range cases {
		got, ok := MapPath(c.old, c.new, c.p)
		if got != c.want || ok != c.ok {
			t.Errorf("MapPath(%q, %q, %q) = %q, %v; want %q, %v", c.old, c.new, c.p, got, ok, c.want, c.ok)
		}
	}
}

func TestWindowsDir(t *testing.T) {
	for _, c := range []struct {
		dir  string
		want bool
	}{
		{`C:\Users\x`, true}, {`c:\x`, true}, {`D:/work/x`, true}, {`C:\Users\x\`, true},
		{`\\server\share\x`, true},
		{`C:\`, false}, {`C:`, false}, {`C:x`, false}, {`\\server\share`, false}, {`\\server`, false},
		{"/home/x", false}, {"relative\\x", false}, {"", false}, {`1:\x`, false},
	} {
		if got := WindowsDir(c.dir); got != c.want {
			t.Errorf("WindowsDir(%q) = %v, want %v", c.dir, got, c.want)
		}
	}
}

func TestMapPathsInText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"cat /a/foo/x.txt", "cat /b/x.txt"},
		{"/a/foo", "/b"},
		{"cd /a/foo && ls /a/foobar /a/foo.txt", "cd /b && ls /a/foobar /a/foo.txt"},
		{"see (/a/foo) and '/a/foo/y'", "see (/b) and '/b/y'"},
		{"/x/a/foo stays, so does a/foo", "/x/a/foo stays, so does a/foo"},
		{"PATH=/a/foo/bin:/a/foo", "PATH=/b/bin:/b"},
		{"/a/fooé stays", "/a/fooé stays"},
		{"nothing here", "nothing here"},
	}
	for _, c := range cases {
		got, _ := MapPathsInText("/a/foo", "/b", c.in)
		if got != c.want {
			t.Errorf("MapPathsInText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTransformLine(t *testing.T) {
	tr := &Transform{Kind: TransformRetarget, OldSession: "s-old", NewSession: "s-new", OldDir: "/a/foo", NewDir: "/b/new dir"}
	cases := []struct{ in, want string }{
		// Only sessionId and cwd change; key order, spacing, unknown fields stay.
		{`{"type":"user","sessionId":"s-old","cwd":"/a/foo","uuid":"u1","x":{"cwd":"/a/foo"}}`,
			`{"type":"user","sessionId":"s-new","cwd":"/b/new dir","uuid":"u1","x":{"cwd":"/a/foo"}}`},
		{`{ "cwd" : "/a/foo/sub" , "sessionId" : "s-old" }`, `{ "cwd" : "/b/new dir/sub" , "sessionId" : "s-new" }`},
		{`{"cwd":"/a/foobar","sessionId":"other"}`, `{"cwd":"/a/foobar","sessionId":"other"}`},
		{`{"type":"summary","summary":"/a/foo","leafUuid":"u"}`, `{"type":"summary","summary":"/a/foo","leafUuid":"u"}`},
		// Not objects: left alone.
		{`{"type":"user","sessionId":"s-old"`, `{"type":"user","sessionId":"s-old"`},
		{``, ``},
		{`[1,2]`, `[1,2]`},
		// Escapes in an untouched value stay; a cwd with escapes is re-encoded.
		{`{"m":"\u00e9\/","cwd":"\/a\/foo"}`, `{"m":"\u00e9\/","cwd":"/b/new dir"}`},
	}
	for _, c := range cases {
		got, _ := tr.Line([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("Line(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestTransformRewritePaths(t *testing.T) {
	tr := &Transform{Kind: TransformRetarget, OldDir: "/a/foo", NewDir: "/b", RewritePaths: true,
		Agents: map[string]string{"a123": "a999"}}
	in := `{"cwd":"/a/foo","agentId":"a123","toolUseResult":{"agentId":"a123","filePath":"/a/foo/x"},"message":{"role":"assistant","content":[` +
		`{"type":"text","text":"wrote /a/foo/x and /a/foobar/y"},` +
		`{"type":"thinking","thinking":"/a/foo/secret","signature":"sig"},` +
		`{"type":"tool_use","id":"/a/foo","name":"Write","input":{"file_path":"/a/foo/x","content":"line\n/a/foo/z\n"}},` +
		`{"type":"image","source":{"data":"/a/foo"}}]}}`
	want := `{"cwd":"/b","agentId":"a999","toolUseResult":{"agentId":"a999","filePath":"/a/foo/x"},"message":{"role":"assistant","content":[` +
		`{"type":"text","text":"wrote /b/x and /a/foobar/y"},` +
		`{"type":"thinking","thinking":"/a/foo/secret","signature":"sig"},` +
		`{"type":"tool_use","id":"/a/foo","name":"Write","input":{"file_path":"/b/x","content":"line\n/b/z\n"}},` +
		`{"type":"image","source":{"data":"/a/foo"}}]}}`
	got, changed := tr.Line([]byte(in))
	if !changed || string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !json.Valid(got) {
		t.Error("result is not valid JSON")
	}
	// A string content.
	got, _ = tr.Line([]byte(`{"message":{"role":"user","content":"look at /a/foo/\"q\""}}`))
	if want := `{"message":{"role":"user","content":"look at /b/\"q\""}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// Without RewritePaths, message content stays.
	tr.RewritePaths = false
	got, _ = tr.Line([]byte(in))
	if !strings.Contains(string(got), `"file_path":"/a/foo/x"`) {
		t.Errorf("message changed without RewritePaths: %s", got)
	}
}

func TestTransformStream(t *testing.T) {
	tr := &Transform{Kind: TransformRetarget, OldSession: "s1", NewSession: "s2"}
	in := "{\"sessionId\":\"s1\"}\nnot json\n\n{\"sessionId\":\"s1\"}"
	var out bytes.Buffer
	if err := tr.Stream(&out, strings.NewReader(in), nil); err != nil {
		t.Fatal(err)
	}
	want := "{\"sessionId\":\"s2\"}\nnot json\n\n{\"sessionId\":\"s2\"}" // no final newline added
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestTransformCheck(t *testing.T) {
	bad := []Transform{
		{Kind: "nope"},
		{Kind: TransformRetarget, OldSession: "a"},
		{Kind: TransformRetarget, OldDir: "/a"},
		{Kind: TransformRetarget, OldDir: "/", NewDir: "/b"},
		{Kind: TransformRetarget, OldDir: "rel", NewDir: "/b"},
		{Kind: TransformRetarget, RewritePaths: true},
	}
	for _, b := range bad {
		if b.Check() == nil {
			t.Errorf("%+v: no error", b)
		}
	}
}

// An op with a Transform streams its content, reads only as many bytes as
// its fingerprint says, survives a save and load, and is diffed.
func TestTransformOp(t *testing.T) {
	dir := storeDir(t)
	src := filepath.Join(dir, "src.jsonl")
	lines := "{\"sessionId\":\"s1\",\"cwd\":\"/a\",\"n\":1}\n{\"sessionId\":\"s1\",\"cwd\":\"/a/b\",\"n\":2}\n"
	if err := os.WriteFile(src, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	fp, err := FingerprintOf(src)
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transform{Kind: TransformRetarget, OldSession: "s1", NewSession: "s2", OldDir: "/a", NewDir: "/z"}
	cs := New(dir, "clone")
	cs.Add(Op{Action: Create, Path: filepath.Join(dir, "new", "dst.jsonl"), From: src, FromExpect: &fp, Transform: tr, Reason: "clone"})
	cs.Add(Op{Action: Rewrite, Path: src, Expect: fp, Transform: &Transform{Kind: TransformRetarget, OldDir: "/a", NewDir: "/y"}, Reason: "rewrite"})
	plan := filepath.Join(dir, "plan.json")
	if err := cs.Save(plan); err != nil {
		t.Fatal(err)
	}
	// Claude Code appends after the plan: the content stops at the planned size.
	f, _ := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"sessionId\":\"s1\",\"cwd\":\"/a\",\"n\":3}\n")
	f.Close()
	loaded, err := Load(plan)
	if err != nil {
		t.Fatal(err)
	}
	if lt := loaded.Ops[0].Transform; lt == nil || lt.OldSession != "s1" || lt.NewSession != "s2" || lt.NewDir != "/z" {
		t.Fatalf("transform lost in save/load: %+v", lt)
	}
	r, err := loaded.Ops[0].content()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	want := "{\"sessionId\":\"s2\",\"cwd\":\"/z\",\"n\":1}\n{\"sessionId\":\"s2\",\"cwd\":\"/z/b\",\"n\":2}\n"
	if string(got) != want {
		t.Errorf("content:\n%s\nwant:\n%s", got, want)
	}
	// The diff of the rewrite shows the changed lines.
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := diffOp(w, &loaded.Ops[1], DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	for _, s := range []string{`-{"sessionId":"s1","cwd":"/a","n":1}`, `+{"sessionId":"s1","cwd":"/y","n":1}`, `+{"sessionId":"s1","cwd":"/y/b","n":2}`} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("diff lacks %s:\n%s", s, buf.String())
		}
	}
}

// Lines that do not scan whole as one object are copied as they are, and
// what the transform writes is valid JSON whenever the input was.
func TestTransformLineMalformed(t *testing.T) {
	tr := &Transform{Kind: TransformRetarget, OldSession: "s1", NewSession: "s2", OldDir: "/a", NewDir: "/b", RewritePaths: true}
	for _, in := range []string{
		`{"sessionId":"s1",}`, `{"sessionId" "s1"}`, `{"sessionId":"s1","x":tru}`, `{"sessionId":"s1`,
		`{"sessionId":"s1"}{"sessionId":"s1"}`, `{"sessionId":"s1","x":[1,2}`, `{"sessionId":"s1","x":"\`,
		`{"sessionId":"s1"} trailing`, "\x00\x00", `{"sessionId":"s1","x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
	} {
		if got, changed := tr.Line([]byte(in)); changed || string(got) != in {
			t.Errorf("Line(%q) = %q, changed %v: want it as it was", in, got, changed)
		}
	}
	// Mutations of a real line: valid in, valid out.
	line := `{"parentUuid":null,"sessionId":"s1","cwd":"/a","message":{"role":"user","content":[{"type":"text","text":"see /a/x"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls /a","n":[1,2.5e3,-1,true,false,null]}}]},"uuid":"u"}`
	for i := 0; i < len(line); i++ {
		for _, c := range []byte{'"', '\\', '{', '}', '[', ']', ',', ':', ' ', 'x', 0} {
			m := []byte(line)
			m[i] = c
			got, changed := tr.Line(m)
			if json.Valid(m) && !json.Valid(got) {
				t.Fatalf("valid %s became invalid %s", m, got)
			}
			if !json.Valid(m) && changed {
				t.Fatalf("invalid %s was changed to %s", m, got)
			}
		}
	}
}
