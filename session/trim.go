package session

import (
	"bytes"
	"fmt"

	"github.com/cfix-dev/cfix/internal/plural"
)

// TrimOptions say what TrimEntry takes out of an entry.
type TrimOptions struct {
	// Thinking drops thinking and redacted_thinking blocks of
	// message.content.
	Thinking bool
	// ToolOutput replaces the content of each tool_result block by a
	// marker saying what was removed and its size (the block and its
	// tool_use_id stay), and the entry's toolUseResult by the same kind of
	// marker (a string, as clients write it for a failed call).
	ToolOutput bool
	// Images replaces image blocks (of message.content, and inside a
	// tool_result's content) by a text block marker.
	Images bool
}

// TrimStats is what TrimEntry took out of one entry.
type TrimStats struct {
	Thinking, Outputs, Images int   // blocks dropped or replaced
	Bytes                     int64 // bytes the line lost
	// Sent is how many bytes message.content lost: what a client sends of
	// the entry when it is on the resumed chain.
	Sent int64
	// Content is the size of message.content before the trim.
	Content int64
	// Empty: message.content is a list left with no block.
	Empty bool
}

// Changed reports whether the trim changed the entry.
func (s TrimStats) Changed() bool { return s.Thinking+s.Outputs+s.Images > 0 }

// OutputMarker is the text that stands for n bytes of tool output that
// cfix trim removed.
func OutputMarker(n int64) string {
	return fmt.Sprintf("[tool output removed by cfix trim: %s]", trimSize(n))
}

// ImageMarker is the text that stands for an image cfix trim removed.
func ImageMarker(media string, n int64) string {
	if media == "" {
		media = "image"
	}
	return fmt.Sprintf("[image removed by cfix trim: %s, %s]", media, trimSize(n))
}

