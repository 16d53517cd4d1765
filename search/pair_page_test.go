//go:build unix

package search

import (
	"bytes"
	"math/rand"
	"syscall"
	"testing"
)

// TestFinderPageEnd: a finder (pairIndex in assembly on amd64) reads no
// byte past the end of its slice: the slices end where the memory does,
// at a page followed by one that may not be read, at every length up to
// a few blocks of sixteen (every alignment of the start).
func TestFinderPageEnd(t *testing.T) {
	ps := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[ps:], syscall.PROT_NONE); err != nil {
		t.Skip(err)
	}
	page := mem[:ps:ps]
	rng := rand.New(rand.NewSource(3))
	alpha := []byte("abAB xy")
	for i := range page {
		page[i] = alpha[rng.Intn(len(alpha))]
	}
	for l := 0; l <= 100; l++ {
		b := page[ps-l:]
		for nl := 1; nl <= 20; nl++ {
			for _, fold := range []bool{false, true} {
				for trial := 0; trial < 4; trial++ {
					nd := make([]byte, nl)
					for i := range nd {
						nd[i] = alpha[rng.Intn(len(alpha))]
					}
					if trial == 0 && l >= nl {
						copy(nd, b[l-nl:]) // at the very end
					}
					hay, needle := b, nd
					if fold {
						hay, needle = bytes.ToLower(b), bytes.ToLower(nd)
					}
					want := bytes.Index(hay, needle)
					if got := newFinder(needle, fold).index(b); got != want {
						t.Fatalf("finder(%q, fold %v).index(%d bytes at a page end) = %d, want %d", nd, fold, l, got, want)
					}
				}
			}
		}
		for d := 0; d+16 <= l; d++ {
			m := (l - d) &^ 15
			want := -1
			for i := 0; i < m; i++ {
				if b[i] == 'x' && b[i+d] == 'y' {
					want = i
					break
				}
			}
			if got := pairIndex(b, 'x', 'y', 0, 0, d, m); got != want {
				t.Fatalf("pairIndex(%d bytes at a page end, d %d, m %d) = %d, want %d", l, d, m, got, want)
			}
		}
	}
}
