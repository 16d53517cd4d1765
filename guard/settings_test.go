package guard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/session"
)

const (
	bin      = "/opt/cfix bin/cfix"
	theStore = "/home/u/.claude"
)

// settingsCases are settings files install then uninstall must give back
// byte for byte.
var settingsCases = map[string]string{
	"empty file":         "",
	"white space only":   " \n\t\n",
	"a line end":         "\n",
	"empty object":       "{}\n",
	"{} without newline": "{}",
	"{ }":                "{ }",
	"{} on two lines":    "{\n}\n",
	"crlf {}":            "{\r\n}\r\n",
	"other keys":         "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"}\n}\n",
	"odd":                "{ \"model\":\"opus\" ,\n\t\"hooks\" : {\n\t\t\"PreToolUse\":[ {\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"lint\"}]} ]\n\t}   }",
	"one line":           `{"a":1,"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"other"}]}]}}`,
	"empty hooks":        "{\n    \"hooks\": {}\n}\n",
	"empty hooks inline": `{"hooks": {}}`,
	"hooks with a space": `{"hooks": { }}`,
	"hooks on lines":     "{\n  \"hooks\": {\n  }\n}\n",
	"empty event":        `{"hooks":{"SessionStart":[]}}`,
	"empty events":       "{\n  \"hooks\": {\n    \"SessionStart\": [ ],\n    \"SessionEnd\": [\n    ]\n  }\n}\n",
	"other event hooks":  "{\n  \"hooks\": {\n    \"SessionEnd\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"log-end\"}]}]\n  }\n}\n",
	"crlf":               "{\r\n  \"x\": [1, 2]\r\n}\r\n",
	"crlf hooks":         "{\r\n  \"hooks\": {\r\n    \"PreToolUse\": []\r\n  }\r\n}\r\n",
	"no final newline":   "{\n  \"model\": \"opus\"\n}",
	"unicode escapes":    `{"model": "caf\u00e9 \ud83d\ude00", "\u0068ooks": {"Session\u0053tart": []}}`,
	"escaped hooks key":  "{\n  \"\\u0068ooks\": {\n    \"PreToolUse\": []\n  }\n}\n",
	"hooks twice":        "{\n  \"hooks\": {\"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"first\"}]}]},\n  \"hooks\": {}\n}\n",
	"event twice":        `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "first"}]}], "SessionStart": []}}`,
	"tabs":               "{\n\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{\"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}\n\t\t]\n\t}\n}\n",
}

// TestInstallUninstallRoundTrip: install then uninstall gives back every
// settings file byte for byte; what install writes is JSON whose hooks
// (the member Claude Code reads, the last of two) run cfix with the
// store; a second install changes nothing.
func TestInstallUninstallRoundTrip(t *testing.T) {
	for name, in := range settingsCases {
		t.Run(name, func(t *testing.T) {
			out, before, err := Install("settings.json", []byte(in), bin, theStore)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(out) {
				t.Fatalf("install wrote invalid JSON:\n%s", out)
			}
			if strings.Contains(in, "\r\n") && strings.Count(string(out), "\n") != strings.Count(string(out), "\r\n") {
				t.Errorf("install mixed line ends into a CRLF file:\n%q", out)
			}
			got := List(out)
			if len(got) != len(Events) || got[0].Binary != bin || got[0].Root != theStore {
				t.Fatalf("installed %+v in:\n%s", got, out)
			}
			// What Claude Code reads: the last of two members of one name
			// (JSON.parse; Go's decoder would merge two objects).
			top, _, _ := session.Fields(out, 0)
			hooks := field(top, "hooks")
			evs, _, _ := session.Fields(out, hooks.Start)
			ss := field(evs, "SessionStart")
			elems, _, _ := session.Elements(out, ss.Start)
			if mine := ours(out, elems, "SessionStart"); len(mine) != 1 || mine[0] != len(elems)-1 {
				t.Errorf("the SessionStart Claude Code reads does not end with cfix's hook:\n%s", out)
			}
			again, _, err := Install("settings.json", out, bin, theStore)
			if err != nil || string(again) != string(out) {
				t.Fatalf("second install changed the file:\n%s", again)
			}
			back, gone, err := Uninstall("settings.json", out, before)
			if err != nil || gone {
				t.Fatal(err, gone)
			}
			if string(back) != in {
				t.Fatalf("uninstall gave\n%q\nwant\n%q\n(installed:\n%s)", back, in, out)
			}
		})
	}
}

