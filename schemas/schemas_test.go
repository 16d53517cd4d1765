package schemas

import (
	"github.com/cfix-dev/cfix/session"

	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// corpusGlob matches the project stores of every corpus version.
const corpusGlob = "../testdata/corpus/*/.claude/projects"

// corpusTypes are the entry types the corpus holds; the corpus test fails
// when one is no longer seen, so a broken walk cannot pass silently.
var corpusTypes = []string{
	"api-request", "api-request-blob", "api-request-shape", "assistant",
	"atis-latch", "attachment", "cost-state", "last-prompt", "mode",
	"queue-operation", "summary", "system", "tools-used", "user",
}

// allTypes are the entry types that must have a schema.
var allTypes = []string{
	"agent-name", "agent-setting", "ai-title", "api-request", "api-request-blob",
	"api-request-shape", "assistant", "atis-latch", "attachment",
	"bridge-session", "content-replacement", "cost-state", "custom-title",
	"file-history-delta", "file-history-snapshot", "fork-context-ref",
	"frame-link", "last-prompt", "mode", "permission-mode",
	"pr-link", "progress", "queue-operation", "relocated", "summary", "system", "tag",
	"teleported-from", "tools-used", "user", "worktree-state",
}

// corpusLine is one non-empty transcript line of the corpus.
type corpusLine struct {
	file string
	n    int
	raw  []byte
}

// loadCorpus returns every non-empty line of every *.jsonl under the
// corpus project stores, subagent files included.
func loadCorpus(t *testing.T) []corpusLine {
	t.Helper()
	roots, err := filepath.Glob(corpusGlob)
	if err != nil || len(roots) == 0 {
		t.Fatalf("no corpus stores match %s (err %v)", corpusGlob, err)
	}
	var lines []corpusLine
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 64<<20)
			for n := 1; sc.Scan(); n++ {
				if len(bytes.TrimSpace(sc.Bytes())) == 0 {
					continue
				}
				lines = append(lines, corpusLine{p, n, bytes.Clone(sc.Bytes())})
			}
			return sc.Err()
		})
		if err != nil {
			t.Fatalf("walk %s: %v", root, err)
		}
	}
	if len(lines) == 0 {
		t.Fatal("corpus holds no transcript lines")
	}
	return lines
}

// decode decodes one JSON value, with json.Number numbers if useNumber.
func decode(t *testing.T, raw []byte, useNumber bool) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if useNumber {
		dec.UseNumber()
	}
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %.80s: %v", raw, err)
	}
	return v
}

// Light-tree limits, as the validator applies them.
const lightMaxString = session.MaxString

// toInt64 turns integral json.Numbers into int64 and others into float64,
// so the int64 form of numbers is validated too.
func toInt64(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = toInt64(e)
		}
	case []any:
		for i, e := range x {
			x[i] = toInt64(e)
		}
	}
	return v
}

// forms returns the decoded variants of one line the validator may feed:
// plain, json.Number, int64, and the light tree of each.
func forms(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	m := map[string]any{
		"plain":  decode(t, raw, false),
		"number": decode(t, raw, true),
		"int64":  toInt64(decode(t, raw, true)),
	}
	for _, k := range []string{"plain", "number", "int64"} {
		m["light-"+k] = session.Light(m[k])
	}
	return m
}

func TestCompileAll(t *testing.T) {
	m, b, err := compileAll(files)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	var kinds []string
	for k := range b {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	if want := []string{"image", "redacted_thinking", "text", "thinking", "tool_result", "tool_use"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("block schemas = %v, want %v", kinds, want)
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, allTypes) {
		t.Errorf("compiled types = %v, want %v", got, allTypes)
	}
	if !reflect.DeepEqual(Types(), allTypes) {
		t.Errorf("Types() = %v, want %v", Types(), allTypes)
	}
	if !sort.StringsAreSorted(Types()) {
		t.Error("Types() not sorted")
	}
}

func TestSchemaFilesHaveIDs(t *testing.T) {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var s map[string]any
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s["$id"] != baseURL+name {
			t.Errorf("%s: $id = %v, want %s", name, s["$id"], baseURL+name)
		}
		if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema = %v", name, s["$schema"])
		}
		if bytes.Contains(data, []byte(`"additionalProperties"`)) {
			t.Errorf("%s: must not use additionalProperties: unknown fields are allowed", name)
		}
		for _, kw := range []string{`"maxLength"`, `"pattern"`, `"minItems"`, `"maxItems"`, `"format"`} {
			if bytes.Contains(data, []byte(kw)) {
				t.Errorf("%s: uses %s, which the light tree cannot honour", name, kw)
			}
		}
	}
}

