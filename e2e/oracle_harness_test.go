package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
)

// The oracle resumes a real transcript with a real client and maps what the
// client sends back to the transcript's entries. Free text in the wild
// stores is "x" filler, so before the resume every non-blank text a client
// could send (a user's string content, text blocks, a tool_result's string
// or text blocks, a system entry's content) is replaced by a tag naming its
// entry and its place: "@@<uuid>/c" for string content, "@@<uuid>/c3" for
// the text of block 3, "@@<uuid>/c3r" and "@@<uuid>/c3r1" for a
// tool_result's content, "@@<uuid>/s" for a system entry's content. Every
// other byte stays: thinking blocks, signatures, empty and whitespace-only
// strings, tool inputs, ids, the structure. A request then maps back to
// entry uuids by these tags, and by tool_use.id and tool_result.tool_use_id.

// oracleTagRE finds the tags in a text the client sent.
var oracleTagRE = regexp.MustCompile(`@@([^/@\s"]+)/([a-z0-9]+)@@`)

// oracleReminderRE matches <system-reminder> sections, greedily: the
// client nests them (a file attachment's reminder quotes the file's own
// reminder).
var oracleReminderRE = regexp.MustCompile(`(?s)<system-reminder>.*</system-reminder>`)

func oracleTag(uuid, place string) string { return "@@" + uuid + "/" + place + "@@" }

// blank reports whether s is empty or only whitespace: such strings are
// left as they are.
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// tagLine returns line with its entry's free text replaced by tags; a line
// that is not a JSON object with a uuid comes back unchanged.
func tagLine(line []byte) []byte {
	root, err := parseSpans(line)
	if err != nil || root.kind != '{' {
		return line
	}
	uuid, _ := root.get("uuid").str(line)
	if uuid == "" {
		return line
	}
	type edit struct {
		start, end int
		repl       string
	}
	var edits []edit
	tag := func(n *jnode, place string) {
		if s, ok := n.str(line); ok && !blank(s) {
			edits = append(edits, edit{n.start, n.end, `"` + oracleTag(uuid, place) + `"`})
		}
	}
	if typ, _ := root.get("type").str(line); typ == "system" {
		tag(root.get("content"), "s")
	}
	content := root.get("message").get("content")
	switch {
	case content == nil:
	case content.kind == '"':
		tag(content, "c")
	case content.kind == '[':
		for i, b := range content.kids {
			switch bt, _ := b.get("type").str(line); bt {
			case "text":
				tag(b.get("text"), fmt.Sprintf("c%d", i))
			case "tool_result":
				rc := b.get("content")
				if rc == nil {
					continue
				}
				if rc.kind == '"' {
					tag(rc, fmt.Sprintf("c%dr", i))
					continue
				}
				for j, rb := range rc.kids {
					if rt, _ := rb.get("type").str(line); rt == "text" {
						tag(rb.get("text"), fmt.Sprintf("c%dr%d", i, j))
					}
				}
			}
		}
	}
	if len(edits) == 0 {
		return line
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out bytes.Buffer
	last := 0
	for _, e := range edits {
		out.Write(line[last:e.start])
		out.WriteString(e.repl)
		last = e.end
	}
	out.Write(line[last:])
	return out.Bytes()
}

// tagTranscript returns raw with every line tagged (tagLine); line ends and
// a missing final newline are kept.
func tagTranscript(raw []byte) []byte {
	var out bytes.Buffer
	for len(raw) > 0 {
		line := raw
		rest := []byte(nil)
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, rest = raw[:i], raw[i:]
		}
		out.Write(tagLine(line))
		if rest == nil {
			break
		}
		out.WriteByte('\n')
		raw = rest[1:]
	}
	return out.Bytes()
}

// CopyTagged copies the folder src to dst (created), tagging every .jsonl
// file (tagTranscript) and copying other files as they are. Files and
// folders keep their mtimes: clients order sessions by them.
func CopyTagged(src, dst string) error {
	type dirTime struct {
		path string
		mod  time.Time
	}
	var dirs []dirTime
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, dirTime{to, fi.ModTime()})
			return os.MkdirAll(to, 0o755)
		case !fi.Mode().IsRegular():
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".jsonl") {
			raw = tagTranscript(raw)
		}
		if err := os.WriteFile(to, raw, 0o644); err != nil {
			return err
		}
		return os.Chtimes(to, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Chtimes(dirs[i].path, dirs[i].mod, dirs[i].mod)
	}
	return nil
}

