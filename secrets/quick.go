package secrets

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// quickLen is how many bytes of a match quickSets looks at.
const quickLen = 8

// quickSets are, for the first bytes of a match of an expression, the bytes
// each may be: a set for each position, as long as every match still goes
// on there one ASCII character a byte. It says more than what matches
// (a superset), never less.
type quickSets struct {
	n    int // positions with a set
	sets [quickLen][4]uint64
}

// newQuickSets reads the first positions off an expression's program: the characters
// every thread alive at a position may take, the threads of every
// character after (an NFA run on sets of characters).
func newQuickSets(prog *syntax.Prog) quickSets {
	var q quickSets
	states := closure(prog, []uint32{uint32(prog.Start)})
	for k := 0; k < quickLen; k++ {
		var set [4]uint64
		var next []uint32
		for _, pc := range states {
			i := &prog.Inst[pc]
			switch i.Op {
			case syntax.InstMatch:
				return q // a match may end here: what follows says nothing
			case syntax.InstRune, syntax.InstRune1:
				if !addRunes(&set, i) {
					return q // a character of more than one byte
				}
				next = append(next, i.Out)
			case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
				return q
			}
		}
		if len(next) == 0 {
			return q
		}
		q.sets[k] = set
		q.n = k + 1
		states = closure(prog, next)
	}
	return q
}

// closure is the instructions reachable from pcs without taking a
// character (assertions are taken as true: a superset).
func closure(prog *syntax.Prog, pcs []uint32) []uint32 {
	seen := map[uint32]bool{}
	var out []uint32
	var visit func(pc uint32)
	visit = func(pc uint32) {
		if seen[pc] {
			return
		}
		seen[pc] = true
		i := &prog.Inst[pc]
		switch i.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			visit(i.Out)
			visit(i.Arg)
		case syntax.InstCapture, syntax.InstEmptyWidth, syntax.InstNop:
			visit(i.Out)
		case syntax.InstFail:
		default:
			out = append(out, pc)
		}
	}
	for _, pc := range pcs {
		visit(pc)
	}
	return out
}

// addRunes adds the ASCII characters a rune instruction takes to set;
// false when it takes one that is not ASCII.
func addRunes(set *[4]uint64, i *syntax.Inst) bool {
	fold := syntax.Flags(i.Arg)&syntax.FoldCase != 0
	add := func(c rune) {
		set[c>>6] |= 1 << (c & 63)
	}
	rs := i.Rune
	if i.Op == syntax.InstRune1 || len(rs) == 1 {
		rs = []rune{rs[0], rs[0]}
	}
	for k := 0; k+1 < len(rs); k += 2 {
		lo, hi := rs[k], rs[k+1]
		if hi >= utf8.RuneSelf {
			return false
		}
		for c := lo; c <= hi; c++ {
			add(c)
			if fold {
				for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
					if f >= utf8.RuneSelf {
						return false
					}
					add(f)
				}
			}
		}
	}
	return true
}

// may reports whether a match of the expression may start at the start of
// text.
func (q *quickSets) may(text string) bool {
	if len(text) < q.n {
		for k := 0; k < len(text); k++ {
			c := text[k]
			if q.sets[k][c>>6]&(1<<(c&63)) == 0 {
				return false
			}
		}
		return false
	}
	for k := 0; k < q.n; k++ {
		c := text[k]
		if q.sets[k][c>>6]&(1<<(c&63)) == 0 {
			return false
		}
	}
	return true
}
