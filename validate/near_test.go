package validate

import (
	"fmt"
	"strings"
	"testing"
)

// TestNear: a mistyped code gets the code it was likely meant as, not the
// list of every code; a word of codes gets those codes (six at most).
func TestNear(t *testing.T) {
	for typed, want := range map[string]string{
		"line-tron":          "[line-torn]",
		"LINE-TORN ":         "[line-torn]",
		"tool-result-mising": "[tool-result-missing]",
		"sesion-stub":        "[session-stub]",
		"zzzzzzzzzzzz":       "[]",
	} {
		if got := fmt.Sprint(Near(typed)); got != want {
			t.Errorf("Near(%q) = %s, want %s", typed, got, want)
		}
	}
	got := Near("orphan-zzzzzz")
	if len(got) != 6 {
		t.Errorf("Near(orphan-zzzzzz) = %v, want six orphan codes", got)
	}
	for _, c := range got {
		if !strings.Contains(string(c), "orphan") {
			t.Errorf("Near(orphan-zzzzzz) gives %s", c)
		}
	}
}
