package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestShowExportGolden: cfix show and cfix export --format md of one corpus
// session per version family (the newest with attachments), and the HTML of
// one, against golden files.
func TestShowExportGolden(t *testing.T) {
	for _, c := range []struct{ version, session string }{
		{"1.0.128", "e08a945a-5a3e-434e-8f69-9e8721080cda"},
		{"2.0.77", "bcfb4a37-f117-427a-803b-14bc8ef2f0f7"},
		{"2.1.88", "3ba86ea1-3a44-408b-917b-a10e19d813f0"},
		{"2.1.332", "bc1c66c0-560d-4a6f-b0d4-796e1f92068c"}, // attachments
	} {
		root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "corpus", c.version, ".claude"))
		if err != nil {
			t.Fatal(err)
		}
		clean := func(s string) string { return strings.ReplaceAll(s, root, "$ROOT") }
		out, code := cli(t, "show", "--root", root, c.session)
		if code != exitOK {
			t.Errorf("%s: show: status %d", c.version, code)
		}
		golden(t, "show-"+c.version+".txt", clean(out))
		out, code = cli(t, "export", "--root", root, c.session)
		if code != exitOK {
			t.Errorf("%s: export: status %d", c.version, code)
		}
		golden(t, "export-"+c.version+".md", clean(out))
		if c.version == "2.1.88" {
			out, code = cli(t, "export", "--root", root, "--format", "html", c.session)
			if code != exitOK {
				t.Errorf("%s: export html: status %d", c.version, code)
			}
			golden(t, "export-"+c.version+".html", clean(out))
		}
	}
}
