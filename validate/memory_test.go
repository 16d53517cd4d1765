package validate

import (
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/rsstest"
)

// TestMemoryHostile: validate of a session of hostile input (ten million
// empty objects, a last line of 512 MB of NUL bytes, a line of 256 MB)
// peaks under 200 MB of RSS, and says what the session holds: the empty
// objects counted, past the first MaxPerCode listed; the NUL bytes as a
// line of NUL bytes only; the long line as line-long, its entry read.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			root, path := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				rep, err := Run(Options{Root: root, Targets: []string{path}})
				if err != nil {
					t.Fatal(err)
				}
				byCode := map[Code][]Finding{}
				for _, f := range rep.Findings {
					byCode[f.Code] = append(byCode[f.Code], f)
				}
				switch kind {
				case rsstest.Empties:
					if n := rep.Counts[string(TypeMissing)]; n != rsstest.EmptyLines {
						t.Errorf("%d type-missing counted, want %d", n, rsstest.EmptyLines)
					}
					if fs := byCode[TypeMissing]; len(fs) != MaxPerCode+1 || fs[MaxPerCode].More != rsstest.EmptyLines-MaxPerCode {
						t.Errorf("%d type-missing findings listed, the last standing for %d", len(fs), fs[len(fs)-1].More)
					}
				case rsstest.NULTail:
					fs := byCode[NULBytes]
					if len(fs) != 1 || !strings.Contains(fs[0].Message, "only NUL bytes (536870912)") {
						t.Errorf("nul-bytes findings: %+v", fs)
					}
				case rsstest.HugeLine:
					fs := byCode[LineLong]
					if len(fs) != 1 || fs[0].Severity != Notice {
						t.Errorf("line-long findings: %+v", fs)
					}
					if rep.Has(Error) || rep.Has(Warning) {
						t.Errorf("findings of a sound session: %+v", rep.Findings)
					}
				}
			})
		})
	}
}
