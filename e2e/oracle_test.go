package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
	"github.com/cfix-dev/cfix/validate"
)

// The oracle: what a real client sends on resume is the ground truth of
// what it loads. TestOracle resumes main transcripts of the wild stores
// (testdata/wild: skeletons of stores people committed to public repos)
// with the pinned client nearest to the version that wrote them, and
// holds cfix to it:
//
//   - validate.LoadedChain, cfix's model of a resume (the leaf, the chain
//     back from it, the results the loader re-attaches, the calls the
//     client drops), matches what the client sends, message for message,
//     leaving out what the client adds itself (reminders, the new prompt,
//     synthetic "No response requested." turns) and what it normalizes away
//     (thinking blocks it strips, system entries it does not send);
//   - a file has an error finding exactly when the client's request is
//     rejected, or when the history it loaded was cut short by damage (a
//     parent no line holds, a cycle) rather than by a normal fork;
//   - after cfix repair --apply, the request is accepted and holds every
//     message the resume before the repair sent, each tool result with its
//     real content.
//
// By default it takes the main transcripts that cfix validate reports with
// an error, or that cfix repair changes, and those verdicts.json names (an
// earlier cfix reported them; most are false alarms, which the oracle
// confirms or refutes with the client); CFIX_ORACLE_ALL=1 takes every
// main transcript of the wild stores (and installs the extra clients that
// needs). Each resume runs on a tagged copy (see oracle_harness_test.go),
// put under the project folder of a temporary cwd.
//
// What the clients load on "claude -r ID" (measured with TestOracleProbe on
// the wild stores and on small crafted files, versions 1.0.128, 2.0.28,
// 2.0.77, 2.1.29, 2.1.39, 2.1.73, 2.1.87, 2.1.111, 2.1.136, 2.1.205,
// 2.1.330; "message" means a user or assistant entry):
//
//   - The leaf. 1.0.128 to 2.1.87 start from the entry with the latest
//     timestamp among user, assistant, system and attachment entries, and
//     walk back from it (system and attachment entries are walked through,
//     not sent). Progress entries are candidates only in 2.1.29 to 2.1.73;
//     sidechain entries only in 1.0.128, which then sends the sidechain
//     entry with the history. 2.1.111 starts from the entry written last
//     (the same types, never progress or sidechain; timestamps ignored).
//     2.1.136 and later start from the leafUuid of the last last-prompt
//     entry when it names an entry (even one with children: what follows
//     it is not sent), else as 2.1.111. A summary's leafUuid never counts.
//   - Progress entries. 1.0.128 and 2.0.x do not load them: a walk stops
//     at one, so a 2.1.x file loads nothing or a tail, and a tool_result
//     hung under a progress entry goes without its tool_use (400). Every
//     2.1.x walks through them.
//   - Parallel results beside the chain (a call's result hung under the
//     assistant entry of its own tool_use, the next call of the same
//     message.id continuing the chain): 1.0.128 to 2.1.73 drop the call and
//     its result; 2.1.87 and later put them back
//     (recoverOrphanedParallelToolResults), after the chain's own calls up
//     to 2.1.205, in file order in 2.1.330. All versions merge the
//     assistant entries of one message.id into one API message, results
//     following.
//   - A tool_use without tool_result is never sent bare and never gets a
//     400: up to 2.1.205 the client drops it (the whole reply when it held
//     nothing else); 2.1.330 sends a call left unanswered at the end of the
//     file with a made-up result ("[Tool call interrupted ...]"); 2.1.39
//     and later send a parallel call whose sibling was answered with a
//     made-up "[Tool result missing due to internal error]". A tool_result
//     whose tool_use is nowhere: 1.0.128 and 2.0.x send it (400), 2.1.29 to
//     2.1.87 drop it, 2.1.111 and later send "(no content)" instead.
//   - Thinking with an empty signature is sent as written by every
//     version, whatever the model (the real API rejects it). 2.1.205 and
//     2.1.330 leave out signed thinking of non-Claude replies (MiniMax).
//   - A missing parent cuts the walk in every version up to 2.1.87. 2.1.111
//     and later link the orphan to the message written just before it when
//     that one is less than about 5 s older (4.5 s linked, 5 s not): wild
//     60ede122 and 0c24fece (a progress entry whose parent went only to a
//     prompt-suggestion side file) lose their history in 2.1.29 and keep
//     it in 2.1.111; 6f719b8e (5.4 s) loses it in every version.
//   - A parentUuid cycle hangs 1.0.128, 2.0.x and 2.1.29 (killed, no
//     request); 2.1.73 and 2.1.87 stop at the repeat; 2.1.111 answers "No
//     conversation found" for a file whose every entry is on the cycle, and
//     leaves out the entries of a cycle that is not the whole file; 2.1.136
//     and later break it and link on as for a missing parent.
//   - Entries with isApiErrorMessage (model "<synthetic>") are loaded but
//     never sent; 2.1.73 and later send a system entry's content (local
//     commands) as user text, older ones do not.
//   - file-history-snapshot entries name the user message they belong to
//     by its uuid (messageId; an update names an assistant entry), and a
//     resume writes the whole run of them again at the end of the file
//     (#36583 and #24304 call that a collision). Every version above and
//     2.1.97 sends the same chain with or without them: before or after
//     their message, updates, the run before a later prompt or at the
//     end, a 6 MB file (the byte-level dead-branch pruning; 2.1.88 and
//     2.1.90 too), wild 2.1.81-2.1.97's 5fbb940a. A snapshot line
//     carrying a uuid and parentUuid of its own (no client writes one) is
//     ignored too. See damage.SnapshotsNamingMessages.
//
// Windows-path sessions (cwd C:\..., folder c--Users-...) resume here like
// any other once their project folder is moved under the temporary cwd's:
// the clients do not look at the entries' cwd when they load. Files whose
// name is not a session id (2.1.38-2.1.39's subagent.jsonl, short.jsonl,
// tool_heavy.jsonl) cannot be resumed: "claude -p -r" takes only UUIDs.
// The test logs both.
func TestOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs real Claude Code versions")
	}
	all := os.Getenv("CFIX_ORACLE_ALL") != ""
	extra, err := OracleVersions(all)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := Versions()
	if err != nil {
		t.Fatal(err)
	}
	clients := append(slices.Clone(pinned), extra...)
	if err := Install(clients...); err != nil {
		t.Fatal(err)
	}
	wild := filepath.Join(RepoRoot(), "testdata", "wild")
	stores, err := filepath.Glob(filepath.Join(wild, "*", ".claude"))
	if err != nil || len(stores) == 0 {
		t.Fatalf("no wild store in %s (%v)", wild, err)
	}
	start := time.Now()
	var mu sync.Mutex
	var rows []string
	for _, claude := range stores {
		store := filepath.Base(filepath.Dir(claude))
		files, notUUID, err := MainTranscripts(claude)
		if err != nil {
			t.Fatal(err)
		}
		why := oracleReasons(t, claude)
		for _, f := range verdictFiles(t, wild, store) {
			why[f] = append(why[f], "verdicts.json")
		}
		for _, f := range notUUID {
			if all || len(why[f]) > 0 {
				t.Logf("%s/%s: not resumed: its name is not a session id, and claude -p -r takes only UUIDs (%s)", store, rel(t, claude, f), strings.Join(why[f], ", "))
			}
		}
		for _, f := range files {
			if !all && len(why[f]) == 0 {
				continue
			}
			if !hasMessages(t, f) {
				t.Logf("%s/%s: not resumed: it holds no user or assistant entry (%s)", store, rel(t, claude, f), strings.Join(why[f], ", "))
				continue
			}
			f, reasons := f, why[f]
			name := store + "/" + strings.TrimSuffix(filepath.Base(f), ".jsonl")[:8]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				row := oracleFile(t, claude, f, reasons, clients)
				mu.Lock()
				rows = append(rows, name+" "+row)
				mu.Unlock()
			})
		}
	}
	t.Cleanup(func() {
		sort.Strings(rows)
		t.Logf("oracle: %d transcripts in %v\n%s", len(rows), time.Since(start).Round(time.Second), strings.Join(rows, "\n"))
	})
}

