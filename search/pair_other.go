//go:build !amd64

package search

// pairIndex returns the first i in [0, m) where b[i]|or1 == c1 and
// b[i+d]|or2 == c2, or -1; m is a multiple of 16 and m+d <= len(b).
func pairIndex(b []byte, c1, c2, or1, or2 byte, d, m int) int {
	for i := 0; i < m; i++ {
		if b[i]|or1 == c1 && b[i+d]|or2 == c2 {
			return i
		}
	}
	return -1
}

// pairSIMD reports that pairIndex uses vector instructions: not here, where
// a needle is found by its rarest byte with bytes.IndexByte.
const pairSIMD = false
