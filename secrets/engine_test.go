package secrets

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/lucasjones/reggen"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// texts a secret is put into, to see it found (or not) the same way.
var contexts = []string{
	"%s",
	"here it is: %s and more text after it",
	"export TOKEN=%s\nexport OTHER=1\n",
	"{\"key\": \"%s\"}",
	"line one\n%s\nline three",
	"curl -H 'Authorization: Bearer %s' https://example.com",
	"password = \"%s\"",
}

// TestSameAsGitleaks holds the engine to gitleaks's own detector: texts
// made of matches of every rule's expression (generated from it), in a
// few surroundings, give the same findings, rule and secret.
func TestSameAsGitleaks(t *testing.T) {
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n, withFindings := 0, 0
	for _, r := range e.rules {
		g, err := reggen.NewGenerator(r.re.String())
		if err != nil {
			t.Fatalf("%s: %v", r.id, err)
		}
		g.SetSeed(int64(r.index) + 1)
		for k := 0; k < 6; k++ {
			s := g.Generate(1 + rng.IntN(8))
			for _, c := range contexts {
				text := fmt.Sprintf(c, s)
				var want, got []string
				for _, f := range d.DetectString(text) {
					want = append(want, f.RuleID+" "+f.Secret)
				}
				e.Find(text, func(m Match) { got = append(got, m.Rule+" "+text[m.Start:m.End]) })
				sort.Strings(want)
				sort.Strings(got)
				n++
				if len(want) > 0 {
					withFindings++
				}
				if strings.Join(want, "\n") != strings.Join(got, "\n") {
					t.Errorf("rule %s, text %q:\n gitleaks %q\n cfix     %q", r.id, text, want, got)
				}
			}
		}
	}
	t.Logf("%d texts, %d with findings", n, withFindings)
	if withFindings < n/4 {
		t.Errorf("only %d of %d texts hold a finding: the generated secrets do not test much", withFindings, n)
	}
}
