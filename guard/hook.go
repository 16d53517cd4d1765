package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/shell"
	"github.com/cfix-dev/cfix/resume"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/validate"
)

// Input is what Claude Code sends a hook on stdin (the fields cfix reads).
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	Source         string `json:"source"`
	Reason         string `json:"reason"`
	HookEventName  string `json:"hook_event_name"`
}

// Output is the JSON a SessionStart hook answers with: the context the
// model is given and the message the user is shown.
type Output struct {
	SystemMessage      string         `json:"systemMessage,omitempty"`
	HookSpecificOutput *SpecificOuput `json:"hookSpecificOutput,omitempty"`
}

// SpecificOuput is the event's part of Output.
type SpecificOuput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// maxProblems is how many findings a warning names.
const maxProblems = 5

// Hook runs cfix's hook for event with the hook input read from in, and
// writes its answer (if any) to out. It acts on one store: root, the one
// the guard was installed for (recorded in the hook's command line), else
// $CLAUDE_CONFIG_DIR or ~/.claude, the store of the Claude Code running
// it; an input naming a transcript elsewhere is refused whole (no check,
// no archive). It writes nothing to the store. Its error is for cfix's
// log; the caller exits 0 whatever happens.
func Hook(dir, root, event string, in io.Reader, out io.Writer) error {
	var input Input
	if err := json.NewDecoder(io.LimitReader(in, 1<<20)).Decode(&input); err != nil {
		return fmt.Errorf("hook %s: stdin: %v", event, err)
	}
	if input.HookEventName != "" && input.HookEventName != event {
		return fmt.Errorf("hook %s: stdin is for %s", event, input.HookEventName)
	}
	if event != "SessionStart" && event != "SessionEnd" {
		return fmt.Errorf("hook %s: not an event cfix handles (%s)", event, strings.Join(Events, ", "))
	}
	run := Run{At: time.Now().UTC(), Session: input.SessionID, Source: input.Source}
	root, err := boundStore(root, input)
	if err == nil {
		switch event {
		case "SessionStart":
			err = sessionStart(dir, root, input, out, &run)
		case "SessionEnd":
			err = sessionEnd(root, input, &run)
			if serr := sessionEndSecrets(dir, root, input); serr != nil {
				err = errors.Join(err, serr)
			}
		}
	}
	if err != nil {
		err = fmt.Errorf("hook %s: session %s: %w", event, input.SessionID, err)
		run.Error = err.Error()
	}
	if serr := Record(dir, event, run); serr != nil {
		err = errors.Join(err, serr)
	}
	return err
}

// boundStore is the store a hook acts on: root when the install recorded
// one, else $CLAUDE_CONFIG_DIR or ~/.claude. An input whose transcript_path
// is not a transcript of that store (projects/<folder>/<name>.jsonl under
// it) is refused: the parent of any .../projects/<folder>/x.jsonl is no
// store of the guard's, and a hook archives what it ages there.
func boundStore(root string, input Input) (string, error) {
	if root == "" {
		r, err := store.Resolve("")
		if err != nil {
			return "", err
		}
		root = r
	} else if !filepath.IsAbs(root) {
		return "", fmt.Errorf("--root %s: not an absolute path (cfix guard install writes one)", root)
	}
	if input.TranscriptPath != "" && !inStore(root, input.TranscriptPath) {
		return "", fmt.Errorf("transcript_path %s is not a transcript of the store %s, the one this hook acts on: nothing done (a hook acts on the store cfix guard install was run for, else $CLAUDE_CONFIG_DIR or ~/.claude)", input.TranscriptPath, root)
	}
	return root, nil
}

// inStore reports whether path names a transcript of the store at root,
// <root>/projects/<folder>/<name>.jsonl (a new session's may not exist
// yet), with root as given or through its symbolic links.
func inStore(root, path string) bool {
	if !filepath.IsAbs(path) || !strings.HasSuffix(path, ".jsonl") {
		return false
	}
	projects := filepath.Dir(filepath.Dir(filepath.Clean(path)))
	for _, r := range []string{root, realPath(root)} {
		if r != "" && projects == filepath.Join(r, "projects") {
			return true
		}
	}
	if rp := realPath(projects); rp != "" && rp == realPath(filepath.Join(root, "projects")) {
		return true
	}
	return false
}

// realPath is path through its symbolic links, or "" when it is not there.
func realPath(path string) string {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	return p
}

// transcript finds the transcript the input names in the store at root:
// its transcript_path (inStore checked it), else its session id.
func transcript(root string, input Input) (string, error) {
	path := input.TranscriptPath
	if path != "" {
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			return path, nil
		}
	}
	if input.SessionID == "" {
		return "", errors.New("no transcript_path on disk and no session_id")
	}
	t, err := resume.Find(root, input.SessionID, "")
	if err != nil {
		return "", err
	}
	return t.Path, nil
}

// problems are the findings of severity error in the session's family.
func problems(root, path string) ([]validate.Finding, error) {
	return resume.Check(root, &resume.Target{Path: path})
}

