package search

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// Pattern is what a search looks for, compiled twice: a matcher for the
// decoded text of a field, and a prefilter for the raw bytes of a file.
type Pattern struct {
	lit []byte         // a case-sensitive literal, matched with bytes.Index
	re  *regexp.Regexp // otherwise
	pre *prefilter     // nil: every line may match
}

// CompilePattern compiles pattern: a literal string unless regex (Go's
// RE2 syntax), case-insensitive with fold (Unicode simple folding, as
// regexp's (?i)).
func CompilePattern(pattern string, regex, fold bool) (*Pattern, error) {
	if pattern == "" {
		return nil, fmt.Errorf("pattern: empty")
	}
	if !utf8.ValidString(pattern) {
		return nil, fmt.Errorf("pattern: not valid UTF-8")
	}
	p := &Pattern{}
	if !regex {
		if fold {
			p.re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(pattern))
		} else {
			p.lit = []byte(pattern)
		}
		p.pre = newPrefilter([]rune(pattern), fold)
		return p, nil
	}
	expr := pattern
	if fold {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("pattern: %w", err)
	}
	p.re = re
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("pattern: %w", err)
	}
	if lit, folded := requiredLiteral(tree.Simplify()); len(lit) > 0 {
		p.pre = newPrefilter(lit, folded)
	}
	return p, nil
}

// find returns the first match in text, or -1.
func (p *Pattern) find(text []byte) (start, end int) {
	if p.re == nil {
		i := bytes.Index(text, p.lit)
		if i < 0 {
			return -1, -1
		}
		return i, i + len(p.lit)
	}
	loc := p.re.FindIndex(text)
	if loc == nil {
		return -1, -1
	}
	return loc[0], loc[1]
}

// count returns how many matches text holds (not overlapping).
func (p *Pattern) count(text []byte) int {
	if p.re == nil {
		return bytes.Count(text, p.lit)
	}
	return len(p.re.FindAllIndex(text, -1))
}

// requiredLiteral returns the longest run of literal characters every
// match of re must contain, and whether it matches case-insensitively.
func requiredLiteral(re *syntax.Regexp) ([]rune, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return re.Rune, re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []rune
		bestFold := false
		for _, s := range re.Sub {
			l, f := requiredLiteral(s)
			if len(l) > len(best) {
				best, bestFold = l, f
			}
		}
		return best, bestFold
	}
	return nil, false
}