func TestHas(t *testing.T) {
	for _, typ := range allTypes {
		if !Has(typ) {
			t.Errorf("Has(%q) = false", typ)
		}
	}
	for _, typ := range []string{"", "defs", "no-such-type", "User"} {
		if Has(typ) {
			t.Errorf("Has(%q) = true", typ)
		}
	}
	if err := Validate("no-such-type", 42); err != nil {
		t.Errorf("Validate of a type without schema = %v, want nil", err)
	}
}

func TestLight(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2000 bytes
	raw := []byte(`{"message":{"b":{"c":{"d":{"e":{"f":1},"g":[1],"h":"x","i":2}}}},"other":{"x":{"y":1},"z":[2],"w":3},"s":"` + long + `"}`)
	in := decode(t, raw, false)
	got := session.Light(in).(map[string]any)
	if s := got["s"].(string); len(s) != lightMaxString {
		t.Errorf("long string kept %d bytes, want %d", len(s), lightMaxString)
	}
	d := got["message"].(map[string]any)["b"].(map[string]any)["c"].(map[string]any)["d"].(map[string]any)
	if e, ok := d["e"].(map[string]any); !ok || len(e) != 0 {
		t.Errorf("object at depth 5 = %#v, want empty object", d["e"])
	}
	if g, ok := d["g"].([]any); !ok || len(g) != 0 {
		t.Errorf("array at depth 5 = %#v, want empty array", d["g"])
	}
	if d["h"] != "x" || d["i"] != float64(2) {
		t.Errorf("scalars at depth 5 changed: %#v %#v", d["h"], d["i"])
	}
	o := got["other"].(map[string]any)
	if x, ok := o["x"].(map[string]any); !ok || len(x) != 0 {
		t.Errorf("object at depth 2 outside message = %#v, want empty object", o["x"])
	}
	if z, ok := o["z"].([]any); !ok || len(z) != 0 {
		t.Errorf("array at depth 2 outside message = %#v, want empty array", o["z"])
	}
	// The mirror must match what the validator really feeds.
	p := session.NewParser().Parse(raw)
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	if want := session.Light(decode(t, raw, true)); !reflect.DeepEqual(p.Value, want) {
		t.Errorf("session.Parser tree differs from the light mirror:\n got %#v\nwant %#v", p.Value, want)
	}
}

func TestCorpusValidates(t *testing.T) {
	lines := loadCorpus(t)
	seen := map[string]int{}
	lightChanged := 0
	for _, l := range lines {
		fm := forms(t, l.raw)
		obj, ok := fm["plain"].(map[string]any)
		if !ok {
			t.Errorf("%s:%d: not an object", l.file, l.n)
			continue
		}
		typ, _ := obj["type"].(string)
		seen[typ]++
		if !Has(typ) {
			continue
		}
		if !reflect.DeepEqual(fm["plain"], fm["light-plain"]) {
			lightChanged++
		}
		for _, k := range []string{"plain", "number", "int64", "light-plain", "light-number", "light-int64"} {
			if err := Validate(typ, fm[k]); err != nil {
				t.Errorf("%s:%d (%s, %s): %v", l.file, l.n, typ, k, err)
			}
		}
	}
	for typ, n := range seen {
		if !Has(typ) {
			t.Errorf("corpus type %q (%d entries) has no schema", typ, n)
		}
	}
	for _, typ := range corpusTypes {
		if seen[typ] == 0 {
			t.Errorf("corpus type %q not seen: is the walk broken?", typ)
		}
	}
	if lightChanged == 0 {
		t.Error("the light tree never differed from the decoded value: the light test is vacuous")
	}
	t.Logf("%d lines, %d changed by the light tree, types %v", len(lines), lightChanged, seen)
}

