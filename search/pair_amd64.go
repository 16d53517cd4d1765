package search

// pairIndex returns the first i in [0, m) where b[i]|or1 == c1 and
// b[i+d]|or2 == c2, or -1; m is a multiple of 16 and m+d <= len(b).
//
//go:noescape
func pairIndex(b []byte, c1, c2, or1, or2 byte, d, m int) int

// pairSIMD reports that pairIndex uses vector instructions, and so is the
// way to find a needle.
const pairSIMD = true
