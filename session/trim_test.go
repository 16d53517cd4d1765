package session

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTrimEntry(t *testing.T) {
	big := strings.Repeat("x", 600)
	cases := []struct {
		name string
		in   string
		o    TrimOptions
		want string
		st   TrimStats
	}{
		{
			name: "thinking goes, the rest stays byte for byte",
			in:   `{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"hi"}],"x" : 1},"z":[1, 2]}`,
			o:    TrimOptions{Thinking: true},
			want: `{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"text","text":"hi"}],"x" : 1},"z":[1, 2]}`,
			st:   TrimStats{Thinking: 1},
		},
		{
			name: "an entry of thinking only is left empty",
			in:   `{"type":"assistant","message":{"content":[{"type":"redacted_thinking","data":"d"}]}}`,
			o:    TrimOptions{Thinking: true},
			want: `{"type":"assistant","message":{"content":[]}}`,
			st:   TrimStats{Thinking: 1, Empty: true},
		},
		{
			name: "tool output: the block and its id stay, toolUseResult too becomes a marker",
			in:   `{"type":"user","toolUseResult":{"stdout":"` + big + `"},"message":{"content":[{"tool_use_id":"t1","type":"tool_result","content":"` + big + `","is_error":false}]}}`,
			o:    TrimOptions{ToolOutput: true},
			want: `{"type":"user","toolUseResult":"[tool output removed by cfix trim: 613 bytes]","message":{"content":[{"tool_use_id":"t1","type":"tool_result","content":"[tool output removed by cfix trim: 602 bytes]","is_error":false}]}}`,
			st:   TrimStats{Outputs: 1},
		},
		{
			name: "a short output stays",
			in:   `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`,
			o:    TrimOptions{ToolOutput: true},
			want: `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`,
		},
		{
			name: "images, in a message and in a tool result",
			in:   `{"type":"user","message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"BB"}},{"type":"text","text":"t"}]}]}}`,
			o:    TrimOptions{Images: true},
			want: `{"type":"user","message":{"content":[{"type":"text","text":"[image removed by cfix trim: image/png, 82 bytes]"},{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"[image removed by cfix trim: image/jpeg, 81 bytes]"},{"type":"text","text":"t"}]}]}}`,
			st:   TrimStats{Images: 2},
		},
		{
			name: "nothing selected, nothing changed",
			in:   `{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hm","signature":"s"}]}}`,
			o:    TrimOptions{ToolOutput: true},
			want: `{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hm","signature":"s"}]}}`,
		},
		{
			name: "a string content is never trimmed",
			in:   `{"type":"user","message":{"content":"thinking\" tool_result"}}`,
			o:    TrimOptions{Thinking: true, ToolOutput: true, Images: true},
			want: `{"type":"user","message":{"content":"thinking\" tool_result"}}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, st, err := TrimEntry([]byte(c.in), c.o)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			if !json.Valid(got) {
				t.Errorf("not JSON: %s", got)
			}
			if st.Thinking != c.st.Thinking || st.Outputs != c.st.Outputs || st.Images != c.st.Images || st.Empty != c.st.Empty {
				t.Errorf("stats %+v, want %+v", st, c.st)
			}
			if st.Bytes != int64(len(c.in)-len(got)) {
				t.Errorf("Bytes %d, the line lost %d", st.Bytes, len(c.in)-len(got))
			}
		})
	}
}
