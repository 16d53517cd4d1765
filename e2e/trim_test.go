package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/e2e/fakeapi"
)

// Trim and fork proven with the real clients. In a copy of each pinned
// version's scenario store, the client writes a session of four turns in a
// folder of its own (work/trim):
//
//  1. "THINK: ... BASH: seq 1 4000": a signed thinking block and a Bash
//     call whose output is about 19 KB;
//  2. "READ: pic.png": a Read of a PNG, whose result holds an image block;
//  3. "THINK: ... BASH: seq 5000 8000": thinking and another long output;
//  4. a plain prompt.
//
// Then, before any resume, cfix trims it with --keep-turns 1 into new
// sessions (--id) with each option alone and all together, and forks it
// at turn 2 and at the Bash call of turn 1. The reference is "-r S -p
// TRIM CHECK" of the session itself. For every trimmed session, "-r NEWID
// -p TRIM CHECK" in the same folder must get 200 for every request; its
// history must be the reference history with thinking blocks gone (or
// tool outputs replaced by cfix's marker, or images by a text marker)
// before the kept last turn, which is sent as it was; and the messages of
// the request must be smaller than the reference's by the request_bytes
// the plan gave, within 5%. For each fork, the resume gets 200 and its
// history is the reference history up to the entry the fork ends at (turn
// 2's reply; the result of turn 1's call), nothing after. cfix validate
// reports no error in the store after all of it.
//
// --progress: none of the pinned versions writes progress entries (1.0.x
// and 2.0.x never did; 2.1.205 and 2.1.330 no longer do, for Bash, agents
// or PreToolUse and PostToolUse hooks in -p runs: checked), so trim
// --progress of the session is "nothing to trim". A copy of it gets a
// hook_progress entry between each tool call and its result, as 2.1.x up
// to 2.1.84 wrote them (the result hung under the progress entry);
// trim --progress --keep-turns 0 of the copy must drop exactly those,
// say the request loses nothing, and resume with the session's own
// history and request size. (The copy itself: 2.1.205 and 2.1.330 send the
// session's history; 1.0.128 and 2.0.77 stop their walk at a progress
// entry, send a result without its call and get 400.) trim's unit tests drop the progress entries
// of the wild stores' transcripts and hold the loaded chain to the one
// before.
func TestTrimForkResume(t *testing.T) {
	EachScenario(t, func(t *testing.T, sc *Scenario) {
		env := cloneEnv(t, sc)
		claude := env.ClaudeDir()
		journal := t.TempDir()
		dir := filepath.Join(env.Home, "work", "trim")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		pic := filepath.Join(dir, "pic.png")
		writeNoisePNG(t, pic, 40)

		// The session, written by the client.
		turns := []string{
			"THINK: weighing the first step BASH: seq 1 4000",
			"READ: " + pic,
			"THINK: weighing the second step BASH: seq 5000 8000",
			"last plain turn",
		}
		var id string
		for i, p := range turns {
			args := []string{"-p", p}
			if i > 0 {
				args = append([]string{"-r", id}, args...)
			}
			res := env.Run(dir, args...)
			if res.ExitCode != 0 {
				t.Fatalf("turn %d (%q): %s", i+1, p, res)
			}
			for _, q := range res.MessageRequests() {
				if q.Status != 200 {
					t.Fatalf("turn %d (%q): a request got %d: %s", i+1, p, q.Status, q.Reply)
				}
			}
			if i == 0 {
				var err error
				if id, err = NewestSession(claude, dir); err != nil {
					t.Fatal(err)
				}
			}
		}
		src := filepath.Join(cloneProjectDir(t, claude, dir), id+".jsonl")
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		hasImage := bytes.Contains(raw, []byte(`"type":"image"`))
		t.Logf("claude %s: session %s, %d bytes, image block written: %v", sc.Version, id, len(raw), hasImage)
		cloneAge(t, sc, claude)

		// The trims and forks, planned and applied before any resume.
		type trimCase struct {
			name  string
			flags []string
			id    string
			fig   trimFigures
		}
		cases := []*trimCase{
			{name: "thinking", flags: []string{"--thinking"}},
			{name: "tool-output", flags: []string{"--tool-output"}},
			{name: "images", flags: []string{"--images"}},
			{name: "all", flags: []string{"--thinking", "--tool-output", "--images", "--progress"}},
		}
		for i, c := range cases {
			c.id = fmt.Sprintf("7a1e0000-0000-4000-8000-%012d", i+1)
			args := append([]string{"trim", id, "--keep-turns", "1", "--id", c.id, "--root", claude, "--apply", "--yes", "--json"}, c.flags...)
			res := RunCfix(t, journal, args...)
			if res.ExitCode != 0 {
				t.Fatalf("cfix trim %s: %s", c.name, res)
			}
			var doc struct {
				Applied bool        `json:"applied"`
				Trim    trimFigures `json:"trim"`
			}
			if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil || !doc.Applied {
				t.Fatalf("cfix trim %s: applied %v, %v\n%s", c.name, doc.Applied, err, res)
			}
			c.fig = doc.Trim
			t.Logf("cfix trim %s: %+v", c.name, c.fig)
		}
		res := RunCfix(t, journal, "trim", id, "--progress", "--root", claude, "--json")
		if res.ExitCode != 0 || !strings.Contains(res.Stdout, "nothing to trim") {
			t.Errorf("cfix trim --progress of a session without progress entries: want nothing to trim: %s", res)
		}
		// Progress entries as 2.1.x up to 2.1.84 wrote them (a hook's
		// progress between each tool call and its result, the result
		// hung under it), put into a copy of the session: trim --progress
		// must give back the client's own chain.
		const crafted = "7a1e0000-0000-4000-8000-0000000000c1"
		const unprogressed = "7a1e0000-0000-4000-8000-0000000000c2"
		nprog := trimCraftProgress(t, raw, id, crafted, filepath.Join(filepath.Dir(src), crafted+".jsonl"))
		cloneAge(t, sc, claude)
		res = RunCfix(t, journal, "trim", crafted, "--progress", "--keep-turns", "0", "--id", unprogressed, "--root", claude, "--apply", "--yes", "--json")
		var progDoc struct {
			Trim trimFigures `json:"trim"`
		}
		if res.ExitCode != 0 || json.Unmarshal([]byte(res.Stdout), &progDoc) != nil {
			t.Fatalf("cfix trim --progress: %s", res)
		}
		if f := progDoc.Trim; f.Progress != nprog || f.Entries != nprog || f.RequestBytes != 0 {
			t.Errorf("cfix trim --progress of %d progress entries: %+v", nprog, f)
		}
		if got, want := fileSum(t, src), sha256.Sum256(raw); got != hex.EncodeToString(want[:]) {
			t.Errorf("cfix trim changed its source %s", src)
		}

		const forkTurn = "7a1e0000-0000-4000-8000-0000000000f1"
		const forkCall = "7a1e0000-0000-4000-8000-0000000000f2"
		res = RunCfix(t, journal, "fork", id, "--turn", "2", "--id", forkTurn, "--root", claude, "--apply", "--yes")
		if res.ExitCode != 0 {
			t.Fatalf("cfix fork --turn 2: %s", res)
		}
		callUUID, callID := trimBashCall(t, raw, "seq 1 4000")
		_, readID := trimBashCall(t, raw, "pic.png")
		res = RunCfix(t, journal, "fork", id, "--at", callUUID, "--id", forkCall, "--root", claude, "--apply", "--yes")
		if res.ExitCode != 0 {
			t.Fatalf("cfix fork --at %s: %s", callUUID, res)
		}
		cloneAge(t, sc, claude)

		// The reference, then each trimmed session.
		ref := cloneRun(t, env, dir, trimPrompt, "-r", id)
		if !ref.ok() {
			t.Fatalf("resume of the session: %s\n%s", ref.summary(), ref.Res)
		}
		kept := slices.Index(ref.Hist, "user: "+turns[3])
		if kept < 0 {
			t.Fatalf("the reference resume does not send the last turn:\n%s", cloneDump(ref.Hist))
		}
		refSize := len(ref.Main.RawMessages)
		t.Logf("claude %s: reference resume: %s, messages %d bytes\n%s", sc.Version, ref.summary(), refSize, cloneDump(ref.Hist))
		for _, c := range cases {
			got := cloneRun(t, env, dir, trimPrompt, "-r", c.id)
			if !got.ok() {
				t.Errorf("trim %s: -r %s: %s\n%s", c.name, c.id, got.summary(), got.Res)
				continue
			}
			size := len(got.Main.RawMessages)
			drop := int64(refSize - size)
			t.Logf("trim %s: messages %d bytes, %d fewer; the plan said %d", c.name, size, drop, c.fig.RequestBytes)
			want := c.fig.RequestBytes
			if diff := drop - want; diff*20 > want || -diff*20 > want {
				t.Errorf("trim %s: the request's messages are %d bytes smaller, the plan said %d (more than 5%% apart)", c.name, drop, want)
			}
			opt := func(o string) bool { return slices.Contains(c.flags, o) }
			if (opt("--thinking") || opt("--tool-output")) && want == 0 {
				t.Errorf("trim %s: the plan takes nothing out of the request", c.name)
			}
			if opt("--images") && !opt("--tool-output") && hasImage && c.fig.Images == 0 {
				t.Errorf("trim %s: the session holds an image block, the plan replaced none", c.name)
			}
			k := slices.Index(got.Hist, "user: "+turns[3])
			if k < 0 || !slices.Equal(got.Hist[k:], ref.Hist[kept:]) {
				t.Errorf("trim %s: the kept last turn is not sent as it was (- reference, + sent):\n%s", c.name, cloneDiff(ref.Hist[kept:], got.Hist[max(k, 0):]))
				continue
			}
			// Before it: the reference history with what was trimmed
			// changed, nothing else.
			var want2 []string
			for _, h := range ref.Hist[:kept] {
				switch {
				case opt("--thinking") && strings.HasPrefix(h, "thinking: "):
					continue
				case opt("--tool-output") && strings.HasPrefix(h, "tool_result ") && len(h) > 200:
					continue // compared below
				case (opt("--images") || opt("--tool-output")) && strings.HasPrefix(h, "tool_result "+readID+":"):
					continue // the image's result: a marker now
				}
				want2 = append(want2, h)
			}
			var got2 []string
			markers := 0
			for _, h := range got.Hist[:k] {
				if strings.Contains(h, "removed by cfix trim") {
					markers++
					continue
				}
				got2 = append(got2, h)
			}
			if !slices.Equal(want2, got2) {
				t.Errorf("trim %s: the history before the kept turn differs from the reference's but for what was trimmed (- reference, + sent):\n%s", c.name, cloneDiff(want2, got2))
			}
			if opt("--tool-output") && markers == 0 {
				t.Errorf("trim %s: no tool result carries cfix's marker:\n%s", c.name, cloneDump(got.Hist))
			}
		}

		// Progress: the chain without them is the client's own, and is sent
		// as the session itself is. (The copy with them, for the log: the
		// clients before 2.1 stop their walk at a progress entry.)
		if cr := cloneRun(t, env, dir, trimPrompt, "-r", crafted); cr.Main != nil {
			t.Logf("the copy with progress entries: %s", cr.summary())
		} else {
			t.Logf("the copy with progress entries: %s, no history sent", cr.summary())
		}
		if got := cloneRun(t, env, dir, trimPrompt, "-r", unprogressed); !got.ok() {
			t.Errorf("trim --progress: -r %s: %s\n%s", unprogressed, got.summary(), got.Res)
		} else {
			if !slices.Equal(got.Hist, ref.Hist) {
				t.Errorf("trim --progress: the history differs from the session's (- reference, + sent):\n%s", cloneDiff(ref.Hist, got.Hist))
			}
			if d := len(got.Main.RawMessages) - refSize; d > 16 || d < -16 {
				t.Errorf("trim --progress: the request's messages are %d bytes, the session's %d; the plan said they lose nothing", len(got.Main.RawMessages), refSize)
			}
			t.Logf("trim --progress: %d progress entries out, messages %d bytes (the session's: %d)", nprog, len(got.Main.RawMessages), refSize)
		}

		// Forks: the history up to where they end, nothing after.
		turn3 := slices.Index(ref.Hist, "user: "+turns[2])
		got := cloneRun(t, env, dir, trimPrompt, "-r", forkTurn)
		if !got.ok() {
			t.Errorf("fork --turn 2: -r %s: %s\n%s", forkTurn, got.summary(), got.Res)
		} else if !slices.Equal(got.Hist, ref.Hist[:turn3]) {
			t.Errorf("fork --turn 2: the history is not the reference's up to turn 3 (- reference, + sent):\n%s", cloneDiff(ref.Hist[:turn3], got.Hist))
		}
		res1 := slices.IndexFunc(ref.Hist, func(h string) bool { return strings.HasPrefix(h, "tool_result "+callID+":") })
		got = cloneRun(t, env, dir, trimPrompt, "-r", forkCall)
		switch {
		case res1 < 0:
			t.Errorf("the reference does not send the result of %s", callID)
		case !got.ok():
			t.Errorf("fork --at the Bash call: -r %s: %s\n%s", forkCall, got.summary(), got.Res)
		case len(got.Hist) < res1+1 || !slices.Equal(got.Hist[:res1+1], ref.Hist[:res1+1]):
			t.Errorf("fork --at the Bash call: the history does not start with the reference's up to the call's result (- reference, + sent):\n%s", cloneDiff(ref.Hist[:res1+1], got.Hist))
		default:
			// What follows is the client's own (2.1.x asks to continue an
			// interrupted turn), never the session's later history.
			for _, h := range got.Hist[res1+1:] {
				if slices.Contains(ref.Hist[res1+1:], h) {
					t.Errorf("fork --at the Bash call: the resume sends %q, which comes after the fork's end", h)
				}
			}
			t.Logf("fork --at the Bash call: after the call's result the client adds %q", got.Hist[res1+1:])
		}
		// The copy with progress entries is damage for 1.0.x and 2.0.x
		// (validate says so: their walk stops at a progress entry and the
		// result hung under it goes without its call, 400): not part of
		// the store checked.
		if err := os.Remove(filepath.Join(filepath.Dir(src), crafted+".jsonl")); err != nil {
			t.Fatal(err)
		}
		cloneRequireValid(t, claude, nil)
	})
}

