package secrets

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkScan scans every corpus store of testdata (the text the bench
// store is made of) on one worker, or the store CFIX_SCAN_ROOT names (the
// target CFIX_SCAN_TARGET names in it): go test -bench Scan -cpuprofile.
func BenchmarkScan(b *testing.B) {
	roots, _ := filepath.Glob("../testdata/corpus/*/.claude")
	if d := os.Getenv("CFIX_SCAN_ROOT"); d != "" {
		roots = []string{d}
	}
	if _, err := Default(); err != nil {
		b.Fatal(err)
	}
	var targets []string
	if t := os.Getenv("CFIX_SCAN_TARGET"); t != "" {
		targets = []string{t}
	}
	var bytes int64
	for i := 0; i < b.N; i++ {
		bytes = 0
		for _, r := range roots {
			st, err := Scan(Options{Root: r, Targets: targets, Ignore: map[string]bool{}, Workers: 1}, func(*Finding) error { return nil })
			if err != nil {
				b.Fatal(err)
			}
			bytes += st.Bytes
		}
	}
	b.SetBytes(bytes)
}
