package shell

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/dev/work/a-b_c.jsonl": "/home/dev/work/a-b_c.jsonl",
		"":                           "''",
		"/home/dev/with space":       "'/home/dev/with space'",
		"it's":                       `'it'\''s'`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