// --- the entries of a tagged folder ----------------------------------------

// OEntry is one chain entry of a transcript, as the oracle sees it.
type OEntry struct {
	File      string // path relative to the project folder
	Line      int    // 1-based
	Type      string
	UUID      string
	Parent    string
	Sidechain bool
	Meta      bool
	Timestamp string
	Version   string
	MsgID     string // message.id of an assistant entry
	Subtype   string // of a system entry
	// Synthetic marks the client's own placeholders (model "<synthetic>",
	// isApiErrorMessage), which clients do not send back.
	Synthetic bool
	Atoms     []OAtom
}

// OAtom is one piece of an entry's message a request can show: a tagged
// text, a tool_use or tool_result (by tool id), or a thinking block.
type OAtom struct {
	Kind string // "text", "tool_use", "tool_result", "thinking"
	Key  string // the tag's place for a text; the tool id for tool_use and tool_result
	// Tagged is set on a tool_result whose content holds a tag: its real
	// content can be told from one the client or a repair made up.
	Tagged bool
}

func (a OAtom) String() string {
	switch a.Kind {
	case "tool_use":
		return "use:" + shortID(a.Key)
	case "tool_result":
		if a.Tagged {
			return "result:" + shortID(a.Key)
		}
		return "result(untagged):" + shortID(a.Key)
	case "text":
		return "text:" + a.Key
	}
	return a.Kind
}

func shortID(id string) string {
	if len(id) > 6 {
		return id[len(id)-6:]
	}
	return id
}

// Describe sums up the entry in one line: file:line, type, uuid, atoms.
func (e *OEntry) Describe() string {
	var atoms []string
	for _, a := range e.Atoms {
		atoms = append(atoms, a.String())
	}
	kind := e.Type
	if e.Subtype != "" {
		kind += "/" + e.Subtype
	}
	if e.Meta {
		kind += "(meta)"
	}
	if e.Sidechain {
		kind += "(side)"
	}
	return fmt.Sprintf("%s:%d %s %s %s", e.File, e.Line, kind, shortUUID(e.UUID), strings.Join(atoms, " "))
}

func shortUUID(u string) string {
	if len(u) > 8 {
		return u[:8]
	}
	return u
}

// OIndex holds every chain entry of the transcripts of a project folder.
type OIndex struct {
	Dir     string
	ByUUID  map[string]*OEntry   // the first entry written with each uuid
	Uses    map[string][]*OEntry // tool_use id → the entries holding it
	Results map[string][]*OEntry // tool_use id → the entries answering it
	Files   map[string][]*OEntry // file → its entries in order
}

// IndexFolder reads every .jsonl file under dir (a tagged copy).
func IndexFolder(dir string) (*OIndex, error) {
	ix := &OIndex{Dir: dir, ByUUID: map[string]*OEntry{}, Uses: map[string][]*OEntry{}, Results: map[string][]*OEntry{}, Files: map[string][]*OEntry{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		for i, line := range bytes.Split(raw, []byte("\n")) {
			e := indexLine(line)
			if e == nil {
				continue
			}
			e.File, e.Line = rel, i+1
			ix.Files[rel] = append(ix.Files[rel], e)
			if ix.ByUUID[e.UUID] == nil {
				ix.ByUUID[e.UUID] = e
			}
			for _, a := range e.Atoms {
				switch a.Kind {
				case "tool_use":
					ix.Uses[a.Key] = append(ix.Uses[a.Key], e)
				case "tool_result":
					ix.Results[a.Key] = append(ix.Results[a.Key], e)
				}
			}
		}
		return nil
	})
	return ix, err
}

// Prefer makes ByUUID name the entries of the file rel where other files
// (subagent side files, older clients' resume copies) repeat their uuids.
func (ix *OIndex) Prefer(rel string) {
	seen := map[string]bool{}
	for _, e := range ix.Files[rel] {
		if !seen[e.UUID] {
			seen[e.UUID] = true
			ix.ByUUID[e.UUID] = e
		}
	}
}

