package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
)

// PickerReach is how much of each end of a transcript the /resume picker
// reads: the first and the last 64 KB (65536 bytes in 2.1.73, 2.1.87,
// 2.1.111, 2.1.205, 2.1.234 and 2.1.330). It takes a session's title from there:
// the last custom-title in the tail, else (2.1.330) the title sidecar
// <session-id>/custom-title.json, else the last custom-title in the head,
// else the last ai-title in the tail, then in the head. Measured with
// 2.1.330 (`claude -p -r TITLE`, which matches sessions by that title): a
// custom-title line is found when it starts at most 65536 bytes before the
// end (65532: found; 65552: "does not match any session title"), or when
// it ends within the first 65536 bytes (ends at 65532: found; at 65552,
// cut by the window: not found).
const PickerReach = 65536

// addSlugs records the plan slugs a line names.
func (r *fileResult) addSlugs(raw []byte) {
	for _, s := range store.SlugsIn(raw) {
		if r.slugSeen == nil {
			r.slugSeen = map[string]bool{}
		}
		if !r.slugSeen[s] {
			r.slugSeen[s] = true
			r.slugs = append(r.slugs, s)
		}
	}
}

// TitleGap is a session title beyond the picker's reach.
type TitleGap struct {
	Line   int    // the line of the title the session has
	Raw    []byte // that line, as written
	Title  string // the title the session has
	Picked string // what the picker finds instead ("" when nothing)
	Custom bool   // a custom-title (else an ai-title)
	Offset int64  // where the line starts
	Lines  int    // lines of the transcript (FindTitleGap only)
}

// titleGap says whether the title a full read of the transcript gives is
// not the one the picker finds in the transcript's first and last
// PickerReach bytes (or in its title sidecar).
func titleGap(path string, size int64, titles []TitleLine) (*TitleGap, error) {
	if size <= PickerReach || len(titles) == 0 {
		return nil, nil
	}
	f, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cache := map[int]string{}
	raws := map[int][]byte{}
	value := func(i int) string {
		if v, ok := cache[i]; ok {
			return v
		}
		t := titles[i]
		if t.Len > session.MaxLine {
			cache[i] = "" // never read whole
			return ""
		}
		b := make([]byte, t.Len)
		if _, err := f.ReadAt(b, t.Offset); err != nil {
			cache[i] = ""
			return ""
		}
		raws[i] = b
		var v struct {
			CustomTitle string `json:"customTitle"`
			AITitle     string `json:"aiTitle"`
		}
		json.Unmarshal(b, &v)
		s := v.AITitle
		if t.Custom {
			s = v.CustomTitle
		}
		cache[i] = s
		return s
	}
	inTail := func(t TitleLine) bool { return inTail(t, size) }
	last := func(custom bool, in func(TitleLine) bool) int {
		for i := len(titles) - 1; i >= 0; i-- {
			if titles[i].Custom == custom && (in == nil || in(titles[i])) {
				return i
			}
		}
		return -1
	}
	val := func(i int) string {
		if i < 0 {
			return ""
		}
		return value(i)
	}
	// What a full read gives: the last custom-title, else the last
	// ai-title.
	want := last(true, nil)
	if val(want) == "" {
		want = last(false, nil)
	}
	title := val(want)
	if title == "" {
		return nil, nil
	}
	picked := val(last(true, inTail))
	if picked == "" {
		picked = store.SidecarTitle(path)
	}
	for _, c := range []struct {
		custom bool
		in     func(TitleLine) bool
	}{{true, inHead}, {false, inTail}, {false, inHead}} {
		if picked == "" {
			picked = val(last(c.custom, c.in))
		}
	}
	if picked == title {
		return nil, nil
	}
	t := titles[want]
	return &TitleGap{Line: t.Line, Raw: raws[want], Title: title, Picked: picked, Custom: t.Custom, Offset: t.Offset}, nil
}

// FindTitleGap reads a transcript and says whether its title is beyond
// the picker's reach (nil when it is not): repair uses it on the files a
// finding names.
func FindTitleGap(path string) (*TitleGap, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() <= PickerReach {
		return nil, nil
	}
	f, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	var titles []TitleLine
	lines := 0
	rd := session.NewReader(f, nil)
	for rd.Next() {
		ln := rd.Line()
		lines = ln.N
		custom := bytes.Contains(ln.Raw, []byte(`"custom-title"`))
		if !custom && !bytes.Contains(ln.Raw, []byte(`"ai-title"`)) {
			continue
		}
		var v struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(ln.Raw, &v) != nil || (v.Type != "custom-title" && v.Type != "ai-title") {
			continue
		}
		titles = KeepTitles(titles, TitleLine{Line: ln.N, Offset: ln.Offset, Len: int(ln.Len()), Custom: v.Type == "custom-title"}, fi.Size())
	}
	err = rd.Err()
	f.Close()
	if err != nil {
		return nil, err
	}
	g, err := titleGap(path, fi.Size(), titles)
	if g != nil {
		g.Lines = lines
	}
	return g, err
}

