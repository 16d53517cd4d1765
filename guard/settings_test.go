package guard

import (
	"encoding/json"
	"strings"
	"testing"
)

const bin = "/opt/cfix bin/cfix"

var settingsCases = map[string]string{
	"empty object": "{}\n",
	"blank":        "",
	"other keys":   "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"}\n}\n",
	"odd":          "{ \"model\":\"opus\" ,\n\t\"hooks\" : {\n\t\t\"PreToolUse\":[ {\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"lint\"}]} ]\n\t}   }",
	"one line":     `{"a":1,"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"other"}]}]}}`,
	"empty hooks":  "{\n    \"hooks\": {}\n}\n",
	"crlf":         "{\r\n  \"x\": [1, 2]\r\n}\r\n",
}

func TestInstallUninstallRoundTrip(t *testing.T) {
	for name, in := range settingsCases {
		t.Run(name, func(t *testing.T) {
			out, err := Install("settings.json", []byte(in), bin)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(out) {
				t.Fatalf("install wrote invalid JSON:\n%s", out)
			}
			got := List(out)
			if len(got) != len(Events) || got[0].Binary != bin {
				t.Fatalf("installed %+v in:\n%s", got, out)
			}
			again, err := Install("settings.json", out, bin)
			if err != nil || string(again) != string(out) {
				t.Fatalf("second install changed the file:\n%s", again)
			}
			back, err := Uninstall("settings.json", out)
			if err != nil {
				t.Fatal(err)
			}
			want := in
			switch name {
			case "blank":
				want = "{}\n"
			case "empty hooks": // an empty hooks object goes with cfix's last hook
				want = "{}\n"
			}
			if string(back) != want {
				t.Fatalf("uninstall gave\n%q\nwant\n%q\n(installed:\n%s)", back, want, out)
			}
		})
	}
}

func TestInstallRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"invalid":      "{\n  \"a\": 1,\n}\n",
		"hooks null":   `{"hooks": null}`,
		"event object": `{"hooks": {"SessionStart": {}}}`,
		"array":        `[]`,
	} {
		_, err := Install("/s/settings.json", []byte(in), bin)
		if err == nil || !strings.HasPrefix(err.Error(), "/s/settings.json: ") {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

func TestInstallMovesBinary(t *testing.T) {
	in := "{\n  \"model\": \"opus\"\n}\n"
	first, err := Install("settings.json", []byte(in), "/old/cfix")
	if err != nil {
		t.Fatal(err)
	}
	moved, err := Install("settings.json", first, bin)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(string(first), "/old/cfix", "'"+bin+"'")
	if string(moved) != want {
		t.Fatalf("got\n%s\nwant\n%s", moved, want)
	}
	if back, _ := Uninstall("settings.json", moved); string(back) != in {
		t.Errorf("uninstall gave %q", back)
	}
}