// TestUninstallMissing: a file install made where there was none goes
// again; one that got other settings since stays, without cfix's hooks.
func TestUninstallMissing(t *testing.T) {
	out, before, err := Install("settings.json", nil, bin, theStore)
	if err != nil {
		t.Fatal(err)
	}
	before.Missing = true
	if back, gone, err := Uninstall("settings.json", out, before); err != nil || !gone || back != nil {
		t.Errorf("uninstall of the file install made: %q %v %v", back, gone, err)
	}
	edited := strings.Replace(string(out), "{\n", "{\n  \"model\": \"opus\",\n", 1)
	back, gone, err := Uninstall("settings.json", []byte(edited), before)
	if err != nil || gone || string(back) != "{\n  \"model\": \"opus\"\n}\n" {
		t.Errorf("uninstall of a file edited since: %q %v %v", back, gone, err)
	}
}

// TestUninstallUnknownBefore: without what install found (settings
// installed by an earlier cfix), uninstall removes cfix's entries and an
// array or hooks object they leave empty.
func TestUninstallUnknownBefore(t *testing.T) {
	for in, want := range map[string]string{
		"{\n  \"hooks\": {}\n}\n":          "{}\n",
		`{"hooks":{"SessionStart":[]}}`:    `{}`,
		"{\n  \"model\": \"opus\"\n}\n":    "{\n  \"model\": \"opus\"\n}\n",
		settingsCases["other event hooks"]: settingsCases["other event hooks"],
	} {
		out, _, err := Install("settings.json", []byte(in), bin, theStore)
		if err != nil {
			t.Fatal(err)
		}
		if back, _, err := Uninstall("settings.json", out, nil); err != nil || string(back) != want {
			t.Errorf("%q: uninstall gave %q, want %q (%v)", in, back, want, err)
		}
	}
}

func TestInstallRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"invalid":         "{\n  \"a\": 1,\n}\n",
		"hooks null":      `{"hooks": null}`,
		"hooks an array":  `{"hooks": []}`,
		"event object":    `{"hooks": {"SessionStart": {}}}`,
		"event null":      `{"hooks": {"SessionEnd": null}}`,
		"last hooks null": `{"hooks": {}, "hooks": null}`,
		"array":           `[]`,
		// What makes 2.1.205 reject the whole file (e2e TestSettingsShapes),
		// in any event.
		"group null":           `{"hooks": {"PreToolUse": [null]}}`,
		"group {}":             `{"hooks": {"SessionStart": [{}]}}`,
		"group hooks null":     `{"hooks": {"Stop": [{"hooks": null}]}}`,
		"hook null":            `{"hooks": {"Stop": [{"hooks": [null]}]}}`,
		"hook without command": `{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}`,
		"hook of no type":      `{"hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}}`,
		"hook of another type": `{"hooks": {"Stop": [{"hooks": [{"type": "nope", "command": "x"}]}]}}`,
		"matcher a number":     `{"hooks": {"Stop": [{"matcher": 1, "hooks": [{"type": "command", "command": "x"}]}]}}`,
		"last event [null]":    `{"hooks": {}, "hooks": {"Stop": [null]}}`,
	} {
		_, _, err := Install("/s/settings.json", []byte(in), bin, "")
		if err == nil || !strings.HasPrefix(err.Error(), "/s/settings.json: ") {
			t.Errorf("%s: err %v", name, err)
		}
	}
	// The first of two members is not read: no refusal. What Claude Code
	// reads and skips stays (an unknown event, another key in an entry).
	for _, in := range []string{
		`{"hooks": null, "hooks": {}}`,
		`{"hooks": {"Stop": [null]}, "hooks": {}}`,
		`{"hooks": {"NoSuchEvent": [{"hooks": [{"type": "command", "command": "true"}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "x", "x": 1}], "x": 1}]}}`,
		`{"hooks": {"PreToolUse": null}}`,
	} {
		if _, _, err := Install("/s/settings.json", []byte(in), bin, ""); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// TestInstallMovesBinary: an install over cfix's hooks of another binary,
// or of an earlier cfix that named no store, gives them this command line
// and changes nothing else.
func TestInstallMovesBinary(t *testing.T) {
	in := "{\n  \"model\": \"opus\"\n}\n"
	first, before, err := Install("settings.json", []byte(in), "/old/cfix", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := List(first); len(got) != 2 || got[0].Root != "" || got[0].Command != "/old/cfix hook SessionStart" {
		t.Fatalf("an install naming no store: %+v", got)
	}
	moved, _, err := Install("settings.json", first, bin, theStore)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(string(first), "/old/cfix hook SessionStart", Command(bin, "SessionStart", theStore))
	want = strings.ReplaceAll(want, "/old/cfix hook SessionEnd", Command(bin, "SessionEnd", theStore))
	if string(moved) != want {
		t.Fatalf("got\n%s\nwant\n%s", moved, want)
	}
	if back, _, _ := Uninstall("settings.json", moved, before); string(back) != in {
		t.Errorf("uninstall gave %q", back)
	}
}

// TestOurCommand: cfix's command lines, quoted as shell.Quote quotes, are
// told from others'.
func TestOurCommand(t *testing.T) {
	for cmd, want := range map[string][2]string{
		"/usr/bin/cfix hook SessionStart":                             {"/usr/bin/cfix", ""},
		"'/opt/my cfix/cfix' hook SessionStart --root '/home/a b/.c'": {"/opt/my cfix/cfix", "/home/a b/.c"},
		`'/opt/it'\''s/cfix' hook SessionStart --root /h/.claude`:     {"/opt/it's/cfix", "/h/.claude"},
		Command("/x/cfix", "SessionStart", "/s/it's here"):            {"/x/cfix", "/s/it's here"},
		"/usr/bin/cfix hook SessionStart --root":                      {},
		"/usr/bin/cfix hook SessionStart; rm -rf /":                   {},
		"/usr/bin/other hook SessionStart":                            {},
		"/usr/bin/cfix hook SessionEnd":                               {},
		"/usr/bin/cfix hook SessionStart --root /a --root /b":         {},
	} {
		b, r, ok := ourCommand(cmd, "SessionStart")
		if ok != (want[0] != "") || b != want[0] || r != want[1] {
			t.Errorf("%q: %q %q %v, want %q", cmd, b, r, ok, want)
		}
	}
}

// TestStatusLineAndHooksRoundTrip: install with the status line, then uninstall
// (the status line first, as guard uninstall does), gives every settings
// file back byte for byte.
func TestStatusLineAndHooksRoundTrip(t *testing.T) {
	for name, in := range settingsCases {
		out, before, err := Install("settings.json", []byte(in), bin, theStore)
		if err != nil {
			t.Fatal(err)
		}
		if out, err = InstallStatusLine("settings.json", out, bin); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := UninstallStatusLine("settings.json", out)
		if err != nil {
			t.Fatal(err)
		}
		back, gone, err := Uninstall("settings.json", back, before)
		if err != nil || gone || string(back) != in {
			t.Errorf("%s: gave %q (%v %v), want %q", name, back, gone, err, in)
		}
	}
}