func indexLine(line []byte) *OEntry {
	var raw struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		UUID      string `json:"uuid"`
		Parent    string `json:"parentUuid"`
		Sidechain bool   `json:"isSidechain"`
		Meta      bool   `json:"isMeta"`
		Timestamp string `json:"timestamp"`
		Version   string `json:"version"`
		APIError  bool   `json:"isApiErrorMessage"`
		Message   struct {
			ID      string          `json:"id"`
			Model   string          `json:"model"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &raw) != nil || raw.UUID == "" {
		return nil
	}
	e := &OEntry{Type: raw.Type, UUID: raw.UUID, Parent: raw.Parent, Sidechain: raw.Sidechain, Meta: raw.Meta,
		Timestamp: raw.Timestamp, Version: raw.Version, MsgID: raw.Message.ID, Subtype: raw.Subtype,
		Synthetic: raw.APIError || raw.Message.Model == "<synthetic>"}
	if raw.Type == "system" {
		var s struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(line, &s) == nil && oracleTagRE.MatchString(s.Content) {
			e.Atoms = append(e.Atoms, OAtom{Kind: "text", Key: "s"})
		}
	}
	var c fakeapi.Content
	if len(raw.Message.Content) == 0 || json.Unmarshal(raw.Message.Content, &c) != nil {
		return e
	}
	for _, b := range c {
		switch b.Type {
		case "text":
			for _, m := range oracleTagRE.FindAllStringSubmatch(b.Text, -1) {
				e.Atoms = append(e.Atoms, OAtom{Kind: "text", Key: m[2]})
			}
		case "tool_use":
			e.Atoms = append(e.Atoms, OAtom{Kind: "tool_use", Key: b.ID})
		case "tool_result":
			e.Atoms = append(e.Atoms, OAtom{Kind: "tool_result", Key: b.ToolUseID, Tagged: oracleTagRE.MatchString(b.ResultText())})
		case "thinking", "redacted_thinking":
			e.Atoms = append(e.Atoms, OAtom{Kind: "thinking"})
		}
	}
	return e
}

// --- what a request sent ----------------------------------------------------

// SentAtom is one piece of a request's messages, mapped back to the entry
// it came from where it can be.
type SentAtom struct {
	Msg  int    // index in the request's messages
	Role string // of that message
	Kind string // text, tool_use, tool_result, thinking, prompt, untagged, other
	UUID string // the entry it came from; "" when none is known
	Key  string // tag place, or tool id
	// Tagged: a tool_result whose content holds its entry's tag.
	Tagged bool
	Text   string // untagged text (clipped), or the type of an "other" block
	Note   string // how the entry was found, when not by a tag
}

func (a SentAtom) String() string {
	var s string
	switch a.Kind {
	case "tool_use":
		s = "use:" + shortID(a.Key)
	case "tool_result":
		s = "result:" + shortID(a.Key)
		if !a.Tagged {
			s = fmt.Sprintf("result(untagged %q):%s", clip(a.Text, 40), shortID(a.Key))
		}
	case "text":
		s = "text:" + a.Key
	case "untagged":
		s = fmt.Sprintf("untagged %q", clip(a.Text, 60))
	case "other":
		s = a.Text
	default:
		s = a.Kind
	}
	if a.UUID != "" {
		s = shortUUID(a.UUID) + ":" + s
	}
	if a.Note != "" {
		s += " (" + a.Note + ")"
	}
	return s
}

// MapRequest maps the messages of a request back to the entries of ix.
// prompt is the resume's own prompt.
func MapRequest(ix *OIndex, msgs []fakeapi.Message, prompt string) []SentAtom {
	var atoms []SentAtom
	for mi, m := range msgs {
		start := len(atoms)
		for _, b := range m.Content {
			a := SentAtom{Msg: mi, Role: m.Role}
			switch b.Type {
			case "text":
				tags := oracleTagRE.FindAllStringSubmatch(b.Text, -1)
				for _, t := range tags {
					x := a
					x.Kind, x.UUID, x.Key = "text", t[1], t[2]
					atoms = append(atoms, x)
				}
				rest := strings.TrimSpace(oracleReminderRE.ReplaceAllString(oracleTagRE.ReplaceAllString(b.Text, ""), ""))
				switch {
				case rest == "":
				case rest == prompt && len(tags) == 0:
					a.Kind = "prompt"
					atoms = append(atoms, a)
				default:
					a.Kind, a.Text = "untagged", rest
					atoms = append(atoms, a)
				}
				continue
			case "tool_use":
				a.Kind, a.Key = "tool_use", b.ID
				if es := ix.Uses[b.ID]; len(es) > 0 {
					a.UUID = es[0].UUID
					if len(es) > 1 {
						a.Note = fmt.Sprintf("%d entries hold this id", len(es))
					}
				}
			case "tool_result":
				a.Kind, a.Key = "tool_result", b.ToolUseID
				text := b.ResultText()
				if t := oracleTagRE.FindStringSubmatch(text); t != nil {
					a.UUID, a.Tagged = t[1], true
				} else {
					a.Text = text
					// No tag: an entry whose result content is blank, or
					// a result the client (or a repair) made up.
					for _, e := range ix.Results[b.ToolUseID] {
						if !oracleAtom(e, "tool_result", b.ToolUseID).Tagged {
							a.UUID, a.Note = e.UUID, "by tool_use_id"
							break
						}
					}
				}
			case "thinking", "redacted_thinking":
				a.Kind = "thinking"
			default:
				a.Kind, a.Text = "other", b.Type
			}
			atoms = append(atoms, a)
		}
		attributeThinking(ix, atoms[start:])
	}
	return atoms
}

// oracleAtom returns e's atom of kind and key (zero when none).
func oracleAtom(e *OEntry, kind, key string) OAtom {
	for _, a := range e.Atoms {
		if a.Kind == kind && a.Key == key {
			return a
		}
	}
	return OAtom{}
}

// attributeThinking gives the thinking blocks of one message to entries:
// thinking text is filler and signatures are all alike, so a block goes to
// an entry holding a thinking block whose message.id is that of another
// entry of the same message (streamed writes give each block of a reply
// its own entry, all with the reply's message.id).
func attributeThinking(ix *OIndex, atoms []SentAtom) {
	ids := map[string]bool{}
	for _, a := range atoms {
		if e := ix.ByUUID[a.UUID]; e != nil && e.MsgID != "" {
			ids[e.MsgID] = true
		}
	}
	used := map[string]bool{}
	for i := range atoms {
		if atoms[i].Kind != "thinking" {
			continue
		}
		var best *OEntry
		for _, es := range ix.Files {
			for _, e := range es {
				if !ids[e.MsgID] || used[e.UUID] || oracleAtom(e, "thinking", "").Kind == "" {
					continue
				}
				if best == nil || e.Timestamp < best.Timestamp {
					best = e
				}
			}
		}
		if best != nil {
			used[best.UUID] = true
			atoms[i].UUID, atoms[i].Note = best.UUID, "by message.id"
		}
	}
}

// SentUUIDs returns the entries the atoms came from, in the order they
// were first sent.
func SentUUIDs(atoms []SentAtom) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range atoms {
		if a.UUID != "" && !seen[a.UUID] {
			seen[a.UUID] = true
			out = append(out, a.UUID)
		}
	}
	return out
}

// DumpRequest lists the request's messages, one line each, with the
// entries each piece came from.
func DumpRequest(ix *OIndex, atoms []SentAtom) string {
	var b strings.Builder
	msg := -1
	for _, a := range atoms {
		if a.Msg != msg {
			if msg >= 0 {
				b.WriteByte('\n')
			}
			msg = a.Msg
			fmt.Fprintf(&b, "  %3d %-9s", a.Msg, a.Role)
		}
		b.WriteString(" [")
		if e := ix.ByUUID[a.UUID]; e != nil {
			fmt.Fprintf(&b, "L%d ", e.Line)
		}
		b.WriteString(a.String())
		b.WriteString("]")
	}
	return b.String()
}

// --- resuming a transcript --------------------------------------------------

// OracleResume is one resume of a transcript and what the client sent.
type OracleResume struct {
	Version string
	ID      string
	Dir     string // the working folder the client ran in
	Project string // the tagged project folder the client read
	Index   *OIndex
	Res     Result
	Main    *fakeapi.Request // the first request carrying the history and the prompt
	Atoms   []SentAtom       // Main's messages, mapped back
}

// oraclePrompt is the prompt of every oracle resume.
const oraclePrompt = "ORACLE"

// PlaceTagged puts a tagged copy of the project folder src into a new
// HOME, under the project folder of a new working folder, and returns
// that HOME, the working folder and the copy. prepare, when not nil, runs
// on the copy before anything reads it (a repair, say).
func PlaceTagged(t testing.TB, src string) (home, dir, proj string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "home")
	dir = filepath.Join(home, "work", "oracle")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if home, err = filepath.EvalSymlinks(home); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(home, "work", "oracle")
	proj = filepath.Join(home, ".claude", "projects", ProjectDirName(dir))
	if err := CopyTagged(src, proj); err != nil {
		t.Fatal(err)
	}
	return home, dir, proj
}

// ResumeTagged runs version with -r id -p ORACLE in dir (whose project
// folder proj holds a tagged copy) and maps what it sent.
func ResumeTagged(t testing.TB, version, home, dir, proj, id string) *OracleResume {
	t.Helper()
	ix, err := IndexFolder(proj)
	if err != nil {
		t.Fatal(err)
	}
	ix.Prefer(id + ".jsonl")
	env := NewEnv(t, version, home)
	r := &OracleResume{Version: version, ID: id, Dir: dir, Project: proj, Index: ix}
	r.Res = env.Run(dir, "-r", id, "-p", oraclePrompt)
	for i := range r.Res.Requests {
		q := &r.Res.Requests[i]
		if !q.IsMessages() {
			continue
		}
		if q.Messages == nil {
			decodeRefused(q)
		}
		if r.Main == nil && len(q.Tools) > 0 && strings.Contains(lastUserText(q.Messages), oraclePrompt) {
			r.Main = q
		}
	}
	if r.Main != nil {
		r.Atoms = MapRequest(ix, r.Main.Messages, oraclePrompt)
	}
	return r
}

// Summary sums up the resume in one line.
func (r *OracleResume) Summary() string {
	if r.Main == nil {
		return fmt.Sprintf("claude %s: exit %d, no request with the history", r.Version, r.Res.ExitCode)
	}
	return fmt.Sprintf("claude %s: exit %d, status %d (%s), %d messages, %d entries", r.Version, r.Res.ExitCode,
		r.Main.Status, clip(r.Main.Reply, 120), len(r.Main.Messages), len(SentUUIDs(r.Atoms)))
}

// --- which client, which files ----------------------------------------------

// OracleVersions returns the versions versions.txt pins for the oracle
// only, on lines "# oracle: V V ..." (and, with all, "# oracle-all: ...").
// They are comments so that the scenario tests, which run every version
// versions.txt lists, leave them alone; TestOracle installs them itself.
func OracleVersions(all bool) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "e2e", "versions.txt"))
	if err != nil {
		return nil, fmt.Errorf("e2e: read versions: %w", err)
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		for _, key := range []string{"# oracle:", "# oracle-all:"} {
			if rest, ok := strings.CutPrefix(line, key); ok && (all || key == "# oracle:") {
				out = append(out, strings.Fields(rest)...)
			}
		}
	}
	return out, nil
}

// versionNumber orders versions for NearestVersion: major, minor and patch
// as one number.
func versionNumber(v string) int {
	n := 0
	parts := strings.SplitN(v, ".", 3)
	for i := 0; i < 3; i++ {
		x := 0
		if i < len(parts) {
			fmt.Sscanf(parts[i], "%d", &x)
		}
		n = n*10000 + x
	}
	return n
}

// NearestVersion returns the version of candidates nearest to v (the older
// one on a tie).
func NearestVersion(v string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := versionNumber(c) - versionNumber(v)
		if d < 0 {
			d = -d
		}
		if best == "" || d < bestD || (d == bestD && versionNumber(c) < versionNumber(best)) {
			best, bestD = c, d
		}
	}
	return best
}

var uuidName = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$`)

// MainTranscripts lists the main transcripts of a store (.jsonl files right
// in a project folder, not agent-*), with the ones whose name is not a
// session id apart: "claude -r" takes only UUIDs.
func MainTranscripts(claude string) (ids, notUUID []string, err error) {
	files, err := filepath.Glob(filepath.Join(claude, "projects", "*", "*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	for _, f := range files {
		base := filepath.Base(f)
		switch {
		case strings.HasPrefix(base, "agent-"):
		case uuidName.MatchString(base):
			ids = append(ids, f)
		default:
			notUUID = append(notUUID, f)
		}
	}
	return ids, notUUID, nil
}

// --- comparing the model with what the client sent --------------------------

// ModelView is cfix's model of a resume, as the comparison needs it.
type ModelView struct {
	Version, Loader string
	UUIDs           []string
	Dropped         []string
	Cut, Cycle      bool
}

// Expected returns the pieces the model says the client sends for entry e:
// its atoms without the tool_use blocks the client drops.
func (m ModelView) expected(e *OEntry) []OAtom {
	var out []OAtom
	for _, a := range e.Atoms {
		if a.Kind == "tool_use" && contains(m.Dropped, a.Key) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// required reports whether the client must send entry e when it loads it:
// a user or assistant entry with a text, tool_use or tool_result left. A
// thinking-only entry may go (clients strip thinking of other models'
// replies, and a trailing thinking-only reply), a system entry's content
// goes as user text only in some versions, other types are never sent.
func (m ModelView) required(e *OEntry) bool {
	if e.Type != "user" && e.Type != "assistant" || e.Synthetic {
		return false
	}
	for _, a := range m.expected(e) {
		if a.Kind != "thinking" {
			return true
		}
	}
	return false
}

// CompareModel compares the model with what the client sent and returns
// one line per disagreement (none when they match message for message),
// and notes on what the client normalized.
//
// The model lists entries in load order, before the client's own API
// normalization; the client sends API messages. So the model's entries
// are grouped as the clients group them (groupEntries) and the groups are
// compared as sets, in order: the order of blocks inside one message is
// the client's business. Entries the model loads but the client may leave
// out are compared only when the client sent them: thinking-only replies
// (clients strip other models' thinking), API error placeholders, system
// entries, and entries whose only call the model has the client drop.
func CompareModel(ix *OIndex, m ModelView, atoms []SentAtom) (diffs, notes []string) {
	inModel := map[string]bool{}
	for _, u := range m.UUIDs {
		inModel[u] = true
		if ix.ByUUID[u] == nil {
			diffs = append(diffs, fmt.Sprintf("the model loads %s, which no line of the folder holds", u))
		}
	}
	isSent := map[string]bool{}
	for _, u := range SentUUIDs(atoms) {
		isSent[u] = true
		if !inModel[u] {
			diffs = append(diffs, "client only: "+ix.describe(u))
		}
	}
	var want []*OEntry
	for _, u := range m.UUIDs {
		e := ix.ByUUID[u]
		switch {
		case e == nil:
		case isSent[u]:
			want = append(want, e)
		case m.required(e):
			diffs = append(diffs, "model only: "+e.Describe())
		case e.Synthetic:
			notes = append(notes, "not sent (the client's own placeholder): "+e.Describe())
		case e.Type == "system" && len(e.Atoms) > 0:
			notes = append(notes, "not sent (system entry): "+e.Describe())
		case e.Type == "assistant" && len(m.expected(e)) > 0:
			notes = append(notes, "not sent (thinking stripped): "+e.Describe())
		case e.Type == "assistant" && len(e.Atoms) > 0:
			notes = append(notes, "not sent (its calls dropped, as the model says): "+e.Describe())
		}
	}
	// Message by message.
	wantG := groupEntries(want)
	gotG := sentGroups(atoms, isSent, inModel)
	key := func(g []string) string {
		c := slices.Clone(g)
		sort.Strings(c)
		return strings.Join(c, " ")
	}
	var wk, gk []string
	for _, g := range wantG {
		wk = append(wk, key(g))
	}
	for _, g := range gotG {
		gk = append(gk, key(g))
	}
	for _, d := range diffStrings(wk, gk) {
		var parts []string
		for _, u := range strings.Fields(d.s) {
			parts = append(parts, ix.describe(u))
		}
		switch d.op {
		case '-':
			diffs = append(diffs, "model's message, not sent as such: {"+strings.Join(parts, "; ")+"}")
		case '+':
			diffs = append(diffs, "client's message, not in the model as such: {"+strings.Join(parts, "; ")+"}")
		}
	}
	// Piece by piece, for the entries both hold.
	got := map[string][]SentAtom{}
	for _, a := range atoms {
		if a.UUID != "" {
			got[a.UUID] = append(got[a.UUID], a)
		}
	}
	for _, e := range want {
		exp := m.expected(e)
		for _, a := range exp {
			if a.Kind != "thinking" && !hasAtom(got[e.UUID], a) {
				diffs = append(diffs, fmt.Sprintf("model sends %s of %s; the client did not", a, e.Describe()))
			}
		}
		for _, a := range got[e.UUID] {
			if a.Kind == "thinking" || hasOAtom(exp, a) {
				continue
			}
			why := ""
			if a.Kind == "tool_use" && contains(m.Dropped, a.Key) {
				why = " (the model has the client drop it)"
			}
			diffs = append(diffs, fmt.Sprintf("client sent %s of %s%s", a, e.Describe(), why))
		}
	}
	for _, a := range atoms {
		switch {
		case a.UUID == "" && a.Kind == "tool_result":
			notes = append(notes, fmt.Sprintf("client-made result for %s: %q", a.Key, clip(a.Text, 60)))
		case a.UUID == "" && a.Kind == "tool_use":
			diffs = append(diffs, "client sent a tool_use no entry holds: "+a.Key)
		case a.Kind == "untagged":
			notes = append(notes, fmt.Sprintf("client-made %s text: %q", a.Role, clip(a.Text, 60)))
		}
	}
	return diffs, notes
}

func (ix *OIndex) describe(u string) string {
	if e := ix.ByUUID[u]; e != nil {
		return e.Describe()
	}
	return u
}

// groupEntries groups entries, in load order, into API messages the way
// the clients do (normalizeMessagesForAPI): consecutive user-side entries
// (user, and system entries some versions send as user text) make one
// message; an assistant entry joins an earlier assistant message with the
// same message.id when only user messages holding tool results lie between
// them (a streamed reply whose parallel calls were answered one by one,
// meta texts and attachments riding along, as wild 8791b9e8 shows), and
// those then lead the next user message.
func groupEntries(es []*OEntry) [][]string {
	type group struct {
		assistant bool
		msgID     string
		uuids     []string
		results   bool // a user message holding a tool result
	}
	var out []*group
	for _, e := range es {
		if e.Type == "assistant" {
			merged := false
			for k := len(out) - 1; k >= 0; k-- {
				g := out[k]
				if g.assistant {
					if e.MsgID != "" && g.msgID == e.MsgID {
						g.uuids = append(g.uuids, e.UUID)
						merged = true
					}
					break
				}
				if !g.results {
					break
				}
			}
			if !merged {
				out = append(out, &group{assistant: true, msgID: e.MsgID, uuids: []string{e.UUID}})
			}
			continue
		}
		results := slices.ContainsFunc(e.Atoms, func(a OAtom) bool { return a.Kind == "tool_result" })
		if n := len(out); n > 0 && !out[n-1].assistant {
			out[n-1].uuids = append(out[n-1].uuids, e.UUID)
			out[n-1].results = out[n-1].results || results
			continue
		}
		out = append(out, &group{uuids: []string{e.UUID}, results: results})
	}
	var gs [][]string
	for _, g := range out {
		gs = append(gs, g.uuids)
	}
	return gs
}

// sentGroups returns, per API message of the request, the entries of the
// model it holds (in the order first sent; messages holding none left out).
func sentGroups(atoms []SentAtom, isSent, inModel map[string]bool) [][]string {
	var out [][]string
	msg := -1
	seen := map[string]bool{}
	for _, a := range atoms {
		if a.UUID == "" || !inModel[a.UUID] || seen[a.UUID] {
			continue
		}
		seen[a.UUID] = true
		if a.Msg != msg || len(out) == 0 {
			out = append(out, nil)
			msg = a.Msg
		}
		out[len(out)-1] = append(out[len(out)-1], a.UUID)
	}
	return out
}

func hasAtom(got []SentAtom, a OAtom) bool {
	for _, g := range got {
		if g.Kind == a.Kind && g.Key == a.Key {
			return true
		}
	}
	return false
}

func hasOAtom(exp []OAtom, a SentAtom) bool {
	for _, e := range exp {
		if e.Kind == a.Kind && e.Key == a.Key {
			return true
		}
	}
	return false
}

type diffOp struct {
	op byte // '=', '-' (only in a), '+' (only in b)
	s  string
}

// diffStrings is a longest-common-subsequence diff of a and b.
func diffStrings(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, diffOp{'=', a[i]})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, diffOp{'+', b[j]})
			j++
		default:
			out = append(out, diffOp{'-', a[i]})
			i++
		}
	}
	return out
}