func trimSize(n int64) string {
	switch {
	case n < 1024:
		return plural.Count(n, "byte")
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// Quick tests: a line that holds none of these strings has nothing to trim.
var (
	markThinking = []byte(`thinking"`)
	markResult   = []byte(`"tool_result"`)
	markImage    = []byte(`"image"`)
)

// TrimEntry returns the entry raw with what o selects taken out, every
// other byte kept, and what it took. A line that is not one JSON object,
// or whose message is not of the expected shape, is returned as it is.
func TrimEntry(raw []byte, o TrimOptions) ([]byte, TrimStats, error) {
	var st TrimStats
	if !(o.Thinking && bytes.Contains(raw, markThinking) ||
		(o.ToolOutput || o.Images) && bytes.Contains(raw, markResult) ||
		o.Images && bytes.Contains(raw, markImage)) {
		return raw, st, nil
	}
	fields, _, err := Fields(raw, 0)
	if err != nil {
		return raw, st, err
	}
	var msg, tur *Field
	for i := range fields {
		switch fields[i].Key {
		case "message":
			msg = &fields[i]
		case "toolUseResult":
			tur = &fields[i]
		}
	}
	if msg == nil || raw[msg.Start] != '{' {
		return raw, st, nil
	}
	mf, _, err := Fields(raw, msg.Start)
	if err != nil {
		return raw, st, nil
	}
	var content *Field
	for i := range mf {
		if mf[i].Key == "content" {
			content = &mf[i]
		}
	}
	if content == nil {
		return raw, st, nil
	}
	st.Content = int64(content.End - content.Start)
	if raw[content.Start] != '[' {
		return raw, st, nil
	}
	elems, _, err := Elements(raw, content.Start)
	if err != nil {
		return raw, st, nil
	}
	var out [][]byte
	changed := false
	for _, el := range elems {
		b := raw[el[0]:el[1]]
		nb, drop, ok := trimBlock(b, o, &st)
		if !ok {
			out = append(out, b)
			continue
		}
		changed = true
		if !drop {
			out = append(out, nb)
		}
	}
	if !changed {
		return raw, TrimStats{Content: st.Content}, nil
	}
	arr := append([]byte{'['}, bytes.Join(out, []byte(","))...)
	arr = append(arr, ']')
	st.Empty = len(out) == 0
	st.Sent = int64(content.End-content.Start) - int64(len(arr))
	type repl struct {
		s, e int
		v    []byte
	}
	reps := []repl{{content.Start, content.End, arr}}
	if tur != nil && st.Outputs > 0 {
		if n := int64(tur.End - tur.Start); n > int64(len(OutputMarker(n)))+2 {
			v := quoteJS(OutputMarker(n))
			// toolUseResult comes before or after message: keep order.
			if tur.Start < content.Start {
				reps = []repl{{tur.Start, tur.End, v}, reps[0]}
			} else {
				reps = append(reps, repl{tur.Start, tur.End, v})
			}
		}
	}
	nb := make([]byte, 0, len(raw))
	last := 0
	for _, r := range reps {
		nb = append(nb, raw[last:r.s]...)
		nb = append(nb, r.v...)
		last = r.e
	}
	nb = append(nb, raw[last:]...)
	st.Bytes = int64(len(raw) - len(nb))
	return nb, st, nil
}

// trimBlock trims one content block: its new bytes, whether it goes, and
// whether it changed.
func trimBlock(b []byte, o TrimOptions, st *TrimStats) (nb []byte, drop, changed bool) {
	if len(b) == 0 || b[0] != '{' {
		return b, false, false
	}
	fields, _, err := Fields(b, 0)
	if err != nil {
		return b, false, false
	}
	typ := ""
	var content, source *Field
	for i := range fields {
		switch fields[i].Key {
		case "type":
			typ, _ = jsString(b[fields[i].Start:fields[i].End])
		case "content":
			content = &fields[i]
		case "source":
			source = &fields[i]
		}
	}
	switch typ {
	case "thinking", "redacted_thinking":
		if o.Thinking {
			st.Thinking++
			return nil, true, true
		}
	case "image":
		if o.Images {
			st.Images++
			return imageMarker(b, source), false, true
		}
	case "tool_result":
		if content == nil {
			return b, false, false
		}
		cv := b[content.Start:content.End]
		if o.ToolOutput {
			n := int64(len(cv))
			m := quoteJS(OutputMarker(n))
			if len(m) < len(cv) {
				st.Outputs++
				return Replace(b, content.Start, content.End, m), false, true
			}
		}
		if o.Images && len(cv) > 0 && cv[0] == '[' {
			elems, _, err := Elements(b, content.Start)
			if err != nil {
				return b, false, false
			}
			var out [][]byte
			n := 0
			for _, el := range elems {
				e := b[el[0]:el[1]]
				ef, _, err := Fields(e, 0)
				isImage := false
				var src *Field
				if err == nil {
					for i := range ef {
						if ef[i].Key == "type" {
							t, _ := jsString(e[ef[i].Start:ef[i].End])
							isImage = t == "image"
						}
						if ef[i].Key == "source" {
							src = &ef[i]
						}
					}
				}
				if isImage {
					out = append(out, imageMarker(e, src))
					n++
					continue
				}
				out = append(out, e)
			}
			if n == 0 {
				return b, false, false
			}
			st.Images += n
			arr := append([]byte{'['}, bytes.Join(out, []byte(","))...)
			arr = append(arr, ']')
			return Replace(b, content.Start, content.End, arr), false, true
		}
	}
	return b, false, false
}

// imageMarker is the text block that stands for the image block b.
func imageMarker(b []byte, source *Field) []byte {
	media := ""
	if source != nil && b[source.Start] == '{' {
		if sf, _, err := Fields(b, source.Start); err == nil {
			for _, f := range sf {
				if f.Key == "media_type" {
					media, _ = jsString(b[f.Start:f.End])
				}
			}
		}
	}
	text := quoteJS(ImageMarker(media, int64(len(b))))
	out := append([]byte(`{"type":"text","text":`), text...)
	return append(out, '}')
}

// jsString decodes a JSON string without escapes (type names, media
// types); false for anything else.
func jsString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v[1:len(v)-1], '\\') >= 0 {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

// quoteJS encodes a marker (printable ASCII and no quotes or backslashes
// but those escaped here) as a JSON string.
func quoteJS(s string) []byte {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