// entries indexes the raw corpus lines by type.
func entries(t *testing.T) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	for _, l := range loadCorpus(t) {
		var h struct{ Type string }
		if err := json.Unmarshal(l.raw, &h); err != nil {
			t.Fatalf("%s:%d: %v", l.file, l.n, err)
		}
		out[h.Type] = append(out[h.Type], l.raw)
	}
	return out
}

// pick returns a fresh decoded copy of the first corpus entry of typ for
// which pred holds (any entry if pred is nil).
func pick(t *testing.T, byType map[string][][]byte, typ string, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	for _, raw := range byType[typ] {
		m := decode(t, raw, false).(map[string]any)
		if pred == nil || pred(m) {
			return m
		}
	}
	t.Fatalf("no corpus %s entry fits", typ)
	return nil
}

// blocks returns message.content when it is an array.
func blocks(m map[string]any) []any {
	msg, _ := m["message"].(map[string]any)
	c, _ := msg["content"].([]any)
	return c
}

// hasBlock reports whether an entry's content holds a block of kind.
func hasBlock(kind string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		for _, b := range blocks(m) {
			if b.(map[string]any)["type"] == kind {
				return true
			}
		}
		return false
	}
}

// onlyBlock keeps just the first block of kind in message.content (so it
// sits at /message/content/0) and lets f damage it.
func onlyBlock(kind string, f func(b map[string]any)) func(map[string]any) {
	return func(m map[string]any) {
		for _, b := range blocks(m) {
			if bm := b.(map[string]any); bm["type"] == kind {
				f(bm)
				m["message"].(map[string]any)["content"] = []any{bm}
				return
			}
		}
		panic("no " + kind + " block")
	}
}

// set sets the field at a slash path of object keys.
func set(path string, v any) func(map[string]any) {
	return func(m map[string]any) {
		keys := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for _, k := range keys[:len(keys)-1] {
			m = m[k].(map[string]any)
		}
		m[keys[len(keys)-1]] = v
	}
}

// del deletes the field at a slash path of object keys.
func del(path string) func(map[string]any) {
	return func(m map[string]any) {
		keys := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for _, k := range keys[:len(keys)-1] {
			m = m[k].(map[string]any)
		}
		if _, ok := m[keys[len(keys)-1]]; !ok {
			panic("no field " + path)
		}
		delete(m, keys[len(keys)-1])
	}
}

type negCase struct {
	name   string
	typ    string
	pred   func(map[string]any) bool
	damage func(map[string]any)
	want   string // the error must start with this
}

