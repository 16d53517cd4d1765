package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cfix-dev/cfix/internal/plant"
)

// scriptT is what internal/plant needs of a test, for a script.
type scriptT struct{ ts *testscript.TestScript }

func (s scriptT) Helper()                           {}
func (s scriptT) Fatal(args ...any)                 { s.ts.Fatalf("%s", fmt.Sprint(args...)) }
func (s scriptT) Fatalf(format string, args ...any) { s.ts.Fatalf(format, args...) }

// cmdPlant plants new secrets of real shapes into a copy of the 2.1.332
// corpus store (plant.Into) and keeps them in $WORK/secrets.json for
// nosecret: plant DIR [SEED]. A script holds no secret of its own: the
// repository would hold it. With a seed, the secrets are the same each run
// (plant.Seeded), for an output the docs show.
func cmdPlant(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: plant DIR [SEED]")
	}
	t := scriptT{ts}
	var p plant.Secrets
	if len(args) == 2 {
		seed, err := strconv.ParseUint(args[1], 10, 64)
		ts.Check(err)
		p = plant.Seeded(seed)
	} else {
		p = plant.New(t)
	}
	plant.Into(t, ts.MkAbs(args[0]), p)
	b, _ := json.Marshal(p.All())
	ts.Check(os.WriteFile(ts.MkAbs("secrets.json"), b, 0o600))
}

// cmdNoSecret checks that stdout, stderr or the files named (folders: every
// file under them) hold none of the secrets plant planted, as they are, as a
// JSON string holds them, or a line of the PEM key: nosecret stdout|stderr|PATH...
// With !, that one of them holds one (the check can fail).
func cmdNoSecret(ts *testscript.TestScript, neg bool, args []string) {
	raw, err := os.ReadFile(ts.MkAbs("secrets.json"))
	ts.Check(err)
	var all map[string]string
	ts.Check(json.Unmarshal(raw, &all))
	var forms []string
	for _, s := range all {
		esc, _ := json.Marshal(s)
		forms = append(forms, s, strings.Trim(string(esc), `"`))
		for _, l := range strings.Split(s, "\n") {
			if len(l) > 20 && !strings.HasPrefix(l, "-----") {
				forms = append(forms, l)
			}
		}
	}
	found := ""
	check := func(where, text string) {
		for _, f := range forms {
			if found == "" && strings.Contains(text, f) {
				found = where
			}
		}
	}
	for _, a := range args {
		switch a {
		case "stdout", "stderr":
			check(a, ts.ReadFile(a))
			continue
		}
		filepath.WalkDir(ts.MkAbs(a), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				check(p, string(b))
			}
			return nil
		})
	}
	if neg && found == "" {
		ts.Fatalf("none of %v holds a secret planted", args)
	}
	if !neg && found != "" {
		ts.Fatalf("%s holds a secret planted", found)
	}
}
