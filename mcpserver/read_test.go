package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cfix-dev/cfix/internal/damage"
)

// parseRead reads read_session's answer back into a ReadOutput.
func parseRead(t *testing.T, answer string) ReadOutput {
	t.Helper()
	head, text, ok := strings.Cut(answer, "\n\n")
	if !ok || !strings.HasPrefix(head, "session ") {
		t.Fatalf("read_session answered no session line:\n%s", answer)
	}
	var out ReadOutput
	fields := strings.Split(strings.TrimPrefix(head, "session "), ", ")
	out.Session = fields[0]
	for _, f := range fields[1:] {
		if n, ok := strings.CutPrefix(f, "from offset "); ok {
			out.Offset, _ = strconv.Atoi(n)
		} else {
			out.Turns = f
		}
	}
	if i := strings.LastIndex(text, "\n"+nextMark); i >= 0 {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.Fields(text[i+1+len(nextMark):])[0], ":"))
		if err != nil {
			t.Fatalf("read_session's last line: %v\n%s", err, text[i:])
		}
		out.NextOffset = &n
		text = text[:i]
	} else if i := strings.LastIndex(text, "\n"+noteMark); i >= 0 && strings.HasSuffix(text, ")") {
		out.Note = strings.TrimSuffix(text[i+1+len(noteMark):], ")")
		text = text[:i]
	}
	out.Text = text
	return out
}

// TestReadREADMEExample: the README's read_session of turn 2 of the
// corpus session answers the prompt, the call, its result and the reply in
// at most 2,000 characters, and nothing of what Claude Code attached to
// the turn for itself (its system prompt, tool schemas and listings:
// 71,722 characters of the 75,807 the answer was, in ten pages).
func TestReadREADMEExample(t *testing.T) {
	cs := connect(t, damage.CopyStore(t, "2.1.332"))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_session",
		Arguments: map[string]any{"session": "bc1c66c0", "from_turn": 2, "to_turn": 2}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.StructuredContent != nil {
		t.Fatalf("read_session: %v %+v", err, res)
	}
	answer := res.Content[0].(*mcp.TextContent).Text
	t.Logf("%d characters:\n%s", utf8.RuneCountInString(answer), answer)
	if n := utf8.RuneCountInString(answer); n > 2000 {
		t.Errorf("the answer is %d characters, want at most 2,000", n)
	}
	for _, want := range []string{
		"session " + alpha + ", turns 2 to 2\n",
		"### Turn 2\n",
		"\nafter compaction BASH: pwd\n",                // the prompt
		"<code>Bash</code> Run pwd", `"command": "pwd"`, // the call
		"**Result**\n\n```\n/home/dev/work/alpha\n```\n", // its result
		"\ndone: /home/dev/work/alpha\n",                 // the reply
	} {
		if !strings.Contains(answer, want) {
			t.Errorf("the answer lacks %q", want)
		}
	}
	for _, not := range []string{"attachment", "### Turn 3", "next_offset", `\n`, `\"`} {
		if strings.Contains(answer, not) {
			t.Errorf("the answer holds %q", not)
		}
	}
}

// TestResultHead: unless include_tool_output is set, a result shows its
// first lines and says how much it leaves out, whatever the size of the
// writes the export makes; a line is cut between characters.
func TestResultHead(t *testing.T) {
	call := func(result string) string {
		return "<details><summary><code>Read</code> a.go</summary>\n\n```json\n{}\n```\n\n**Result**\n\n```\n" + result + "\n```\n\n</details>\n\n#### Assistant · now\n\nafter\n"
	}
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	long := strings.Repeat("é", 400) // 800 bytes
	for _, c := range []struct {
		name, in, want string
		output         bool
	}{
		{"short", call("one\ntwo"), call("one\ntwo"), false},
		{"lines", call(strings.Join(lines, "\n")),
			strings.Replace(call(strings.Join(lines[:5], "\n")), "```\n\n</details>", "```\n_(15 more lines left out: include_tool_output shows the whole result)_\n\n</details>", 1), false},
		{"a long line", call(long + "\nnext"),
			strings.Replace(call(strings.Repeat("é", 250)+"…"), "```\n\n</details>", "```\n_(1 more line left out: include_tool_output shows the whole result)_\n\n</details>", 1), false},
		{"a long last line", call(long),
			strings.Replace(call(strings.Repeat("é", 250)+"…"), "```\n\n</details>", "```\n_(the end of the line left out: include_tool_output shows the whole result)_\n\n</details>", 1), false},
		{"asked for", call(strings.Join(lines, "\n")), call(strings.Join(lines, "\n")), true},
	} {
		for _, size := range []int{1, 7, 64, 1 << 20} {
			var b strings.Builder
			f := &filter{w: &b, output: c.output}
			for in := []byte(c.in); len(in) > 0; {
				k := min(size, len(in))
				f.Write(in[:k])
				in = in[k:]
			}
			f.flush()
			if b.String() != c.want {
				t.Errorf("%s, writes of %d bytes:\n%s\nwant\n%s", c.name, size, b.String(), c.want)
			}
			if !utf8.ValidString(b.String()) {
				t.Errorf("%s, writes of %d bytes: not UTF-8", c.name, size)
			}
		}
	}
}