func sessionStart(dir, root string, input Input, out io.Writer, run *Run) error {
	if input.Source != "startup" && input.Source != "resume" {
		return nil
	}
	// What the SessionEnd hook found of secrets since the last start is
	// said with what the start says itself, in one answer.
	var answer bytes.Buffer
	orig := out
	defer func() { writeAnswer(dir, &answer, orig) }()
	out = &answer
	if input.Source == "startup" {
		return archiveBefore(dir, root, "", run)
	}
	// A resumed session sweeps too: the others are archived first, even
	// when the check fails.
	except := input.SessionID
	if except == "" && input.TranscriptPath != "" {
		except = strings.TrimSuffix(filepath.Base(input.TranscriptPath), ".jsonl")
	}
	return errors.Join(checkResume(root, input, out, run), archiveBefore(dir, root, except, run))
}

// checkResume checks the session being resumed, and when it has problems
// answers with the warning.
func checkResume(root string, input Input, out io.Writer, run *Run) error {
	path, err := transcript(root, input)
	if err != nil {
		return err
	}
	found, err := problems(root, path)
	if err != nil {
		return err
	}
	run.Problems = codes(found)
	if len(found) == 0 {
		return nil
	}
	run.Path = path
	msg := Warning(path, found)
	return json.NewEncoder(out).Encode(Output{
		SystemMessage:      msg,
		HookSpecificOutput: &SpecificOuput{HookEventName: "SessionStart", AdditionalContext: msg},
	})
}

// archiveBefore starts the archive before the sweep (archiveBeforeSweep)
// when the last one started a day ago or more.
func archiveBefore(dir, root, except string, run *Run) error {
	st, _ := ReadState(dir)
	var last time.Time
	if st.Archived != nil {
		last = st.Archived.At
	}
	return archiveBeforeSweep(dir, root, last, except, run)
}

// Warning is what cfix says of a resumed session with findings: what is
// wrong, and the commands that fix it.
func Warning(path string, found []validate.Finding) string {
	var b strings.Builder
	verb := "make"
	total := validate.Total(found) // a finding may stand for more (Finding.More)
	if total == 1 {
		verb = "makes"
	}
	fmt.Fprintf(&b, "cfix: the session being resumed (%s) has %d %s that %s this resume fail or lose history:\n", path, total, plural.Of(total, "problem"), verb)
	fixes := map[string]bool{}
	var order []string
	for i, f := range found {
		if i < maxProblems {
			where := f.Path
			if f.Line > 0 {
				where = fmt.Sprintf("%s:%d", f.Path, f.Line)
			}
			fmt.Fprintf(&b, "- %s: %s (%s)\n", where, f.Message, f.Code)
		}
		fix := f.Hint
		if fix == "" {
			fix = "cfix repair --apply " + shell.Quote(f.Path)
		}
		if !fixes[fix] {
			fixes[fix] = true
			order = append(order, fix)
		}
	}
	if len(found) > maxProblems {
		fmt.Fprintf(&b, "- and %d more (cfix validate %s lists them)\n", total-validate.Total(found[:maxProblems]), shell.Quote(path))
	}
	fmt.Fprintf(&b, "To fix it, quit this session and run: %s (a dry run first without --apply; cfix undo takes it back), then resume again.", strings.Join(order, "; "))
	return b.String()
}

func sessionEnd(root string, input Input, run *Run) error {
	path, err := transcript(root, input)
	if err != nil {
		return err
	}
	found, err := problems(root, path)
	if err != nil {
		return err
	}
	run.Problems = codes(found)
	if len(found) > 0 {
		run.Path = path
	}
	return nil
}

func codes(found []validate.Finding) []string {
	var out []string
	for _, f := range found {
		s := string(f.Code)
		if f.Line > 0 {
			s = fmt.Sprintf("%s (line %d)", f.Code, f.Line)
		}
		out = append(out, s)
	}
	return out
}

// sessionEndSecrets scans the session that ended for secrets, when the
// scan is on (cfix guard install --secrets).
func sessionEndSecrets(dir, root string, input Input) error {
	st, err := ReadSecrets(dir)
	if err != nil || !st.On {
		return err
	}
	path, err := transcript(root, input)
	if err != nil {
		return err
	}
	return scanSecrets(dir, root, path, input)
}

// writeAnswer writes a SessionStart's answer (the JSON the start wrote to
// answer, if any) with what the SessionEnd hook found of secrets added to
// its messages.
func writeAnswer(dir string, answer *bytes.Buffer, out io.Writer) {
	warn, err := secretsWarning(dir)
	if err != nil {
		Log(dir, "hook SessionStart: secrets: "+err.Error())
	}
	if warn == "" {
		out.Write(answer.Bytes())
		return
	}
	var o Output
	if answer.Len() > 0 {
		if err := json.Unmarshal(answer.Bytes(), &o); err != nil {
			out.Write(answer.Bytes())
			return
		}
	}
	join := func(a, b string) string {
		if a == "" {
			return b
		}
		return a + "\n" + b
	}
	o.SystemMessage = join(o.SystemMessage, warn)
	if o.HookSpecificOutput == nil {
		o.HookSpecificOutput = &SpecificOuput{HookEventName: "SessionStart"}
	}
	o.HookSpecificOutput.AdditionalContext = join(o.HookSpecificOutput.AdditionalContext, warn)
	json.NewEncoder(out).Encode(o)
}
