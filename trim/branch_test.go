package trim

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/damage"
	"github.com/cfix-dev/cfix/validate"
)

// TestForkOtherBranch: a resume that kept one child of a parent and left
// the delivered replies on the other (anthropics/claude-code#88597), as
// docs/trim.md's recipe takes it back: validate's chain-forks names the
// other branch with the command; cfix fork --at its leaf gives a session
// whose loaded chain is that branch, with the history before it.
func TestForkOtherBranch(t *testing.T) {
	root := damage.CopyStore(t, damage.V88)
	main := damage.MainFile(root)
	before, err := validate.LoadedChain(main)
	if err != nil {
		t.Fatal(err)
	}
	_, _, oldLeaf := damage.KeepOtherBranch(t, root)
	after, err := validate.LoadedChain(main)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(after.UUIDs, oldLeaf) {
		t.Fatalf("a resume still loads %s", oldLeaf)
	}
	rep, err := validate.Run(validate.Options{Root: root, Targets: []string{main}})
	if err != nil {
		t.Fatal(err)
	}
	at := ""
	for _, f := range rep.Findings {
		if f.Code == validate.ChainForks {
			if m := regexp.MustCompile(`cfix fork --at (\S+) resumes it`).FindStringSubmatch(f.Message); m != nil {
				at = m[1]
			}
			if !strings.Contains(f.Message, "last message ") {
				t.Errorf("chain-forks says not when the branch was written: %s", f.Message)
			}
		}
	}
	if at != oldLeaf {
		t.Fatalf("chain-forks names %q, want the old branch's leaf %s", at, oldLeaf)
	}
	p, err := Fork(ForkOptions{Root: root, Session: main, At: at})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p.ChangeSet)
	forked, err := validate.LoadedChain(filepath.Join(filepath.Dir(main), p.SessionID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	k := slices.Index(before.UUIDs, oldLeaf)
	if k < 0 {
		t.Fatalf("%s is not on the chain a resume loaded before", oldLeaf)
	}
	if !slices.Equal(forked.UUIDs, before.UUIDs[:k+1]) {
		t.Errorf("the fork loads %d entries, not the %d of the branch a resume loaded before", len(forked.UUIDs), k+1)
	}
}
