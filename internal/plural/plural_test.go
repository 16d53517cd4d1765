package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		word string
		want string
	}{
		{0, "file", "0 files"},
		{1, "file", "1 file"},
		{2, "finding", "2 findings"},
		{1, "finding", "1 finding"},
		{3, "entry", "3 entries"},
		{2, "day", "2 days"},
		{2, "match", "2 matches"},
		{2, "process", "2 processes"},
		{2, "pre-compact history", "2 pre-compact histories"},
		{1, "empty or Warmup session", "1 empty or Warmup session"},
		{5, "empty or Warmup session", "5 empty or Warmup sessions"},
		{2, "child", "2 children"},
		{-1, "byte", "-1 bytes"},
	} {
		if got := Count(c.n, c.word); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}
