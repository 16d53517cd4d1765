package guard

import (
	"strings"
	"testing"
)

// TestStatusLineRoundTrip: install sets cfix's statusLine (keeping every
// other byte), again changes nothing, uninstall gives the bytes back; a
// status line of the user's own is refused and left.
func TestStatusLineRoundTrip(t *testing.T) {
	for _, raw := range []string{
		"",
		"{}\n",
		"{\n  \"model\": \"opus\",\n  \"hooks\": {}\n}\n",
		`{"model":"opus"}`,
		"{\n    \"env\": {\n        \"A\": \"1\"\n    }\n}\n",
	} {
		out, err := InstallStatusLine("settings.json", []byte(raw), "/usr/local/bin/cfix")
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if got := StatusLineOf(out); got != "/usr/local/bin/cfix statusline" {
			t.Errorf("%q: installed %q:\n%s", raw, got, out)
		}
		if !strings.Contains(string(out), "model") && strings.Contains(raw, "model") {
			t.Errorf("%q: lost a setting:\n%s", raw, out)
		}
		again, err := InstallStatusLine("settings.json", out, "/usr/local/bin/cfix")
		if err != nil || string(again) != string(out) {
			t.Errorf("%q: a second install changed the file (%v):\n%s", raw, err, again)
		}
		moved, err := InstallStatusLine("settings.json", out, "/opt/cfix2")
		if err != nil || StatusLineOf(moved) != "/opt/cfix2 statusline" {
			t.Errorf("%q: install of another binary: %v\n%s", raw, err, moved)
		}
		back, err := UninstallStatusLine("settings.json", out)
		if err != nil {
			t.Fatal(err)
		}
		if raw != "" && raw != "{}\n" && string(back) != raw {
			t.Errorf("uninstall: %q, want %q", back, raw)
		}
	}
	mine := "{\n  \"statusLine\": {\"type\": \"command\", \"command\": \"~/bin/line.sh\"}\n}\n"
	if _, err := InstallStatusLine("settings.json", []byte(mine), "/usr/local/bin/cfix"); err == nil || !strings.Contains(err.Error(), "not cfix's") {
		t.Errorf("the user's status line: %v", err)
	}
	if back, _ := UninstallStatusLine("settings.json", []byte(mine)); string(back) != mine {
		t.Errorf("uninstall touched the user's status line: %s", back)
	}
	if _, err := InstallStatusLine("settings.json", []byte("{\"a\": }"), "/x/cfix"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad JSON: %v", err)
	}
}
