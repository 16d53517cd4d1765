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
// writes its answer (if any) to out. It writes nothing to the store. Its
// error is for cfix's log; the caller exits 0 whatever happens.
func Hook(dir, event string, in io.Reader, out io.Writer) error {
	var input Input
	if err := json.NewDecoder(io.LimitReader(in, 1<<20)).Decode(&input); err != nil {
		return fmt.Errorf("hook %s: stdin: %v", event, err)
	}
	if input.HookEventName != "" && input.HookEventName != event {
		return fmt.Errorf("hook %s: stdin is for %s", event, input.HookEventName)
	}
	run := Run{At: time.Now().UTC(), Session: input.SessionID, Source: input.Source}
	var err error
	switch event {
	case "SessionStart":
		err = sessionStart(dir, input, out, &run)
	case "SessionEnd":
		err = sessionEnd(input, &run)
		if serr := sessionEndSecrets(dir, input); serr != nil {
			err = errors.Join(err, serr)
		}
	default:
		return fmt.Errorf("hook %s: not an event cfix handles (%s)", event, strings.Join(Events, ", "))
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

// transcript finds the transcript and store the input names.
func transcript(input Input) (root, path string, err error) {
	path = input.TranscriptPath
	if path != "" {
		if fi, serr := os.Stat(path); serr == nil && fi.Mode().IsRegular() {
			if p := filepath.Dir(filepath.Dir(path)); filepath.Base(p) == "projects" {
				return filepath.Dir(p), path, nil
			}
		}
	}
	if root, err = store.Resolve(""); err != nil {
		return "", "", err
	}
	if input.SessionID == "" {
		return "", "", errors.New("no transcript_path on disk and no session_id")
	}
	t, err := resume.Find(root, input.SessionID, "")
	if err != nil {
		return "", "", err
	}
	return root, t.Path, nil
}

// storeOf is the store of the transcript the input names (which a new
// session has not written yet), or the default store.
func storeOf(input Input) (string, error) {
	if p := filepath.Dir(filepath.Dir(input.TranscriptPath)); input.TranscriptPath != "" && filepath.Base(p) == "projects" {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return filepath.Dir(p), nil
		}
	}
	return store.Resolve("")
}

// problems are the findings of severity error in the session's family.
func problems(root, path string) ([]validate.Finding, error) {
	return resume.Check(root, &resume.Target{Path: path})
}

func sessionStart(dir string, input Input, out io.Writer, run *Run) error {
	if input.Source != "startup" && input.Source != "resume" {
		return nil
	}
	// What the SessionEnd hook found of secrets since the last start is
	// said with what the start says itself, in one answer.
	var answer bytes.Buffer
	orig := out
	defer func() { writeAnswer(dir, &answer, orig) }()
	out = &answer
	root, err := storeOf(input)
	if err != nil {
		return err
	}
	if input.Source == "startup" {
		return archiveBefore(dir, root, "", run)
	}
	// A resumed session sweeps too: the others are archived first, even
	// when the check fails.
	except := input.SessionID
	if except == "" && input.TranscriptPath != "" {
		except = strings.TrimSuffix(filepath.Base(input.TranscriptPath), ".jsonl")
	}
	return errors.Join(checkResume(input, out, run), archiveBefore(dir, root, except, run))
}

// checkResume checks the session being resumed, and when it has problems
// answers with the warning.
func checkResume(input Input, out io.Writer, run *Run) error {
	root, path, err := transcript(input)
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
	if len(found) == 1 {
		verb = "makes"
	}
	fmt.Fprintf(&b, "cfix: the session being resumed (%s) has %d %s that %s this resume fail or lose history:\n", path, len(found), plural.Of(len(found), "problem"), verb)
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
		fmt.Fprintf(&b, "- and %d more (cfix validate %s lists them)\n", len(found)-maxProblems, shell.Quote(path))
	}
	fmt.Fprintf(&b, "To fix it, quit this session and run: %s (a dry run first without --apply; cfix undo takes it back), then resume again.", strings.Join(order, "; "))
	return b.String()
}

func sessionEnd(input Input, run *Run) error {
	root, path, err := transcript(input)
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
func sessionEndSecrets(dir string, input Input) error {
	st, err := ReadSecrets(dir)
	if err != nil || !st.On {
		return err
	}
	root, path, err := transcript(input)
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
