package store

import (
	"testing"

	"github.com/cfix-dev/cfix/internal/wild"
)

// TestCountMessagesStores: on every transcript of the corpus and wild
// stores, CountMessages counts what a full read (Summarize) counts.
func TestCountMessagesStores(t *testing.T) {
	n := 0
	for _, root := range wild.AllRoots(t) {
		l, err := Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range l.Files {
			if f.Kind != KindSession || f.Size == 0 {
				continue
			}
			sum, err := Summarize(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := CountMessages(f.Path, 0)
			if err != nil || got != sum.Messages {
				t.Errorf("%s: CountMessages %d (%v), a full read counts %d", f.Path, got, err, sum.Messages)
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("%d transcripts counted", n)
	}
}