// oracleReasons returns, per main transcript of the store, why the oracle
// takes it: its error findings, and "repair" when cfix repair changes it.
func oracleReasons(t *testing.T, claude string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, f := range ValidateStore(t, claude).Errors() {
		if !slices.Contains(out[f.Path], f.Code) {
			out[f.Path] = append(out[f.Path], f.Code)
		}
	}
	r := RunCfix(t, t.TempDir(), "repair", "--root", claude, "--json")
	var plan struct {
		Changes []repairChange `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &plan); err != nil || (r.ExitCode != 0 && r.ExitCode != 3) {
		t.Fatalf("repair dry run (%v): %s", err, r)
	}
	for _, c := range plan.Changes {
		if c.Action == "rewrite" {
			out[c.Path] = append(out[c.Path], "repair")
		}
	}
	return out
}

// hasMessages reports whether the transcript at path holds a user or
// assistant entry outside sidechains: something a resume can load.
func hasMessages(t *testing.T, path string) bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var e struct {
			Type      string `json:"type"`
			Sidechain bool   `json:"isSidechain"`
		}
		if json.Unmarshal(line, &e) == nil && (e.Type == "user" || e.Type == "assistant") && !e.Sidechain {
			return true
		}
	}
	return false
}

// verdictFiles returns the main transcripts of store that
// testdata/wild/verdicts.json names.
func verdictFiles(t *testing.T, wild, store string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(wild, "verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct{ Store, File string }
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatalf("verdicts.json: %v", err)
	}
	var out []string
	for _, v := range vs {
		if v.Store != store || strings.Contains(v.File, "/") {
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(wild, store, ".claude", "projects", "*", v.File))
		for _, m := range matches {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// oracleFile runs the oracle on one transcript and returns a summary row.
func oracleFile(t *testing.T, claude, path string, reasons, clients []string) string {
	src := filepath.Dir(path)
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	rel := filepath.Base(path)

	// The resume before the repair.
	home, dir, proj := PlaceTagged(t, src)
	model, err := validate.LoadedChain(filepath.Join(proj, rel))
	if err != nil {
		t.Fatalf("validate.LoadedChain: %v", err)
	}
	mv := ModelView{Version: model.Version, Loader: model.Loader, UUIDs: model.UUIDs, Dropped: model.DroppedToolUses, Cut: model.Cut, Cycle: model.Cycle}
	client := NearestVersion(mv.Version, clients)
	errs := fileErrors(t, filepath.Join(home, ".claude"), filepath.Join(proj, rel), client)
	pre := ResumeTagged(t, client, home, dir, proj, id)
	t.Logf("written by %s, resumed by claude %s; cfix loader model %q; reasons %v; errors %v\nbefore repair: %s\n%s",
		mv.Version, client, mv.Loader, reasons, errs, pre.Summary(), DumpRequest(pre.Index, pre.Atoms))
	if pre.Main == nil {
		t.Fatalf("the resume sent no request with the history:\n%s", pre.Res)
	}

	// 1. The model against what the client sent.
	diffs, notes := CompareModel(pre.Index, mv, pre.Atoms)
	if len(notes) > 0 {
		t.Logf("client normalization (not compared):\n  %s", strings.Join(notes, "\n  "))
	}
	switch {
	case len(diffs) > 0 && model.Foreign && toolIDsRepeat(t, filepath.Join(proj, rel)):
		// Kimi-style ids (functions.Read:0) restart in each message: the
		// tagging, which tells entries apart by their tool ids, cannot.
		t.Logf("tool ids repeat in this file of another provider's session: the comparison by ids is not made (%d diffs)", len(diffs))
	case len(diffs) > 0:
		t.Errorf("validate.LoadedChain (loader %q, for %s) disagrees with what claude %s sent:\n  %s", mv.Loader, mv.Version, client, strings.Join(diffs, "\n  "))
	}

	// 2. An error finding exactly when the request is rejected or the
	// history was cut by damage. A session whose replies came from another
	// provider talks to that provider's API, which the fake does not
	// model: what the fake rejects (Kimi's tool ids) is no error there.
	rejected := pre.Main.Status != 200 || unsignedThinking(pre.Main.Messages)
	cut, why := ChainCut(pre.Index, rel, pre.Atoms)
	if model.Foreign {
		t.Logf("another provider's session: the fake API's status %d is not its API's", pre.Main.Status)
		rejected = false
	}
	if (len(errs) > 0) != (rejected || cut) {
		t.Errorf("cfix validate reports %v, but the request got %d (unsigned thinking sent: %v) and the loaded history %s (cut by damage: %v)", errs, pre.Main.Status, unsignedThinking(pre.Main.Messages), why, cut)
	}

	// 3. After repair: accepted, and everything sent before is sent again.
	home2, dir2, proj2 := PlaceTagged(t, src)
	before, _ := os.ReadFile(filepath.Join(proj2, rel))
	ageStore(t, filepath.Join(home2, ".claude"), 10*time.Minute)
	if r := RunCfix(t, t.TempDir(), "repair", "--root", filepath.Join(home2, ".claude"), "--client", client, "--apply", "--yes"); r.ExitCode != 0 {
		t.Fatalf("repair --apply: %s", r)
	}
	after, _ := os.ReadFile(filepath.Join(proj2, rel))
	repaired := !bytes.Equal(before, after)
	post := ResumeTagged(t, client, home2, dir2, proj2, id)
	t.Logf("after repair (file changed: %v): %s\n%s", repaired, post.Summary(), DumpRequest(post.Index, post.Atoms))
	if post.Main == nil || post.Res.ExitCode != 0 && !model.Foreign {
		// Another provider's session ends with the fake API's 400 (Kimi's
		// tool ids), which its own API does not give.
		t.Errorf("the resume after repair failed:\n%s", post.Res)
	} else {
		for _, q := range post.Res.Requests {
			if q.Status != 200 && !model.Foreign {
				t.Errorf("after repair: request %d %s answered %d %s", q.N, q.URL, q.Status, q.Reply)
			}
		}
		if unsignedThinking(post.Main.Messages) && !model.Foreign {
			t.Errorf("after repair the request still carries a thinking block with an empty signature, which the real API rejects")
		}
		if missing := MissingAfter(pre.Atoms, post.Atoms); len(missing) > 0 {
			t.Errorf("after repair the request lacks %d piece(s) the resume before sent: %s", len(missing), strings.Join(missing, ", "))
		}
	}
	status := "none"
	if pre.Main != nil {
		status = fmt.Sprint(pre.Main.Status)
	}
	return fmt.Sprintf("writer %s client %s: %d entries sent, status %s, cut %v, errors %v, %d model diffs; after repair %s",
		mv.Version, client, len(SentUUIDs(pre.Atoms)), status, cut, errs, len(diffs), post.Summary())
}

// unsignedThinking reports whether msgs hold a thinking block with an
// empty signature: every client sends those as written, and the real API
// rejects them (the fake does not check signatures).
func unsignedThinking(msgs []fakeapi.Message) bool {
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == "thinking" && b.Signature == "" {
				return true
			}
		}
	}
	return false
}

// fileErrors returns the codes of the error findings cfix validate reports
// on the file path of the store claude, judged as client resumes it.
func fileErrors(t *testing.T, claude, path, client string) []string {
	t.Helper()
	var out []string
	for _, f := range ValidateStore(t, claude, "--client", client).Errors() {
		if f.Path == path && !slices.Contains(out, f.Code) {
			out = append(out, f.Code)
		}
	}
	return out
}

// TestOracleProbe resumes the transcripts named in $CFIX_ORACLE_PROBE
// ("path/to/<id>.jsonl@2.1.29,2.1.205;...") with each version and logs
// what the client sent, mapped back to the entries: the tool the loader
// facts above were measured with. Skipped when the variable is unset.
// CFIX_ORACLE_OUT=DIR keeps each request body; CFIX_ORACLE_VERBOSE=1 logs
// every run.
func TestOracleProbe(t *testing.T) {
	spec := os.Getenv("CFIX_ORACLE_PROBE")
	if spec == "" {
		t.Skip("CFIX_ORACLE_PROBE not set")
	}
	for _, item := range strings.Split(spec, ";") {
		path, versions, _ := strings.Cut(strings.TrimSpace(item), "@")
		abs, err := filepath.Abs(path)
		if err != nil {
			t.Fatal(err)
		}
		id := strings.TrimSuffix(filepath.Base(abs), ".jsonl")
		for _, v := range strings.Split(versions, ",") {
			t.Run(id[:min(8, len(id))]+"@"+v, func(t *testing.T) {
				home, dir, proj := PlaceTagged(t, filepath.Dir(abs))
				r := ResumeTagged(t, v, home, dir, proj, id)
				t.Logf("%s\n%s", r.Summary(), DumpRequest(r.Index, r.Atoms))
				if r.Main == nil || os.Getenv("CFIX_ORACLE_VERBOSE") != "" {
					t.Logf("%s", r.Res)
				}
				if out := os.Getenv("CFIX_ORACLE_OUT"); out != "" && r.Main != nil {
					os.MkdirAll(out, 0o755)
					os.WriteFile(filepath.Join(out, id+"@"+v+".json"), r.Main.Body, 0o644)
				}
			})
		}
	}
}

// The oracle's own parts, on small hand-made transcripts: no Claude Code
// needed (they run with -short too).

const oracleTranscript = `{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"t1","message":{"role":"user","content":"first prompt"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"t2","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":""},{"type":"text","text":" "},{"type":"text","text":"answer \"quoted\""}]}}
{"type":"assistant","uuid":"a2","parentUuid":"a1","timestamp":"t3","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"assistant","uuid":"a3","parentUuid":"a2","timestamp":"t4","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","uuid":"r1","parentUuid":"a2","timestamp":"t5","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"out"}]}}
{"type":"user","uuid":"r2","parentUuid":"a3","timestamp":"t6","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"out2"},{"type":"image"}]}]}}
{"type":"system","uuid":"s1","parentUuid":"r2","subtype":"local_command","content":"ran /cost","timestamp":"t7"}
{"type":"user","uuid":"u2","parentUuid":"gone","timestamp":"t8","message":{"role":"user","content":[{"type":"text","text":"  "}]}}
not json {"uuid":"x"}
`

func TestOracleTagging(t *testing.T) {
	got := string(tagTranscript([]byte(oracleTranscript)))
	for _, want := range []string{
		`"content":"@@u1/c@@"`,
		`{"type":"thinking","thinking":"hmm","signature":""},{"type":"text","text":" "},{"type":"text","text":"@@a1/c2@@"}`,
		`"content":"@@r1/c0r@@"`,
		`"content":[{"type":"text","text":"@@r2/c0r0@@"},{"type":"image"}]`,
		`"content":"@@s1/s@@"`,
		`"content":[{"type":"text","text":"  "}]`,
		"\nnot json {\"uuid\":\"x\"}\n",
		`"input":{"command":"ls"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tagged transcript lacks %s:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != strings.Count(oracleTranscript, "\n") {
		t.Errorf("%d lines, want %d", n, strings.Count(oracleTranscript, "\n"))
	}
	if got := string(tagTranscript([]byte("{\"uuid\":\"u\",\"message\":{\"content\":\"x\"}}"))); got != `{"uuid":"u","message":{"content":"@@u/c@@"}}` {
		t.Errorf("no final newline: %s", got)
	}
}

// oracleIndex indexes the tagged oracleTranscript.
func oracleIndex(t *testing.T) *OIndex {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), tagTranscript([]byte(oracleTranscript)), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := IndexFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix.Prefer("s.jsonl")
	return ix
}

