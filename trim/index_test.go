package trim_test

import (
	"testing"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/trim"
	"github.com/cfix-dev/cfix/validate"
)

// TestForkIndexCounts: a fork listed in its folder's sessions-index.json
// is listed with the messages it holds, not its source's (the wild 2.1.205
// store's indexed session forked at turn 2: index-drift, messageCount 10,
// file has 3 messages).
func TestForkIndexCounts(t *testing.T) {
	root := wild.Copy(t, "2.1.205")
	damage.Age(t, root)
	p, err := trim.Fork(trim.ForkOptions{Root: root, Session: "146a54eb-b446-4bdf-98c7-1fcd33fcdd2b", Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changeset.Apply(p.ChangeSet, changeset.ApplyOptions{JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	rep, err := validate.Run(validate.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Code == validate.IndexDrift {
			t.Errorf("%s: %s", f.Path, f.Message)
		}
	}
}