// TitleLine is a custom-title or ai-title record of a transcript: its
// line, that line's offset and length, and which of the two it is.
type TitleLine struct {
	Line   int
	Offset int64
	Len    int
	Custom bool
}

// TitleGapOf is FindTitleGap for a caller that has read the transcript
// (size bytes) itself and kept its title records, in file order, as
// validate counts them: the records of lines that parse as JSON.
func TitleGapOf(path string, size int64, lines []TitleLine) (*TitleGap, error) {
	return titleGap(path, size, lines)
}

// inHead and inTail report whether a title record is in the part of a
// transcript of size bytes that the picker reads: its first or its last
// PickerReach bytes.
func inHead(t TitleLine) bool             { return t.Offset+int64(t.Len) <= PickerReach }
func inTail(t TitleLine, size int64) bool { return t.Offset >= size-PickerReach }

// KeepTitles appends the title record t, read after those of titles, to
// titles, and drops those titleGap would never look at: it looks at the
// last custom-title and the last ai-title of the transcript, of its head
// and of its tail (size: the transcript's size), so a transcript of any
// number of title lines keeps at most six.
func KeepTitles(titles []TitleLine, t TitleLine, size int64) []TitleLine {
	titles = append(titles, t)
	kept := titles[:0]
	for i, x := range titles {
		last := [3]bool{true, inHead(x), inTail(x, size)} // the last of its kind in the file, head, tail
		for _, y := range titles[i+1:] {
			if y.Custom == x.Custom {
				last[0] = false
				last[1] = last[1] && !inHead(y)
				last[2] = last[2] && !inTail(y, size)
			}
		}
		if last[0] || last[1] || last[2] {
			kept = append(kept, x)
		}
	}
	return kept
}

// titleReach reports the main transcripts whose title the /resume picker
// does not find.
func (s *storeCheck) titleReach() {
	for _, r := range s.results {
		if r.file.Kind != store.KindSession || len(r.titles) == 0 {
			continue
		}
		g, err := titleGap(r.file.Path, r.file.Size, r.titles)
		if err != nil {
			s.add(ReadFailed, r.file.Path, 0, "%v", err)
			continue
		}
		if g == nil {
			continue
		}
		instead := "its first prompt"
		if g.Picked != "" {
			instead = fmt.Sprintf("%q", g.Picked)
		}
		if g.Custom {
			s.add(TitleOutOfReach, r.file.Path, g.Line, "custom-title %q starts %d KB before the end: the /resume picker reads the first and last 64 KB of a transcript, shows %s instead, and /resume %q finds nothing",
				g.Title, (r.file.Size-g.Offset)/1024, instead, g.Title)
			continue
		}
		s.add(TitleOutOfReach, r.file.Path, g.Line, "ai-title %q starts %d KB before the end: the /resume picker reads the first and last 64 KB of a transcript and shows %s instead",
			g.Title, (r.file.Size-g.Offset)/1024, instead)
	}
}

// MetaTitle returns the title a metadata-only transcript holds (its last
// custom-title, else ai-title, summary or agent-name), and the types of
// its lines.
func MetaTitle(path string) (title string, types []string) {
	f, err := rfile.Open(path)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	rank := map[string]int{"custom-title": 4, "ai-title": 3, "summary": 2, "agent-name": 1}
	best := 0
	seen := map[string]bool{}
	rd := session.NewReader(f, nil)
	for rd.Next() {
		line := rd.Line().Raw
		var v struct {
			Type        string `json:"type"`
			CustomTitle string `json:"customTitle"`
			AITitle     string `json:"aiTitle"`
			Summary     string `json:"summary"`
			AgentName   string `json:"agentName"`
		}
		if json.Unmarshal(line, &v) != nil {
			continue
		}
		if v.Type != "" && !seen[v.Type] && len(types) < maxUnknownTypes {
			seen[v.Type] = true
			types = append(types, v.Type)
		}
		t := v.CustomTitle + v.AITitle + v.AgentName
		if v.Type == "summary" {
			t = v.Summary
		}
		if r := rank[v.Type]; r >= best && strings.TrimSpace(t) != "" {
			best, title = r, strings.TrimSpace(t)
		}
	}
	return title, types
}
