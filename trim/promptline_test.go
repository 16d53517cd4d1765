package trim_test

import (
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/trim"
	"github.com/cfix-dev/cfix/validate"
)

// TestPromptLineAgrees: turns numbered from the bytes of each line and the
// chain reader's graph (PromptLine, Number: what export does in its one
// pass) are the turns Turns gives, on every main transcript of the corpus
// and wild stores.
func TestPromptLineAgrees(t *testing.T) {
	checked := 0
	for _, root := range wild.AllRoots(t) {
		l, err := store.Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range l.Files {
			if f.Kind != store.KindSession {
				continue
			}
			want, err := trim.Turns(f.Path)
			if err != nil {
				continue // a file trim cannot read line by line
			}
			c := validate.NewChainReader()
			prompt := map[int]bool{}
			seen := 0
			if _, err := show.ReadLines(f.Path, c, func(ln session.Line) {
				for ; seen < len(c.Graph.Nodes); seen++ {
					if trim.PromptLine(ln.Raw, &c.Graph.Nodes[seen]) {
						prompt[seen] = true
					}
				}
			}); err != nil {
				t.Fatal(err)
			}
			_, ld := c.Load(false)
			nums := trim.Number(ld.Chain, prompt)
			var got []string
			idx := make([]int, 0, len(nums))
			for gi := range nums {
				idx = append(idx, gi)
			}
			sort.Slice(idx, func(a, b int) bool { return nums[idx[a]] < nums[idx[b]] })
			for _, gi := range idx {
				got = append(got, c.Graph.Nodes[gi].UUID)
			}
			var wantIDs []string
			for _, tn := range want {
				wantIDs = append(wantIDs, tn.UUID)
			}
			if !slices.Equal(got, wantIDs) {
				t.Errorf("%s: turns from the bytes %v, Turns %v", filepath.Base(f.Path), got, wantIDs)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d transcripts checked", checked)
	}
	t.Logf("%d transcripts", checked)
}
