package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestFormatVersion checks where each field comes from: a go install
// pkg@v1.2.3 build has its module version; a build in a checkout, the
// commit, its time and whether the tree was modified; -ldflags -X values
// (a release) win over both.
func TestFormatVersion(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs.revision", Value: "de0bc260e7c5"},
		{Key: "vcs.time", Value: "2026-11-24T00:59:47Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, c := range []struct {
		name    string
		bi      *debug.BuildInfo
		v, c, d string
		want    []string
	}{
		{"go install", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "", "", "",
			[]string{"cfix v1.2.3", "commit  unknown", "built   unknown"}},
		{"checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "", "", "",
			[]string{"cfix (devel)", "commit  de0bc260e7c5 (modified)", "built   2026-11-24T00:59:47Z"}},
		{"release", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "v2.0.0", "abc123", "2026-12-01T00:00:00Z",
			[]string{"cfix v2.0.0", "commit  abc123", "built   2026-12-01T00:00:00Z"}},
		{"no build info", nil, "", "", "",
			[]string{"cfix (devel)", "commit  unknown", "built   unknown"}},
	} {
		got := strings.Split(formatVersion(c.bi, c.v, c.c, c.d), "\n")
		if len(got) != 5 || !strings.HasPrefix(got[3], "go      go") {
			t.Errorf("%s: got %q", c.name, got)
			continue
		}
		for i, w := range c.want {
			if got[i] != w {
				t.Errorf("%s: line %d is %q, want %q", c.name, i+1, got[i], w)
			}
		}
	}
}
