package secrets

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/internal/visible"
)

// diffContext is how many bytes a diff shows on each side of a secret.
const diffContext = 40

// maxHunks bounds the hunks shown of one file.
const maxHunks = 200

// Show writes the plan: a line per file it changes and the totals, what
// the journal of its apply would keep, then each change as a diff where
// every secret is masked (Diff). Nothing of a secret but its preview is
// written.
func (p *Plan) Show(w io.Writer) error {
	changeset.Summary(w, p.CS)
	if p.CS.Empty() {
		return nil
	}
	fmt.Fprintln(w)
	return p.Diff(w)
}

// Diff writes each change of the plan as a diff where every secret is
// masked: the old bytes around it with the secret's preview, the new ones
// with its marker.
func (p *Plan) Diff(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i := range p.CS.Ops {
		if err := p.diffOp(bw, &p.CS.Ops[i]); err != nil {
			return fmt.Errorf("%s: %w", p.CS.Ops[i].Path, err)
		}
		// A writer that takes no more (a screen's worth) stops the
		// diff here.
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// JournalNote says what the journal of a redaction holds, and how it goes
// (a note of the plan).
const JournalNote = "the journal of the apply keeps a copy of every file it changes, secrets included, so that cfix undo can put them back; once the redaction is checked, remove it: cfix journal prune --journal ID (or apply with --no-backup, which keeps none)"

func (p *Plan) diffOp(w *bufio.Writer, op *changeset.Op) error {
	fmt.Fprintf(w, "--- %s\n+++ %s\n", visible.String(op.Path), visible.String(op.Path))
	f, err := rfile.Open(op.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	hunks := 0
	delta := 0
	for _, e := range op.Edits {
		old := make([]byte, e.Length)
		if _, err := f.ReadAt(old, e.Offset); err != nil {
			return err
		}
		added := strings.Count(string(e.New), "\n")
		if len(e.New) > 0 && e.New[len(e.New)-1] != '\n' {
			added++
		}
		newStart := e.Line + delta
		delta += added - e.Count
		if hunks++; hunks > maxHunks {
			continue
		}
		fmt.Fprintf(w, "@@ -%s +%s @@ %s\n", lines(e.Line, e.Count), lines(newStart, added), visible.String(e.Reason))
		var rs []rawRepl
		if isJSON(op.Path) {
			rs = p.red.lineRepls([]byte(strings.TrimSuffix(string(old), "\n")), false)
		}
		if len(rs) == 0 {
			for _, x := range p.red.find(string(old), nil) {
				rs = append(rs, rawRepl{start: x.start, end: x.end, rule: x.rule, secret: string(old[x.start:x.end])})
			}
		}
		for _, h := range maskedHunks(old, rs) {
			fmt.Fprintln(w, "-"+h[0])
			fmt.Fprintln(w, "+"+h[1])
		}
	}
	if hunks > maxHunks {
		fmt.Fprintf(w, "… %d more changes\n", hunks-maxHunks)
	}
	return nil
}

func lines(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// maskedHunks returns, for each group of replacements close together, the
// old bytes around them with each secret's preview in its place, and the
// new bytes with each marker.
func maskedHunks(old []byte, rs []rawRepl) [][2]string {
	var out [][2]string
	for i := 0; i < len(rs); {
		j := i + 1
		for j < len(rs) && rs[j].start-rs[j-1].end < 2*diffContext {
			j++
		}
		from := back(old, rs[i].start-diffContext)
		to := fwd(old, rs[j-1].end+diffContext)
		var a, b strings.Builder
		if from > 0 {
			a.WriteString("…")
			b.WriteString("…")
		}
		last := from
		for _, x := range rs[i:j] {
			a.WriteString(visible.String(string(old[last:x.start])))
			b.WriteString(visible.String(string(old[last:x.start])))
			a.WriteString(Preview(x.secret))
			b.WriteString(marker(x.rule))
			last = x.end
		}
		a.WriteString(visible.String(string(old[last:to])))
		b.WriteString(visible.String(string(old[last:to])))
		if to < len(old) {
			a.WriteString("…")
			b.WriteString("…")
		}
		out = append(out, [2]string{strings.TrimSuffix(a.String(), "\\n"), strings.TrimSuffix(b.String(), "\\n")})
		i = j
	}
	return out
}

// back moves i back to a character's start (0 at most).
func back(b []byte, i int) int {
	if i <= 0 {
		return 0
	}
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}

// fwd moves i on to a character's start (len(b) at most).
func fwd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	for i < len(b) && !utf8.RuneStart(b[i]) {
		i++
	}
	return i
}