func negCases() []negCase {
	isArr := func(m map[string]any) bool { return blocks(m) != nil }
	isStr := func(m map[string]any) bool { _, ok := m["message"].(map[string]any)["content"].(string); return ok }
	withLeaf := func(m map[string]any) bool { _, ok := m["leafUuid"]; return ok }
	missing := ": missing required field"
	return []negCase{
		// user
		{"user no uuid", "user", nil, del("/uuid"), "/uuid" + missing},
		{"user uuid number", "user", nil, set("/uuid", 5), "/uuid: expected string, but got number"},
		{"user parentUuid bool", "user", nil, set("/parentUuid", true), "/parentUuid: expected string or null, but got boolean"},
		{"user no parentUuid", "user", nil, del("/parentUuid"), "/parentUuid" + missing},
		{"user no sessionId", "user", nil, del("/sessionId"), "/sessionId" + missing},
		{"user no timestamp", "user", nil, del("/timestamp"), "/timestamp" + missing},
		{"user no type", "user", nil, del("/type"), "/type" + missing},
		{"user wrong type", "user", nil, set("/type", "assistant"), `/type: value must be "user"`},
		{"user isSidechain string", "user", nil, set("/isSidechain", "no"), "/isSidechain: expected boolean"},
		{"user cwd number", "user", nil, set("/cwd", 1), "/cwd: expected string"},
		{"user version bool", "user", nil, set("/version", false), "/version: expected string"},
		{"user no message", "user", nil, del("/message"), "/message" + missing},
		{"user message string", "user", nil, set("/message", "hi"), "/message: expected object"},
		{"user no role", "user", nil, del("/message/role"), "/message/role" + missing},
		{"user no content", "user", isStr, del("/message/content"), "/message/content" + missing},
		{"user content number", "user", isStr, set("/message/content", 7), "/message/content: expected string or array, but got number"},
		{"user block not object", "user", isArr, set("/message/content", []any{"x"}), "/message/content/0: expected object"},
		{"user block no type", "user", isArr, set("/message/content", []any{map[string]any{"text": "x"}}), "/message/content/0/type" + missing},
		{"user block type number", "user", isArr, set("/message/content", []any{map[string]any{"type": 3}}), "/message/content/0/type: expected string"},
		{"user text block text number", "user", hasBlock("text"), onlyBlock("text", set("/text", 3)), "/message/content/0/text: expected string"},
		{"user tool_result no tool_use_id", "user", hasBlock("tool_result"), onlyBlock("tool_result", del("/tool_use_id")), "/message/content/0/tool_use_id" + missing},
		{"user tool_result content number", "user", hasBlock("tool_result"), onlyBlock("tool_result", set("/content", 5)), "/message/content/0/content: expected string or array"},
		{"user tool_result content item string", "user", hasBlock("tool_result"), onlyBlock("tool_result", set("/content", []any{"x"})), "/message/content/0/content/0: expected object"},
		{"user tool_result is_error string", "user", hasBlock("tool_result"), onlyBlock("tool_result", set("/is_error", "yes")), "/message/content/0/is_error: expected boolean"},
		{"user image no source", "user", isArr, set("/message/content", []any{map[string]any{"type": "image"}}), "/message/content/0/source" + missing},
		{"user image source string", "user", isArr, set("/message/content", []any{map[string]any{"type": "image", "source": "x"}}), "/message/content/0/source: expected object"},
		{"user sourceToolAssistantUUID number", "user", nil, set("/sourceToolAssistantUUID", 1), "/sourceToolAssistantUUID: expected string"},
		// assistant
		{"assistant no uuid", "assistant", nil, del("/uuid"), "/uuid" + missing},
		{"assistant parentUuid number", "assistant", nil, set("/parentUuid", 1), "/parentUuid: expected string or null"},
		{"assistant content number", "assistant", nil, set("/message/content", 7), "/message/content: expected string or array"},
		{"assistant tool_use no id", "assistant", hasBlock("tool_use"), onlyBlock("tool_use", del("/id")), "/message/content/0/id" + missing},
		{"assistant tool_use no name", "assistant", hasBlock("tool_use"), onlyBlock("tool_use", del("/name")), "/message/content/0/name" + missing},
		{"assistant tool_use no input", "assistant", hasBlock("tool_use"), onlyBlock("tool_use", del("/input")), "/message/content/0/input" + missing},
		{"assistant tool_use input string", "assistant", hasBlock("tool_use"), onlyBlock("tool_use", set("/input", "{}")), "/message/content/0/input: expected object"},
		{"assistant text block text number", "assistant", hasBlock("text"), onlyBlock("text", set("/text", 3)), "/message/content/0/text: expected string"},
		{"assistant text block no text", "assistant", hasBlock("text"), onlyBlock("text", del("/text")), "/message/content/0/text" + missing},
		{"assistant thinking signature null", "assistant", hasBlock("thinking"), onlyBlock("thinking", set("/signature", nil)), "/message/content/0/signature: expected string, but got null"},
		{"assistant thinking no signature", "assistant", hasBlock("thinking"), onlyBlock("thinking", del("/signature")), "/message/content/0/signature" + missing},
		{"assistant thinking no thinking", "assistant", hasBlock("thinking"), onlyBlock("thinking", del("/thinking")), "/message/content/0/thinking" + missing},
		{"assistant redacted_thinking no data", "assistant", nil, set("/message/content", []any{map[string]any{"type": "redacted_thinking"}}), "/message/content/0/data" + missing},
		{"assistant block no type", "assistant", hasBlock("text"), onlyBlock("text", del("/type")), "/message/content/0/type" + missing},
		{"assistant stop_reason number", "assistant", nil, set("/message/stop_reason", 1), "/message/stop_reason: expected string or null"},
		{"assistant usage string", "assistant", nil, set("/message/usage", "x"), "/message/usage: expected object"},
		{"assistant wrong type", "assistant", nil, set("/type", "user"), `/type: value must be "assistant"`},
		// system
		{"system no uuid", "system", nil, del("/uuid"), "/uuid" + missing},
		{"system parentUuid number", "system", nil, set("/parentUuid", 5), "/parentUuid: expected string or null"},
		{"system logicalParentUuid number", "system", nil, set("/logicalParentUuid", 5), "/logicalParentUuid: expected string or null"},
		{"system compactMetadata string", "system", nil, set("/compactMetadata", "x"), "/compactMetadata: expected object"},
		{"system subtype number", "system", nil, set("/subtype", 1), "/subtype: expected string"},
		// attachment
		{"attachment no attachment", "attachment", nil, del("/attachment"), "/attachment" + missing},
		{"attachment no attachment type", "attachment", nil, del("/attachment/type"), "/attachment/type" + missing},
		{"attachment attachment type number", "attachment", nil, set("/attachment/type", 1), "/attachment/type: expected string"},
		{"attachment no timestamp", "attachment", nil, del("/timestamp"), "/timestamp" + missing},
		// summary
		{"summary no leafUuid", "summary", nil, del("/leafUuid"), "/leafUuid" + missing},
		{"summary summary number", "summary", nil, set("/summary", 5), "/summary: expected string"},
		// queue-operation
		{"queue-operation no operation", "queue-operation", nil, del("/operation"), "/operation" + missing},
		{"queue-operation timestamp number", "queue-operation", nil, set("/timestamp", 5), "/timestamp: expected string"},
		{"queue-operation content number", "queue-operation", nil, set("/content", 5), "/content: expected string or array"},
		// last-prompt
		{"last-prompt lastPrompt number", "last-prompt", nil, set("/lastPrompt", 5), "/lastPrompt: expected string"},
		{"last-prompt leafUuid number", "last-prompt", withLeaf, set("/leafUuid", 5), "/leafUuid: expected string"},
		{"last-prompt no sessionId", "last-prompt", nil, del("/sessionId"), "/sessionId" + missing},
		// mode
		{"mode no mode", "mode", nil, del("/mode"), "/mode" + missing},
		{"mode mode number", "mode", nil, set("/mode", 1), "/mode: expected string"},
		// api-request
		{"api-request no id", "api-request", nil, del("/id"), "/id" + missing},
		{"api-request params string", "api-request", nil, set("/params", "x"), "/params: expected object"},
		{"api-request tail object", "api-request", nil, set("/tail", map[string]any{}), "/tail: expected array"},
		{"api-request base number", "api-request", nil, set("/base", 5), "/base: expected string or null"},
		// api-request-blob
		{"api-request-blob no hash", "api-request-blob", nil, del("/hash"), "/hash" + missing},
		{"api-request-blob content number", "api-request-blob", nil, set("/message/content", 7), "/message/content: expected string or array"},
		{"api-request-blob text number", "api-request-blob", hasBlock("text"), onlyBlock("text", set("/text", 3)), "/message/content/0/text: expected string"},
		// api-request-shape
		{"api-request-shape no shape", "api-request-shape", nil, del("/shape"), "/shape" + missing},
		{"api-request-shape shape array", "api-request-shape", nil, set("/shape", []any{}), "/shape: expected object"},
		// atis-latch
		{"atis-latch no atis", "atis-latch", nil, del("/atis"), "/atis" + missing},
		{"atis-latch atis number", "atis-latch", nil, set("/atis", 1), "/atis: expected string"},
		// cost-state
		{"cost-state no sessionId", "cost-state", nil, del("/sessionId"), "/sessionId" + missing},
		{"cost-state totalCostUSD string", "cost-state", nil, set("/totalCostUSD", "1"), "/totalCostUSD: expected number"},
		{"cost-state modelUsage array", "cost-state", nil, set("/modelUsage", []any{}), "/modelUsage: expected object"},
		// tools-used
		{"tools-used no tools", "tools-used", nil, del("/tools"), "/tools" + missing},
		{"tools-used tools string", "tools-used", nil, set("/tools", "Bash"), "/tools: expected array"},
		{"tools-used tool number", "tools-used", nil, set("/tools", []any{"Bash", 1}), "/tools/1: expected string"},
	}
}

