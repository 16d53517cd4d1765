package usage

import (
	"os"
	"testing"
	"time"
)

// BenchmarkWarm is a report of the store CFIX_BENCH_STORE through a warm
// cache (skipped without one).
func BenchmarkWarm(b *testing.B) {
	root := os.Getenv("CFIX_BENCH_STORE")
	if root == "" {
		b.Skip("CFIX_BENCH_STORE not set")
	}
	dir := b.TempDir()
	if _, err := Collect(Options{Root: root, CacheDir: dir}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		set, err := Collect(Options{Root: root, CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		Build(set, Day, Filter{Loc: time.UTC}, NewPricer(nil), false, time.Now())
	}
}
