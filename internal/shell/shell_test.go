package shell

import (
	"os/exec"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/dev/work/a-b_c.jsonl": "/home/dev/work/a-b_c.jsonl",
		"":                           "''",
		"/home/dev/with space":       "'/home/dev/with space'",
		"it's":                       `'it'\''s'`,
		"/p/a\x1b[2Jb":               `$'/p/a\x1b[2Jb'`,
		"it's\n\\x":                  `$'it\'s\x0a\\x'`,
		"bad \xff":                   `$'bad \xff'`,
		"rtl \u202e":                 `$'rtl \xe2\x80\xae'`,
		"=rm":                        "'=rm'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestQuoteBash: bash reads each quoted word back as the bytes it quotes.
func TestQuoteBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v (the bench and this test need it)", err)
	}
	for _, in := range []string{"plain", "with space", "it's", "/p/a\x1b[2Jb", "it's\n\\x\t$HOME`x`", "bad \xff\xfe", "rtl \u202e x", "é ü 日本"} {
		out, err := exec.Command(bash, "-c", "printf %s "+Quote(in)).Output()
		if err != nil {
			t.Fatalf("bash on %s: %v", Quote(in), err)
		}
		if string(out) != in {
			t.Errorf("bash reads %s as %q, want %q", Quote(in), out, in)
		}
	}
}