const trimPrompt = "TRIM CHECK"

// trimFigures is the "trim" object of cfix trim --json.
type trimFigures struct {
	Bytes        int64  `json:"bytes"`
	Entries      int    `json:"entries_removed"`
	Thinking     int    `json:"thinking_blocks"`
	ToolOutputs  int    `json:"tool_outputs"`
	Images       int    `json:"images"`
	Progress     int    `json:"progress_entries"`
	RequestBytes int64  `json:"request_bytes"`
	Tokens       int64  `json:"request_tokens"`
	Estimate     string `json:"token_estimate"`
}

// trimBashCall finds the entry of the Bash call running command: its uuid
// and the call's id.
func trimBashCall(t *testing.T, raw []byte, command string) (string, string) {
	t.Helper()
	for _, l := range bytes.Split(raw, []byte("\n")) {
		var e struct {
			Type    string `json:"type"`
			UUID    string `json:"uuid"`
			Message struct {
				Content []fakeapi.Block `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(l, &e) != nil || e.Type != "assistant" {
			continue
		}
		for _, b := range e.Message.Content {
			if b.Type == "tool_use" && bytes.Contains(b.Input, []byte(command)) {
				return e.UUID, b.ID
			}
		}
	}
	t.Fatalf("no Bash call of %q in the transcript", command)
	return "", ""
}

// writeNoisePNG writes a PNG of n×n random pixels (it does not compress).
func writeNoisePNG(t *testing.T, path string, n int) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	r := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			img.Set(x, y, color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// trimCraftProgress writes to path a copy of the session raw (id) as
// session newID with a hook_progress entry, as 2.1.x up to 2.1.84 wrote
// them, between each assistant entry holding a tool call and the entries
// hung under it. It returns how many it put in.
func trimCraftProgress(t *testing.T, raw []byte, id, newID, path string) int {
	t.Helper()
	type head struct {
		Type      string `json:"type"`
		UUID      string `json:"uuid"`
		Timestamp string `json:"timestamp"`
		Message   struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	progress := map[string]string{} // tool_use entry uuid → its progress entry's uuid
	var out bytes.Buffer
	n := 0
	for _, l := range lines {
		var h head
		json.Unmarshal(l, &h)
		l = bytes.ReplaceAll(l, []byte(`"sessionId":"`+id+`"`), []byte(`"sessionId":"`+newID+`"`))
		// An entry hung under a tool call now hangs under its progress.
		for call, prog := range progress {
			l = bytes.Replace(l, []byte(`"parentUuid":"`+call+`"`), []byte(`"parentUuid":"`+prog+`"`), 1)
		}
		out.Write(l)
		out.WriteByte('\n')
		if h.Type == "assistant" && bytes.Contains(h.Message.Content, []byte(`"tool_use"`)) {
			n++
			prog := fmt.Sprintf("7a1e0000-0000-4000-8000-%012d", 900+n)
			progress[h.UUID] = prog
			fmt.Fprintf(&out, `{"parentUuid":%q,"isSidechain":false,"type":"progress","data":{"type":"hook_progress","hookEvent":"PostToolUse","hookName":"PostToolUse:Bash","command":"true"},"timestamp":%q,"uuid":%q,"sessionId":%q,"version":"2.1.81"}`+"\n",
				h.UUID, h.Timestamp, prog, newID)
		}
	}
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no tool call in the session to hang progress under")
	}
	return n
}
