// Package plural writes counts in English words for what cfix prints:
// "1 file", "2 files", "1 entry", "3 entries".
package plural

import (
	"fmt"
	"strings"
)

// Integer is what can be counted.
type Integer interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}

// Count is n and the word, plural unless n is 1: Count(1, "finding") is
// "1 finding", Count(2, "entry") "2 entries". Of a phrase, the last word
// takes the plural ("empty session" → "empty sessions").
func Count[N Integer](n N, word string) string { return fmt.Sprint(n) + " " + Of(n, word) }

// Of is the word (or the phrase's last word) in the plural unless n is 1.
func Of[N Integer](n N, word string) string {
	if n == 1 || word == "" {
		return word
	}
	i := strings.LastIndexByte(word, ' ') + 1
	return word[:i] + Word(word[i:])
}

// irregular are the plurals no rule gives.
var irregular = map[string]string{
	"child": "children",
	"data":  "data",
}

// Word is the plural of one English noun: entry → entries, match →
// matches, file → files.
func Word(w string) string {
	if p, ok := irregular[w]; ok {
		return p
	}
	n := len(w)
	switch {
	case n > 1 && w[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(w[n-2])):
		return w[:n-1] + "ies"
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "z"),
		strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "sh"):
		return w + "es"
	}
	return w + "s"
}