// ChainCut tells, from what the client sent, whether the history it loaded
// was cut short by damage: the walk back through parentUuid from the first
// entry of the file it sent reaches a parent no main transcript holds
// (ix.mainEntry), or goes round a cycle, before a root. A client that sent nothing of a file holding
// messages lost all of it. why says what was found.
func ChainCut(ix *OIndex, rel string, atoms []SentAtom) (cut bool, why string) {
	var first *OEntry
	for _, u := range SentUUIDs(atoms) {
		if e := ix.ByUUID[u]; e != nil && e.File == rel {
			first = e
			break
		}
	}
	if first == nil {
		has, in := map[string]bool{}, false
		for _, e := range ix.Files[rel] {
			has[e.UUID] = true
			in = in || (e.Type == "user" || e.Type == "assistant") && !e.Sidechain
		}
		if !in {
			return false, "the file holds no message"
		}
		// Nothing sent: the walk stopped at once. At a link Claude Code
		// wrote into another file, that is no damage of the file.
		for _, e := range ix.Files[rel] {
			if e.Parent == "" || has[e.Parent] {
				continue
			}
			if o := ix.anyEntry(e.Parent); o == nil {
				return true, fmt.Sprintf("no entry of the file sent; %s:%d names parent %s, which no line holds", e.File, e.Line, e.Parent)
			}
		}
		return false, "no entry of the file sent: the walk stops at a link Claude Code wrote into another file (not damage)"
	}
	seen := map[string]bool{}
	var skipped []string
	for e := first; ; {
		if seen[e.UUID] {
			return true, fmt.Sprintf("a parentUuid cycle through %s", shortUUID(e.UUID))
		}
		seen[e.UUID] = true
		if e.Parent == "" {
			if len(skipped) > 0 {
				return false, fmt.Sprintf("reached a root, passing messages the client did not send: %s", strings.Join(skipped, ", "))
			}
			return false, "reached a root"
		}
		p := ix.mainEntry(e.Parent, rel)
		if p == nil {
			if o := ix.anyEntry(e.Parent); o != nil {
				// Claude Code wrote the link itself (progress pointing
				// into a prompt-suggestion side file): history lost, but
				// not damage of the file; cfix warns (parent-elsewhere).
				return false, fmt.Sprintf("stopped at %s:%d, whose parent %s is in %s, a file the client does not read (a link Claude Code wrote, not damage)", e.File, e.Line, shortUUID(e.Parent), o.File)
			}
			return true, fmt.Sprintf("%s:%d names parent %s, which no line holds", e.File, e.Line, e.Parent)
		}
		if (p.Type == "user" || p.Type == "assistant") && !p.Sidechain && len(p.Atoms) > 0 {
			skipped = append(skipped, fmt.Sprintf("%s:%d", p.File, p.Line))
		}
		e = p
	}
}