func TestNegative(t *testing.T) {
	byType := entries(t)
	covered := map[string]bool{}
	for _, c := range negCases() {
		t.Run(c.name, func(t *testing.T) {
			covered[c.typ] = true
			m := pick(t, byType, c.typ, c.pred)
			if err := Validate(c.typ, m); err != nil {
				t.Fatalf("undamaged entry fails: %v", err)
			}
			c.damage(m)
			// The damage sits at depth <= 4, so the light tree must fail the same way.
			for form, v := range map[string]any{"plain": m, "light": session.Light(m)} {
				checkErr(t, form, Validate(c.typ, v), c.want)
			}
		})
	}
	for _, typ := range corpusTypes {
		if !covered[typ] {
			t.Errorf("no negative case for corpus type %q", typ)
		}
	}
}

// checkErr asserts err is a short one-line message starting with want.
func checkErr(t *testing.T, form string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %q", form, want)
		return
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, want) {
		t.Errorf("%s: error %q, want prefix %q", form, msg, want)
	}
	if strings.ContainsAny(msg, "\r\n") || len(msg) > 200 {
		t.Errorf("%s: error not one short line: %q", form, msg)
	}
	if msg != strings.ToLower(msg[:1])+msg[1:] {
		t.Errorf("%s: error not lowercase: %q", form, msg)
	}
}

