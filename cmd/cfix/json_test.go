package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
)

// dataKeys are the objects of --json documents whose keys are data (entry
// types, codes, kinds, paths), not names of fields.
var dataKeys = regexp.MustCompile(`\.(types|counts|by_kind|damaged|kinds_by_name)$`)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestJSONConventions holds every --json document to the conventions
// docs/json.md lists: keys in snake_case, and a list with nothing in it
// is [] (never null), on a store of every kind of session and for a plan,
// an applied plan and an empty listing.
func TestJSONConventions(t *testing.T) {
	dir := t.TempDir()
	root := damage.CopyStoreTo(t, damage.V88, dir)
	damage.Age(t, root)
	t.Setenv("CFIX_ARCHIVE_DIR", filepath.Join(dir, "archive"))
	t.Setenv("CFIX_JOURNAL_DIR", filepath.Join(dir, "journal"))
	id := damage.V88Session
	rem := filepath.Join(dir, "remote")
	os.Mkdir(rem, 0o700)
	for _, args := range [][]string{
		{"undo", "--list"}, {"archive", "--list"},
		{"validate"}, {"ls"}, {"ls", filepath.Join(root, "projects", damage.V88Project)}, {"du"}, {"show", id}, {"search", "hi"}, {"search", "no-such-words-anywhere"},
		{"repair"}, {"prune"}, {"trim", "--thinking", id}, {"fork", "--turn", "1", id}, {"clone", "--to", "/tmp/elsewhere", id},
		{"pack", id, "-o", filepath.Join(dir, "s.cfixpack")}, {"unpack", filepath.Join(dir, "s.cfixpack"), "--to", "/tmp/elsewhere"},
		{"push", "file://" + rem, "--machine", "m1"}, {"push", "file://" + rem, "--machine", "m1", "--allow-secrets", "--apply"},
		{"pull", "file://" + rem, "--self", "m2", "--to", "/tmp/elsewhere"}, {"pull", "file://" + rem, "--self", "m1"},
		{"rm", id}, {"archive", id}, {"archive", id, "--apply", "--yes"}, {"archive", "--list"}, {"restore", id},
		{"usage"}, {"usage", "blocks", "--breakdown"}, {"usage", "session"},
		{"undo", "--list"},
	} {
		name := strings.Join(args, " ")
		out, _ := cli(t, append(args, "--root", root, "--json")...)
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("cfix %s --json: not one JSON document: %v\n%s", name, err, out)
			continue
		}
		if v == nil {
			t.Errorf("cfix %s --json: null", name)
		}
		walkJSON(t, name, "", v)
	}
}

func walkJSON(t *testing.T, name, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !dataKeys.MatchString(path) && !snakeCase.MatchString(k) {
				t.Errorf("cfix %s --json: key %s%s is not snake_case", name, path, "."+k)
			}
			if e == nil && !nullable[k] {
				t.Errorf("cfix %s --json: %s.%s is null", name, path, k)
			}
			walkJSON(t, name, path+"."+k, e)
		}
	case []any:
		for _, e := range x {
			walkJSON(t, name, path+"[]", e)
		}
	}
}

// nullable are fields whose null says "none" where a value is a string,
// number or object, never a list: a session's parent, a title not found.
var nullable = map[string]bool{
	"cost_usd": true, // usage: a row with a reply of a model the price list does not have
}
