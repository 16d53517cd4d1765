package trim

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"unicode"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// Turn is one prompt of the history a resume of a session loads, numbered
// from 1 as cfix fork --turn counts them (prompts behind a compaction or
// on another branch have no number: a resume sends a summary of them, or
// nothing).
type Turn struct {
	N     int    `json:"n"`
	UUID  string `json:"uuid"`
	Line  int    `json:"line"`
	Time  string `json:"time"`
	Words string `json:"words"` // the prompt's first words
}

// maxWords is how much of a prompt Turns keeps; wordsRead how much of a
// prompt's line it reads for them (a pasted file of hundreds of megabytes
// is not read past it).
const (
	maxWords  = 72
	wordsRead = 64 << 10
)

// Turns returns the turns of the transcript at path, in order.
func Turns(path string) ([]Turn, error) {
	s, err := scanFile(path, session.TrimOptions{}, false)
	if err != nil {
		return nil, err
	}
	ld := s.g.Load(session.LoaderFor(s.version), false)
	fh, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	out := []Turn{}
	for _, gi := range ld.Chain {
		l := s.lines[s.node[gi]]
		if !l.prompt {
			continue
		}
		n := s.g.Nodes[gi]
		out = append(out, Turn{N: len(out) + 1, UUID: n.UUID, Line: n.Line, Time: n.Time,
			Words: promptWords(io.NewSectionReader(fh, l.off, min(int64(l.len), wordsRead)))})
	}
	return out, nil
}

// promptWords reads a user entry's first text (message.content as a
// string, or the first text of its blocks) and returns its first words
// on one line, streamed from r, which may end before the line does (a
// text cut there gives its start).
func promptWords(r io.Reader) string {
	var seen bytes.Buffer
	w, cut := promptTokens(io.TeeReader(r, &seen))
	if w != "" || !cut {
		return w
	}
	return cutText(seen.Bytes())
}

// cutText finds the first text of a user entry in the start of its line
// (the line went on past what was read): the characters after the first
// "content":" or "text":", unescaped as far as they go.
func cutText(b []byte) string {
	at := -1
	for _, key := range []string{`"content":"`, `"text":"`} {
		if i := bytes.Index(b, []byte(key)); i >= 0 && (at < 0 || i < at) {
			at = i + len(key)
		}
	}
	if at < 0 {
		return ""
	}
	raw := b[at:]
	end := len(raw)
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' {
			i++
			continue
		}
		if raw[i] == '"' {
			end = i
			break
		}
	}
	raw = raw[:end]
	for len(raw) > 0 {
		var s string
		if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) == nil {
			return words(s)
		}
		raw = raw[:len(raw)-1] // a cut escape
	}
	return ""
}

// promptTokens walks the tokens of r to the first text (see promptWords);
// cut reports that r ended before the entry did.
func promptTokens(r io.Reader) (w string, cut bool) {
	type frame struct {
		object, wantKey bool
		key             string
	}
	d := json.NewDecoder(r)
	var stack []frame
	// inContent is the depth of message.content's list, 0 outside it.
	inContent := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return "", false
		}
		if err != nil {
			return "", true
		}
		top := len(stack) - 1
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if v == '[' && top == 1 && stack[0].key == "message" && stack[1].key == "content" {
					inContent = len(stack) + 1
				}
				stack = append(stack, frame{object: v == '{', wantKey: v == '{'})
			default:
				if len(stack) == inContent {
					return "", false // no text block
				}
				stack = stack[:top]
				if top > 0 && stack[top-1].object {
					stack[top-1].wantKey = true
				}
			}
		default:
			if top >= 0 && stack[top].object && stack[top].wantKey {
				stack[top].key, _ = v.(string)
				stack[top].wantKey = false
				continue
			}
			if str, ok := v.(string); ok && top >= 0 {
				switch {
				case top == 1 && stack[0].key == "message" && stack[1].key == "content":
					return words(str), false
				case inContent > 0 && top == inContent && stack[top].key == "text":
					return words(str), false
				}
			}
			if top >= 0 && stack[top].object {
				stack[top].wantKey = true
			}
		}
	}
}

// words gives the first maxWords bytes of s on one line, whitespace runs
// as one space, cut at a word's end.
func words(s string) string {
	if name, ok := between(s, "<command-name>", "</command-name>"); ok {
		// A slash command: its name and arguments, as the person typed it.
		args, _ := between(s, "<command-args>", "</command-args>")
		s = name + " " + args
	}
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	if len(s) <= maxWords {
		return s
	}
	cut := strings.LastIndexByte(s[:maxWords], ' ')
	if cut < maxWords/2 {
		cut = maxWords
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// between returns the text of s between open and close.
func between(s, open, close string) (string, bool) {
	i := strings.Index(s, open)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, close)
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// PromptLine reports whether node n, read from the line raw alone (one
// record), starts a turn, by the rule readLine applies to a parsed entry,
// read off the bytes: a user entry of the main chain, not meta, not a
// compaction summary, not a local command's output, with no tool result,
// holding text (a string that is not blank, a text or image block, or an
// empty list). Inside a JSON string a quote is escaped, so none of the
// keys looked for can be matched by text; a prompt given as a string is
// passed over, not searched (a pasted file of hundreds of megabytes costs
// one look for its closing quote). Readers that have the graph already
// (export) number turns with it, as Turns does, without reading the
// transcript again.
func PromptLine(raw []byte, n *session.Node) bool {
	if n.Type != "user" || n.Sidechain || n.Rec > 0 {
		return false
	}
	for _, b := range n.Blocks {
		if b.Type == "tool_result" {
			return false
		}
	}
	// The line but a string content: where the keys are looked for.
	head, tail := raw, []byte(nil)
	str := false
	if i := bytes.Index(raw, keyContentString); i >= 0 {
		j := i + len(keyContentString)
		if bytes.HasPrefix(raw[j:], []byte("<local-command-")) {
			return false
		}
		head, tail = raw[:i], raw[stringEnd(raw, j):]
		str = !n.BlankString
	}
	has := func(key []byte) bool { return bytes.Contains(head, key) || bytes.Contains(tail, key) }
	if has([]byte(`"isMeta":true`)) || has(keyCompact) || has([]byte(`"text":"<local-command-`)) {
		return false
	}
	return str || has([]byte(`"type":"text"`)) || has([]byte(`"type":"image"`)) || has([]byte(`"content":[]`))
}

var keyContentString = []byte(`"content":"`)

// stringEnd returns the index of the quote that closes the JSON string
// whose text starts at j in raw (len(raw) when none does).
func stringEnd(raw []byte, j int) int {
	for j < len(raw) {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return len(raw)
		}
		q := j + k
		back := 0
		for b := q - 1; b >= 0 && raw[b] == '\\'; b-- {
			back++
		}
		if back%2 == 0 {
			return q
		}
		j = q + 1
	}
	return len(raw)
}

// Number returns the turn numbers of the prompts on a loaded chain: node
// index → turn, from 1, as Turns numbers them.
func Number(chain []int, prompt map[int]bool) map[int]int {
	out := map[int]int{}
	for _, gi := range chain {
		if prompt[gi] {
			out[gi] = len(out) + 1
		}
	}
	return out
}