// TestSynthetic covers the documented types the corpus lacks.
func TestSynthetic(t *testing.T) {
	obj := func(s string) map[string]any { return decode(t, []byte(s), false).(map[string]any) }
	const header = `"uuid":"u2","parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/w","sessionId":"s","version":"2.0.0","timestamp":"2025-01-01T00:00:00Z"`
	good := map[string]string{
		"progress":              `{"type":"progress",` + header + `,"data":{"type":"bash_progress"},"toolUseID":"t","parentToolUseID":"t"}`,
		"file-history-snapshot": `{"type":"file-history-snapshot","messageId":"m","snapshot":{"messageId":"m","trackedFileBackups":{},"timestamp":"x"},"isSnapshotUpdate":false}`,
		"custom-title":          `{"type":"custom-title","customTitle":"my title","sessionId":"s"}`,
		"ai-title":              `{"type":"ai-title","aiTitle":"a title","sessionId":"s"}`,
		"tag":                   `{"type":"tag","tag":"x","sessionId":"s"}`,
		"agent-name":            `{"type":"agent-name","agentName":"x","sessionId":"s"}`,
		"pr-link":               `{"type":"pr-link","prNumber":1,"prUrl":"https://x","sessionId":"s"}`,
		"permission-mode":       `{"type":"permission-mode","permissionMode":"plan","sessionId":"s"}`,
		"worktree-state":        `{"type":"worktree-state","sessionId":"s"}`,
		"content-replacement":   `{"type":"content-replacement","sessionId":"s","replacements":[]}`,
		// As 2.1.207 to 2.1.232 wrote them (testdata/wild's skeleton of
		// that store), and frame-link as 2.1.332 writes it.
		"bridge-session":     `{"type":"bridge-session","sessionId":"1240745b-0001-4e08-a589-bed6e137a069","bridgeSessionId":"xxxxxxxxxxxxxxxxxxxxxxxxxxxx","lastSequenceNum":0,"ownerAccountUuid":"x","ownerOrganizationUuid":"y"}`,
		"file-history-delta": `{"type":"file-history-delta","messageId":"ac1f8b81-3ea5-4407-8e86-c97909e45501","snapshotMessageId":"77faf9aa-49ac-425e-9ec7-d862c3be03b7","trackingPath":"xxxx","backup":{"backupFileName":null,"version":1,"backupTime":"2026-08-05T09:02:57.526Z","realParentDir":"xxxx"},"timestamp":"2026-08-05T09:02:57.544Z"}`,
		"fork-context-ref":   `{"type":"fork-context-ref","agentId":"ausrbinsnmpwalk-v2c-c-da0830f979acd02a","parentSessionId":"719f12f0-d8aa-4d12-9ac6-a5bd544bb57c","parentLastUuid":"906771bd-252c-4d21-8650-df7279851d01","contextLength":1038}`,
		"frame-link":         `{"type":"frame-link","sessionId":"d8fbf478-f4fe-4f9b-b738-eb5019b102dd","path":"xxxx","frameUrl":"xxxx","title":"xxxx","timestamp":"2026-08-12T06:22:34.454Z"}`,
		// As 2.1.219 (a worktree entered), 2.1.177 (claude --agent) and
		// 2.1.8x to 2.1.111 (a teleported session, the wild store) wrote them.
		"relocated":       `{"type":"relocated","relocatedCwd":"/tmp/fid/wt/repo/.claude/worktrees/feat","sessionId":"2af12a98-b146-4d16-ac2f-3a168545c8fe"}`,
		"agent-setting":   `{"type":"agent-setting","agentSetting":"reviewer","sessionId":"9717d226-7269-46a7-ae6a-6d0b972d113c"}`,
		"teleported-from": `{"type":"teleported-from","remoteSessionId":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","branch":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","messageCount":0}`,
	}
	if err := Validate("frame-link", obj(`{"type":"frame-link","artifactCount":2,"sessionId":"s","timestamp":"2026-11-20T00:00:00Z"}`)); err != nil {
		t.Errorf("frame-link of 2.1.332: %v", err)
	}
	for typ, s := range good {
		if err := Validate(typ, obj(s)); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
		if err := Validate(typ, obj(`{"type":"`+typ+`"}`)); err != nil && !strings.HasSuffix(err.Error(), "missing required field") {
			t.Errorf("%s minimal: unexpected error %v", typ, err)
		}
	}
	bad := []struct {
		typ, entry, want string
	}{
		{"progress", `{"type":"progress","parentUuid":null,"sessionId":"s","timestamp":"t"}`, "/uuid: missing required field"},
		{"progress", `{"type":"progress",` + header + `,"data":"x"}`, "/data: expected object"},
		{"file-history-snapshot", `{"type":"file-history-snapshot","snapshot":{}}`, "/messageId: missing required field"},
		{"file-history-snapshot", `{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":"no"}`, "/isSnapshotUpdate: expected boolean"},
		{"custom-title", `{"type":"custom-title","sessionId":"s"}`, "/customTitle: missing required field"},
		{"custom-title", `{"type":"custom-title","customTitle":5,"sessionId":"s"}`, "/customTitle: expected string"},
		{"ai-title", `{"aiTitle":"x"}`, "/type: missing required field"},
		{"tag", `{"type":"tag","sessionId":5}`, "/sessionId: expected string"},
		{"pr-link", `{"type":"tag"}`, `/type: value must be "pr-link"`},
		{"relocated", `{"type":"relocated","sessionId":"s"}`, "/relocatedCwd: missing required field"},
		{"relocated", `{"type":"relocated","relocatedCwd":5}`, "/relocatedCwd: expected string"},
		{"agent-setting", `{"type":"agent-setting","agentSetting":null}`, "/agentSetting: expected string"},
		{"teleported-from", `{"type":"teleported-from","messageCount":"0"}`, "/messageCount: expected integer"},
		{"worktree-state", `[]`, "(root): expected object"},
		{"bridge-session", `{"type":"bridge-session","sessionId":"s","bridgeSessionId":"b","lastSequenceNum":"1"}`, "/lastSequenceNum: expected integer"},
		{"file-history-delta", `{"type":"file-history-delta","messageId":"m","snapshotMessageId":"n","trackingPath":"p"}`, "/backup: missing required field"},
		{"file-history-delta", `{"type":"file-history-delta","messageId":"m","snapshotMessageId":"n","trackingPath":"p","backup":{"backupFileName":5}}`, "/backup/backupFileName: expected"},
		{"fork-context-ref", `{"type":"fork-context-ref","parentSessionId":"s"}`, "/parentLastUuid: missing required field"},
		{"fork-context-ref", `{"type":"fork-context-ref","parentSessionId":"s","parentLastUuid":"u","contextLength":"9"}`, "/contextLength: expected integer"},
		{"frame-link", `{"type":"frame-link","sessionId":"s","artifactCount":"2"}`, "/artifactCount: expected integer"},
	}
	for _, c := range bad {
		checkErr(t, c.typ, Validate(c.typ, decode(t, []byte(c.entry), false)), c.want)
	}
}

