package validate

import "strings"

// Near are the finding codes a mistyped one was likely meant as: those
// fewest edits away (a letter added, dropped, changed, or two swapped;
// at most three), else those that share a word of three letters or more
// with it (at most six); none when nothing is close.
func Near(typed string) []Code {
	typed = strings.ToLower(strings.TrimSpace(typed))
	best, bestD := []Code(nil), 4
	for _, c := range Codes {
		d := edits(typed, string(c.Code))
		switch {
		case d > 3:
		case d < bestD:
			best, bestD = []Code{c.Code}, d
		case d == bestD:
			best = append(best, c.Code)
		}
	}
	if len(best) > 0 {
		return best
	}
	for _, c := range Codes {
		for _, w := range strings.Split(typed, "-") {
			if len(w) >= 3 && strings.Contains(string(c.Code), w) {
				best = append(best, c.Code)
				break
			}
		}
	}
	if len(best) > 6 {
		best = best[:6]
	}
	return best
}

// edits is the optimal string alignment distance of a and b: the fewest
// letters added, dropped or changed, and adjacent letters swapped.
func edits(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