func TestOracleMapping(t *testing.T) {
	ix := oracleIndex(t)
	var msgs []fakeapi.Message
	raw := `[
	 {"role":"user","content":[{"type":"text","text":"<system-reminder>x <system-reminder>y</system-reminder> z</system-reminder>"},{"type":"text","text":"@@u1/c@@"}]},
	 {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":""},{"type":"text","text":"@@a1/c2@@"},{"type":"tool_use","id":"t1"},{"type":"tool_use","id":"t2"}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"@@r1/c0r@@"},{"type":"tool_result","tool_use_id":"t2","content":"made up"},{"type":"text","text":"@@s1/s@@"},{"type":"text","text":"ORACLE"}]},
	 {"role":"assistant","content":"No response requested."}
	]`
	if err := json.Unmarshal([]byte(raw), &msgs); err != nil {
		t.Fatal(err)
	}
	atoms := MapRequest(ix, msgs, oraclePrompt)
	if got, want := SentUUIDs(atoms), []string{"u1", "a1", "a2", "a3", "r1", "s1"}; !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q\n%s", got, want, DumpRequest(ix, atoms))
	}
	var kinds []string
	for _, a := range atoms {
		kinds = append(kinds, a.String())
	}
	for _, want := range []string{"a1:thinking (by message.id)", `result(untagged "made up"):t2`, "prompt", `untagged "No response requested."`} {
		if !slices.Contains(kinds, want) {
			t.Errorf("atoms %q lack %q", kinds, want)
		}
	}

	// The model: everything but r2 (its result went unsent), t2 not
	// dropped. The client sent a made-up result for t2 instead of r2.
	m := ModelView{UUIDs: []string{"u1", "a1", "a2", "a3", "r1", "r2", "s1"}}
	diffs, notes := CompareModel(ix, m, atoms)
	if len(diffs) != 1 || !strings.Contains(diffs[0], "model only: s.jsonl:6 user r2") {
		t.Errorf("diffs %q, want one: r2 only in the model", diffs)
	}
	if !slices.ContainsFunc(notes, func(s string) bool { return strings.Contains(s, "client-made result for t2") }) {
		t.Errorf("notes %q lack the made-up result", notes)
	}
	// Sent as the model says, in another order inside one message: equal.
	m = ModelView{UUIDs: []string{"u1", "a1", "a2", "r1", "a3", "s1"}}
	atoms = MapRequest(ix, msgs, oraclePrompt)
	if diffs, _ := CompareModel(ix, m, atoms); len(diffs) != 0 {
		t.Errorf("diffs %q, want none", diffs)
	}
	// A call the model drops, sent by the client.
	m.Dropped = []string{"t2"}
	if diffs, _ := CompareModel(ix, m, atoms); len(diffs) != 1 || !strings.Contains(diffs[0], "the model has the client drop it") {
		t.Errorf("diffs %q, want the dropped call", diffs)
	}

	// The chain: u2's parent is gone; from u1 the walk reaches a root.
	if cut, why := ChainCut(ix, "s.jsonl", atoms); cut {
		t.Errorf("cut from u1: %s", why)
	}
	u2 := []SentAtom{{UUID: "u2", Kind: "text"}}
	if cut, why := ChainCut(ix, "s.jsonl", u2); !cut || !strings.Contains(why, "gone") {
		t.Errorf("from u2: cut %v (%s), want the missing parent", cut, why)
	}
	if cut, _ := ChainCut(ix, "s.jsonl", nil); !cut {
		t.Errorf("nothing sent of a file with messages is a cut")
	}
	if miss := MissingAfter(atoms, u2); len(miss) == 0 {
		t.Errorf("MissingAfter found nothing missing")
	}
	if miss := MissingAfter(atoms, atoms); len(miss) != 0 {
		t.Errorf("MissingAfter of the same request: %q", miss)
	}
}

func TestOracleVersions(t *testing.T) {
	cands := []string{"1.0.128", "2.0.28", "2.0.77", "2.1.29", "2.1.39", "2.1.73", "2.1.87", "2.1.111", "2.1.136"}
	for v, want := range map[string]string{"2.1.12": "2.1.29", "2.1.97": "2.1.87", "2.1.101": "2.1.111", "2.0.14": "2.0.28", "1.0.98": "1.0.128", "2.1.34": "2.1.29", "2.1.123": "2.1.111"} {
		if got := NearestVersion(v, cands); got != want {
			t.Errorf("NearestVersion(%s) = %s, want %s", v, got, want)
		}
	}
	vs, err := OracleVersions(false)
	if err != nil || len(vs) == 0 {
		t.Fatalf("OracleVersions: %q, %v", vs, err)
	}
}

// toolIDsRepeat reports whether two tool_use blocks of the transcript at
// path share an id.
func toolIDsRepeat(t *testing.T, path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var e struct {
			Message struct {
				Content []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		for _, c := range e.Message.Content {
			if c.Type == "tool_use" && c.ID != "" {
				if seen[c.ID] {
					return true
				}
				seen[c.ID] = true
			}
		}
	}
	return false
}
