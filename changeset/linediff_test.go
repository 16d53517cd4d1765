package changeset

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	oldParent = "141641b9-bcae-4e0e-a2c9-b03e9795bf8f"
	newParent = "54085eff-f127-492a-9f91-dce45aac4b04"
)

// longEntry is a user entry of about 3 KB whose parentUuid comes after
// its message, as some Claude Code versions order the fields.
func longEntry(parent string) string {
	text := strings.Repeat("the tool printed a long listing; ", 90)
	return `{"cwd":"/home/dev/work/alpha","message":{"content":[{"text":"` + text + `","type":"text"}],"role":"user"},"parentUuid":"` +
		parent + `","promptId":"f943a4c2-6db2-492b-9707-023246e86205","type":"user","uuid":"5f902e01-e089-4ec5-9bee-eaadc08abd3b"}`
}

// TestChangedPairReparent: a re-parent of a long line shows the member
// that changed, old and new, not two lines cut before it.
func TestChangedPairReparent(t *testing.T) {
	a, b := longEntry(oldParent), longEntry(newParent)
	x, y := changedPair(a, b)
	if !strings.Contains(x, `…"parentUuid":"`+oldParent+`","promptId":"f943a4c2-6db2-492b-9707-023246e86205"…`) ||
		!strings.Contains(y, `…"parentUuid":"`+newParent+`","promptId":"f943a4c2-6db2-492b-9707-023246e86205"…`) {
		t.Errorf("the change is not shown:\n-%s\n+%s", x, y)
	}
	if !strings.HasPrefix(x, `{"cwd":"/home/dev/work/alpha","message":…`) || !strings.HasSuffix(x, fmt.Sprintf(" [%d bytes]", len(a))) || len(x) > MaxShownLine {
		t.Errorf("the line's start or length is wrong, or it is too long (%d):\n-%s", len(x), x)
	}
	if strings.Replace(x, oldParent, newParent, 1) != y {
		t.Errorf("the two sides differ elsewhere than in the change:\n-%s\n+%s", x, y)
	}
	// A change near the start shows the line from its start.
	a = `{"parentUuid":"` + oldParent + `",` + a[1:]
	b = `{"parentUuid":"` + newParent + `",` + b[1:]
	if x, _ = changedPair(a, b); !strings.HasPrefix(x, `{"parentUuid":"`+oldParent+`","cwd":"/home/dev/work/alpha","message"…`) {
		t.Errorf("change at the start: %s", x)
	}
}

// TestChangedPairShapes: short lines whole, several changes, a removed
// block, a change too big to show whole, and no cut inside a character.
func TestChangedPairShapes(t *testing.T) {
	if x, y := changedPair("short", "shirt"); x != "short" || y != "shirt" {
		t.Errorf("short lines: %q %q", x, y)
	}
	a := longEntry(oldParent)
	// Changes far apart: each shown on its own, with "…" between.
	b := strings.Replace(longEntry(newParent), `"type":"user"`, `"type":"assistant"`, 1)
	b = strings.Replace(b, "listing; the", "listing; THE", 1)
	x, y := changedPair(a, b)
	if !strings.Contains(y, "listing; THE") || !strings.Contains(y, newParent) || !strings.Contains(y, `"type":"assistant"`) ||
		!strings.Contains(x, oldParent) || strings.Count(y, "…") < 3 {
		t.Errorf("several changes:\n-%s\n+%s", x, y)
	}
	// A block removed: the - side shows its start and end and its size,
	// the + side, short now, is shown whole.
	block := `{"type":"thinking","thinking":"` + strings.Repeat("mull it over. ", 40) + `","signature":""},`
	c := `{"parentUuid":"p","message":{"content":[{"type":"text","text":"hi"},` + block + `{"type":"text","text":"bye"}]}}`
	d := strings.Replace(c, block, "", 1)
	x, y = changedPair(c, d)
	if y != d || !strings.Contains(x, `{"type":"thinking","thinking":"mull`) || !strings.Contains(x, "…[") || !strings.Contains(x, `","signature":""},`) {
		t.Errorf("removed block:\n-%s\n+%s", x, y)
	}
	// More changes than are shown.
	var p, q strings.Builder
	for i := 0; i < 10; i++ {
		p.WriteString(`"k":"aaaa",` + strings.Repeat("z", 60) + ",")
		q.WriteString(`"k":"bbbb",` + strings.Repeat("z", 60) + ",")
	}
	if x, _ = changedPair(p.String(), q.String()); !strings.Contains(x, "(6 more changes)") {
		t.Errorf("many changes: %s", x)
	}
	// Past pairMaxDiff differing bytes: one change, no character diff.
	big := strings.Repeat("é", pairMaxDiff)
	x, y = changedPair("<"+big+">", "<"+strings.Repeat("è", pairMaxDiff)+">")
	for _, s := range []string{x, y} {
		if !utf8.ValidString(s) || len(s) > MaxShownLine || !strings.Contains(s, "bytes]…") {
			t.Errorf("big change: %q", s)
		}
	}
	// Multi-byte characters around the change are never cut.
	e := strings.Repeat("ü", 300)
	x, y = changedPair(e+"a"+e, e+"b"+e)
	if !utf8.ValidString(x) || !utf8.ValidString(y) || !strings.Contains(x, "üaü") || !strings.Contains(y, "übü") {
		t.Errorf("multi-byte:\n-%s\n+%s", x, y)
	}
}

// FuzzChangedPair: any two lines, long or short, valid UTF-8 or not, are
// shown without a panic (bytes that are not UTF-8 once moved go-diff's
// offsets past the line's end: testdata/fuzz holds that case).
func FuzzChangedPair(f *testing.F) {
	f.Add("abc", "abd", 700)
	f.Add("\xff", "0", 700)
	f.Add(`{"k":"é"}`, `{"k":"e"}`, 2000)
	f.Fuzz(func(t *testing.T, a, b string, pad int) {
		if pad < 0 || pad > 3000 {
			return
		}
		x := strings.Repeat("x", pad)
		for _, p := range [][2]string{{x + a, x + b}, {a + x, b + x}, {x + a + x, x + b + x}} {
			got, want := changedPair(p[0], p[1])
			if (got == "") != (p[0] == "") || (want == "") != (p[1] == "") {
				t.Errorf("changedPair(%q, %q) = %q, %q", p[0], p[1], got, want)
			}
		}
	})
}