// anyEntry returns the entry uuid of any file of the folder, side runs'
// and subagents' transcripts included, or nil.
func (ix *OIndex) anyEntry(uuid string) *OEntry {
	for _, es := range ix.Files {
		for _, e := range es {
			if e.UUID == uuid {
				return e
			}
		}
	}
	return nil
}

// mainEntry returns the entry uuid of the file rel, else of another main
// transcript of the folder: what a client's walk back can reach. Subagent
// files (agent-*, <id>/subagents/) are not loaded on a resume, even when
// they hold an entry a main transcript names as parent.
func (ix *OIndex) mainEntry(uuid, rel string) *OEntry {
	var other *OEntry
	for f, es := range ix.Files {
		if strings.Contains(f, "/") || strings.HasPrefix(f, "agent-") {
			continue
		}
		for _, e := range es {
			if e.UUID != uuid {
				continue
			}
			if f == rel {
				return e
			}
			other = e
		}
	}
	return other
}

// MissingAfter returns the pieces pre sent that post does not hold, tool
// results compared with their content: a result whose real content (its
// tag) went before must carry it again.
func MissingAfter(pre, post []SentAtom) []string {
	have := map[string]bool{}
	key := func(a SentAtom) string {
		k := a.Kind + " " + a.Key + " " + a.UUID
		if a.Kind == "tool_result" && !a.Tagged {
			k += " untagged"
		}
		return k
	}
	for _, a := range post {
		have[key(a)] = true
	}
	var out []string
	for _, a := range pre {
		switch a.Kind {
		case "text", "tool_use", "tool_result":
		default:
			continue
		}
		if a.UUID == "" || have[key(a)] {
			continue
		}
		out = append(out, a.String())
	}
	return out
}