func TestUnknownFieldsAndBlocks(t *testing.T) {
	byType := entries(t)
	for _, typ := range corpusTypes {
		t.Run(typ, func(t *testing.T) {
			m := pick(t, byType, typ, nil)
			m["futureField"] = map[string]any{"nested": []any{1, "x", nil}}
			m["futureFlag"] = true
			if err := Validate(typ, m); err != nil {
				t.Errorf("unknown top-level fields: %v", err)
			}
		})
	}
	for _, typ := range []string{"user", "assistant", "api-request-blob"} {
		t.Run(typ+" blocks", func(t *testing.T) {
			for _, raw := range byType[typ] {
				m := decode(t, raw, true).(map[string]any)
				c := blocks(m)
				if c == nil {
					continue
				}
				for _, b := range c {
					b.(map[string]any)["futureBlockField"] = map[string]any{"x": 1}
				}
				c = append(c,
					map[string]any{"type": "future_block"},
					map[string]any{"type": "future_block", "payload": map[string]any{"deep": []any{}}, "text": 3},
					map[string]any{"type": "server_tool_use", "id": "x"},
					map[string]any{"type": "document"},
					map[string]any{"type": "text", "text": "x", "citations": nil},
				)
				m["message"].(map[string]any)["content"] = c
				for form, v := range map[string]any{"plain": m, "light": session.Light(m)} {
					if err := Validate(typ, v); err != nil {
						t.Fatalf("%s: %v", form, err)
					}
				}
			}
		})
	}
}

// TestDeterministic checks that several errors always yield the same,
// most specific message although jsonschema walks properties in map order.
func TestDeterministic(t *testing.T) {
	m := pick(t, entries(t), "assistant", hasBlock("tool_use"))
	set("/uuid", 5)(m)
	set("/cwd", 5)(m)
	set("/version", 5)(m)
	onlyBlock("tool_use", func(b map[string]any) { delete(b, "id"); b["name"] = 1 })(m)
	const want = "/message/content/0/id: missing required field"
	for range 50 {
		if err := Validate("assistant", m); err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
	}
}

func TestNumberForms(t *testing.T) {
	m := pick(t, entries(t), "cost-state", nil)
	for _, v := range []any{float64(1.5), json.Number("2"), int64(3), 4, uint8(5)} {
		m["totalCostUSD"] = v
		if err := Validate("cost-state", m); err != nil {
			t.Errorf("totalCostUSD %T: %v", v, err)
		}
	}
	m["totalCostUSD"] = int16(1) // not a type encoding/json produces
	if err := Validate("cost-state", m); err == nil {
		t.Error("int16 accepted, want an error")
	}
}

// TestLastPromptWithoutPrompt: Claude Code writes last-prompt entries
// without lastPrompt when there was no prompt to record (only a local
// command ran); they are valid.
func TestLastPromptWithoutPrompt(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"type":"last-prompt","leafUuid":"6e1c4f43-3c9b-4a35-9a0e-8a1f2c3d4e5f","sessionId":"aaaaaaaa-0000-4000-8000-000000000001"}`), &v); err != nil {
		t.Fatal(err)
	}
	if err := Validate("last-prompt", v); err != nil {
		t.Errorf("last-prompt without lastPrompt: %v", err)
	}
}
