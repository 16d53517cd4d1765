// Package secrets finds secrets in a Claude Code store and takes them out:
// gitleaks's default rules run on the decoded text of each JSON string of
// the store's JSON lines (so an escaped PEM key is found, and a match never
// spans two fields) and on the store's other files, and a planner replaces
// each secret found by [REDACTED:<rule>] in a change set that keeps every
// entry's structure.
package secrets

import (
	"errors"
	"fmt"
	"math"
	stdregexp "regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/regexp"
)

// Match is one secret a rule found in a text: the secret's bytes are
// text[Start:End].
type Match struct {
	Rule       string
	Start, End int
}

// Engine runs gitleaks's default rules over texts. It is safe for use by
// several goroutines at once.
type Engine struct {
	rules  []*rule
	byID   map[string]*rule
	global []*config.Allowlist
	kw     *keywords
	// byKeyword lists, for each word, the rules it triggers (the rules
	// whose gitleaks keyword it is).
	byKeyword [][]*rule
	// always are the rules without keywords, which run on every text.
	always []*rule
	// shortest is the length of the shortest match of any rule: a text
	// shorter holds none.
	shortest int
}

// rule is one gitleaks rule, with the screen that says cheaply whether its
// regular expression can match a text at all.
type rule struct {
	id          string
	re          *regexp.Regexp
	entropy     float64
	secretGroup int
	allowlists  []*config.Allowlist
	keywords    []int // gitleaks's keywords: indexes into the engine's words
	anchors     []int // where an anchored screen is tried: indexes into the words
	generic     bool  // gitleaks drops a generic finding that a specific one holds
	// screen is the rule's expression with its leading parts that may
	// match nothing taken off (optional repeats, word boundaries),
	// anchored: tried where it must start, it says whether the rule can
	// match around there, and where such a match ends. Every match of the
	// rule's expression holds a match of the screen that starts at most
	// lead characters after it (lead < 0: no bound).
	screenSrc  string
	screenOnce sync.Once
	screenRe   *stdregexp.Regexp
	lead       int
	// prefix is what every match of the screen starts with, exactly; ""
	// when it starts with one of the anchors instead, without regard to
	// case (the literals its expression starts with).
	prefix string
	index  int // in Engine.rules
	// quick says, for the first bytes of a match of the screen, which
	// bytes may be there: a position the text lacks, or a byte no
	// set holds, rules the screen out there without running it.
	quick quickSets
	// opWithin, when not 0, says a match of the screen holds one of the
	// assignment operators of gitleaks's semi-generic rules (= > : | ? ,)
	// in its first opWithin bytes: their identifier, up to 20 characters
	// of its name and 3 of quotes or space, then the operator.
	opWithin int
}

var (
	defaultOnce   sync.Once
	defaultEngine *Engine
	defaultErr    error
)

// Default returns the engine of gitleaks's default configuration (built
// once: its rules are compiled the first time it is asked for).
func Default() (*Engine, error) {
	defaultOnce.Do(func() {
		defaultEngine, defaultErr = newDefault()
	})
	return defaultEngine, defaultErr
}

// Rules returns the ids of the engine's rules, sorted.
func (e *Engine) Rules() []string {
	ids := make([]string, 0, len(e.rules))
	for _, r := range e.rules {
		ids = append(ids, r.id)
	}
	sort.Strings(ids)
	return ids
}

// HasRule reports whether id names a rule of the engine.
func (e *Engine) HasRule(id string) bool { return e.byID[id] != nil }

func newDefault() (*Engine, error) {
	// gitleaks logs to stderr at info level; nothing of it is cfix's.
	logging.Logger = logging.Logger.Level(zerolog.Disabled)
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("secrets: gitleaks default config: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("secrets: gitleaks default config: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("secrets: gitleaks default config: %w", err)
	}
	return newEngine(cfg)
}

// newEngine compiles the rules of cfg. Rules tied to a file name (Path)
// are left out: the store does not keep the names of the files whose
// contents it holds. So are composite rules, which the default
// configuration has none of.
func newEngine(cfg config.Config) (*Engine, error) {
	e := &Engine{byID: map[string]*rule{}, global: cfg.Allowlists}
	index := map[string]int{}
	var words []string
	word := func(w string) int {
		i, ok := index[w]
		if !ok {
			i = len(words)
			index[w] = i
			words = append(words, w)
		}
		return i
	}
	for _, id := range cfg.OrderedRules {
		cr := cfg.Rules[id]
		if cr.Regex == nil || cr.Path != nil || len(cr.RequiredRules) > 0 || cr.SkipReport {
			continue
		}
		r := &rule{id: cr.RuleID, re: cr.Regex, entropy: cr.Entropy, secretGroup: cr.SecretGroup,
			allowlists: cr.Allowlists, generic: strings.Contains(strings.ToLower(cr.RuleID), "generic")}
		for _, k := range cr.Keywords {
			r.keywords = append(r.keywords, word(strings.ToLower(k)))
		}
		anchors, err := r.makeScreen()
		if err != nil {
			return nil, err
		}
		for _, a := range anchors {
			r.anchors = append(r.anchors, word(a))
		}
		r.index = len(e.rules)
		e.rules = append(e.rules, r)
		e.byID[r.id] = r
		if len(r.keywords) == 0 {
			e.always = append(e.always, r)
		}
	}
	if len(e.rules) == 0 {
		return nil, errors.New("secrets: the gitleaks configuration has no rules")
	}
	e.shortest = -1
	for _, r := range e.rules {
		if re, err := syntax.Parse(r.re.String(), syntax.Perl); err == nil {
			if n := minLen(re); e.shortest < 0 || n < e.shortest {
				e.shortest = n
			}
		}
	}
	e.shortest = max(e.shortest, 0)
	e.kw = newKeywords(words)
	e.byKeyword = make([][]*rule, len(words))
	for _, r := range e.rules {
		for _, k := range r.keywords {
			e.byKeyword[k] = append(e.byKeyword[k], r)
		}
	}
	return e, nil
}

// makeScreen derives the rule's screen from its regular expression, and
// returns the words the screen is tried at (lower-cased) when it has no
// prefix. A rule without a screen runs on the whole of every text that
// holds one of its keywords, as gitleaks runs it.
func (r *rule) makeScreen() ([]string, error) {
	re, err := syntax.Parse(r.re.String(), syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("secrets: rule %s: %w", r.id, err)
	}
	re, lead := stripLeading(uncapture(re))
	// Tried where a match must start, the screen sees nothing of the text
	// before: an assertion about it there (^, \A, \B) could fail where
	// the rule's expression matches.
	if re == nil || lead < 0 || startsWithLookBehind(re) {
		return nil, nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, nil
	}
	// Compiled the first time a text calls for it: most rules never run.
	src := `^(?:` + re.String() + `)`
	if _, err := syntax.Parse(src, syntax.Perl); err != nil {
		return nil, nil
	}
	quick := newQuickSets(prog)
	if p, _ := prog.Prefix(); len(p) >= 2 {
		r.screenSrc, r.lead, r.prefix, r.quick = src, lead, p, quick
		return nil, nil
	}
	lits, ok := firstLiterals(re)
	if !ok || len(lits) == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	var anchors []string
	for _, l := range lits {
		l = strings.ToLower(l)
		if len(l) < 2 {
			return nil, nil
		}
		if !seen[l] {
			seen[l] = true
			anchors = append(anchors, l)
		}
	}
	r.screenSrc, r.lead, r.quick = src, lead, quick
	r.opWithin = opWithin(r.re.String(), re)
	return anchors, nil
}

// semiGeneric is what follows the identifier in the expressions of
// gitleaks's semi-generic rules (generic-api-key and the rules named after
// a service): a name, quotes or space, an assignment operator.
const semiGeneric = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// opWithin is, for a semi-generic rule's screen re, how many bytes from
// its start hold the assignment operator: the longest identifier, 20
// characters of name, 3 of quotes or space, the operator's first byte. 0
// for other rules, or when the identifier has no longest match.
func opWithin(src string, re *syntax.Regexp) int {
	if !strings.Contains(src, semiGeneric) || re.Op != syntax.OpConcat {
		return 0
	}
	subs := flatten(re)
	if len(subs) < 3 || subs[1].Op != syntax.OpRepeat || subs[1].Max != 20 || subs[2].Op != syntax.OpRepeat || subs[2].Max != 3 {
		return 0
	}
	id := maxLen(subs[0])
	if id <= 0 {
		return 0
	}
	return id + 20 + 3 + 1
}

// screen is the rule's screen, compiled the first time it is asked for
// (its source compiled when the engine was made: it cannot fail).
func (r *rule) screen() *stdregexp.Regexp {
	r.screenOnce.Do(func() { r.screenRe = stdregexp.MustCompile(r.screenSrc) })
	return r.screenRe
}

// uncapture returns re without its capture groups (a screen needs none).
func uncapture(re *syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpCapture {
		return uncapture(re.Sub[0])
	}
	out := *re
	out.Sub = nil
	for _, s := range re.Sub {
		out.Sub = append(out.Sub, uncapture(s))
	}
	if len(out.Sub) == 0 {
		out.Sub = nil
	}
	out.Sub0 = [1]*syntax.Regexp{}
	return &out
}

// stripLeading takes off the leading parts of re that may match nothing
// (optional repeats, word boundaries): whatever re matches, the rest
// matches a suffix of, which starts at most lead characters into it
// (lead < 0: no bound). nil means nothing is left.
func stripLeading(re *syntax.Regexp) (rest *syntax.Regexp, lead int) {
	if re.Op != syntax.OpConcat {
		if canBeEmpty(re) {
			return nil, 0
		}
		return re, 0
	}
	subs := flatten(re)
	i := 0
	for i < len(subs) && canBeEmpty(subs[i]) {
		if m := maxLen(subs[i]); m < 0 || lead < 0 {
			lead = -1
		} else {
			lead += m
		}
		i++
	}
	switch len(subs) - i {
	case 0:
		return nil, lead
	case 1:
		return subs[i], lead
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: subs[i:]}, lead
}

// maxLen is the length of re's longest match, in characters (-1: no
// bound).
func maxLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture:
		return maxLen(re.Sub[0])
	case syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxLen(re.Sub[0]) == 0 {
			return 0
		}
		return -1
	case syntax.OpRepeat:
		m := maxLen(re.Sub[0])
		if m < 0 || re.Max < 0 && m > 0 {
			return -1
		}
		return max(re.Max, 0) * m
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			m := maxLen(s)
			if m < 0 {
				return -1
			}
			n += m
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			m := maxLen(s)
			if m < 0 {
				return -1
			}
			n = max(n, m)
		}
		return n
	}
	return 0 // empty, assertions
}

// flatten lists the parts of a concatenation, nested ones inlined.
func flatten(re *syntax.Regexp) []*syntax.Regexp {
	var out []*syntax.Regexp
	for _, s := range re.Sub {
		if s.Op == syntax.OpConcat {
			out = append(out, flatten(s)...)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// canBeEmpty reports whether re is a leading part a screen may drop: it
// can match without taking a character (an optional part, an assertion).
func canBeEmpty(re *syntax.Regexp) bool { return minLen(re) == 0 }

// minLen is the length of re's shortest match, in characters.
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n += minLen(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range re.Sub {
			if m := minLen(s); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0 // empty, assertions, *, ?
}

// startsWithLookBehind reports whether an assertion that looks at the
// text before may come first in a match of re: ^, \A or \B, which a
// screen tried at a position of the text could get wrong.
func startsWithLookBehind(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpNoWordBoundary:
		return true
	case syntax.OpConcat:
		for _, s := range flatten(re) {
			if startsWithLookBehind(s) {
				return true
			}
			if minLen(s) > 0 {
				return false
			}
		}
		return false
	case syntax.OpAlternate, syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		for _, s := range re.Sub {
			if startsWithLookBehind(s) {
				return true
			}
		}
	}
	return false
}

// maxLiterals bounds the set firstLiterals builds.
const maxLiterals = 256

// firstLiterals returns strings one of which every match of re starts with
// (compared without case); ok is false when it cannot tell.
func firstLiterals(re *syntax.Regexp) ([]string, bool) {
	lits, _, ok := prefixes(re)
	return lits, ok
}

// prefixes returns the literal starts of re's matches, and whether they
// are whole (re matches exactly one of them).
func prefixes(re *syntax.Regexp) (lits []string, whole, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return nil, false, false
			}
		}
		return []string{string(re.Rune)}, true, true
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				if c >= utf8.RuneSelf || len(out) >= 16 {
					return nil, false, false
				}
				out = append(out, string(c))
			}
		}
		return out, true, len(out) > 0
	case syntax.OpAlternate:
		var out []string
		whole := true
		for _, s := range re.Sub {
			l, w, ok := prefixes(s)
			if !ok {
				return nil, false, false
			}
			out = append(out, l...)
			whole = whole && w
		}
		return out, whole, len(out) <= maxLiterals
	case syntax.OpQuest:
		l, w, ok := prefixes(re.Sub[0])
		if !ok || !w {
			return nil, false, false
		}
		return append(l, ""), true, true
	case syntax.OpRepeat, syntax.OpPlus:
		if re.Op == syntax.OpRepeat && re.Min == 0 {
			return nil, false, false
		}
		l, _, ok := prefixes(re.Sub[0])
		return l, false, ok
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range flatten(re) {
			l, w, ok := prefixes(s)
			if !ok {
				return out, false, nonEmpty(out)
			}
			var next []string
			for _, a := range out {
				for _, b := range l {
					next = append(next, a+b)
				}
			}
			if len(next) > maxLiterals {
				return out, false, nonEmpty(out)
			}
			out = next
			if !w {
				return out, false, nonEmpty(out)
			}
		}
		return out, true, nonEmpty(out)
	}
	return nil, false, false
}

// nonEmpty reports whether every literal of ls says something.
func nonEmpty(ls []string) bool {
	for _, l := range ls {
		if l == "" {
			return false
		}
	}
	return len(ls) > 0
}

// Find calls fn for each secret the rules find in text, in the order of
// the text.
func (e *Engine) Find(text string, fn func(Match)) {
	e.find(text, nil, fn)
}

// scratch is what a finder reuses between texts.
type scratch struct {
	hits  []int  // where a keyword starts in the text
	ids   []int  // which keyword starts there
	seen  []bool // rules already tried for the text, by index
	tried []int
	found []found
}

type found struct {
	r          *rule
	start, end int // the secret
	line       int // where its line starts
	secret     string
}

// find is Find with a scratch space (nil: a new one).
func (e *Engine) find(text string, sc *scratch, fn func(Match)) {
	if len(text) < e.shortest {
		return
	}
	if sc == nil {
		sc = &scratch{}
	}
	if len(sc.seen) < len(e.rules) {
		sc.seen = make([]bool, len(e.rules))
	}
	sc.tried = sc.tried[:0]
	sc.found = sc.found[:0]
	// A Kelvin sign lower-cases to k, as gitleaks looks for keywords, and
	// it and the long s (ſ) match k and s without case in an expression:
	// such a text is read as gitleaks reads it, every triggered rule run
	// on the whole text.
	fold := strings.Contains(text, "\u212a") || strings.Contains(text, "\u017f")
	if fold {
		sc.hits, sc.ids = e.kw.scan(strings.ToLower(text), sc.hits[:0], sc.ids[:0])
	} else {
		sc.hits, sc.ids = e.kw.scan(text, sc.hits[:0], sc.ids[:0])
	}
	for _, r := range e.always {
		e.tryRule(r, text, sc, fold)
	}
	for _, k := range sc.ids {
		for _, r := range e.byKeyword[k] {
			e.tryRule(r, text, sc, fold)
		}
	}
	for _, i := range sc.tried {
		sc.seen[i] = false
	}
	if len(sc.found) == 0 {
		return
	}
	fs := dedupeGeneric(sc.found)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].start < fs[j].start })
	for _, f := range fs {
		fn(Match{Rule: f.r.id, Start: f.start, End: f.end})
	}
}

// margin is what a window around a match of a screen takes in on each side
// besides the rule's leading parts.
const margin = 16

// tryRule runs rule r on text, once per text: where its screen matches,
// the rule's expression runs on a window around the match; without a
// screen, on the whole text.
func (e *Engine) tryRule(r *rule, text string, sc *scratch, fold bool) {
	if sc.seen[r.index] {
		return
	}
	sc.seen[r.index] = true
	sc.tried = append(sc.tried, r.index)
	if r.screenSrc == "" || fold {
		e.runRule(r, text, 0, len(text), sc)
		return
	}
	w0, w1 := -1, -1 // the window being gathered
	try := func(c int) {
		if !r.quick.may(text[c:]) {
			return
		}
		if r.opWithin > 0 && strings.IndexAny(text[c:min(len(text), c+r.opWithin)], "=>:|?,") < 0 {
			return
		}
		loc := r.screen().FindStringIndex(text[c:])
		if loc == nil {
			return
		}
		from, to := max(c-r.lead-margin, 0), min(c+loc[1]+margin, len(text))
		if w1 >= 0 && from <= w1 {
			w1 = max(w1, to)
			return
		}
		if w1 >= 0 {
			e.runRule(r, text, w0, w1, sc)
		}
		w0, w1 = from, to
	}
	if r.prefix != "" {
		for at := 0; ; {
			i := strings.Index(text[at:], r.prefix)
			if i < 0 {
				break
			}
			try(at + i)
			at += i + 1
		}
	} else {
		for i, k := range sc.ids {
			if r.hasAnchor(k) {
				try(sc.hits[i])
			}
		}
	}
	if w1 >= 0 {
		e.runRule(r, text, w0, w1, sc)
	}
}

func (r *rule) hasAnchor(k int) bool {
	for _, x := range r.anchors {
		if x == k {
			return true
		}
	}
	return false
}

// runRule is gitleaks's detectRule for a text with no file path, over
// text[w0:w1]: every match of the rule's expression, its secret (the
// capture group the rule names, or the first that is not empty), the
// entropy floor, the global and the rule's allowlists, and the
// "gitleaks:allow" mark on the line.
func (e *Engine) runRule(r *rule, text string, w0, w1 int, sc *scratch) {
	for _, m := range r.re.FindAllStringIndex(text[w0:w1], -1) {
		m[0], m[1] = m[0]+w0, m[1]+w0
		match := text[m[0]:m[1]]
		trimmed := strings.Trim(match, "\n")
		lead := strings.Index(match, trimmed)
		if trimmed == "" {
			lead = 0
		}
		start, end := m[0]+lead, m[0]+lead+len(trimmed)
		secret := trimmed
		sStart, sEnd := start, end
		if g := r.re.FindStringSubmatchIndex(trimmed); len(g) >= 4 {
			pick := -1
			if r.secretGroup > 0 {
				if 2*r.secretGroup+1 < len(g) {
					pick = r.secretGroup
				} else {
					continue
				}
			} else {
				for k := 1; 2*k+1 < len(g); k++ {
					if g[2*k] >= 0 && g[2*k+1] > g[2*k] {
						pick = k
						break
					}
				}
			}
			if pick > 0 && g[2*pick] >= 0 {
				sStart, sEnd = start+g[2*pick], start+g[2*pick+1]
				secret = text[sStart:sEnd]
			}
		}
		line := lineOf(text, start, end)
		if strings.Contains(line, "gitleaks:allow") {
			continue
		}
		if r.entropy != 0 && shannonEntropy(secret) <= r.entropy {
			continue
		}
		if allowed(e.global, secret, trimmed, line) || allowed(r.allowlists, secret, trimmed, line) {
			continue
		}
		if sEnd <= sStart {
			continue
		}
		sc.found = append(sc.found, found{r: r, start: sStart, end: sEnd, line: strings.LastIndexByte(text[:start], '\n') + 1, secret: secret})
	}
}

// lineOf returns the lines of text that [start, end) lies on.
func lineOf(text string, start, end int) string {
	ls := strings.LastIndexByte(text[:start], '\n') + 1
	le := strings.IndexByte(text[end:], '\n')
	if le < 0 {
		le = len(text)
	} else {
		le += end
	}
	return text[ls:le]
}

// allowed is gitleaks's checkFindingAllowed for a text with no file path
// and no commit.
func allowed(lists []*config.Allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		regex := a.RegexAllowed(target)
		stop, _ := a.ContainsStopWord(secret)
		if a.MatchCondition == config.AllowlistMatchAnd {
			var checks []bool
			if len(a.Commits) > 0 {
				checks = append(checks, false)
			}
			if len(a.Paths) > 0 {
				checks = append(checks, false)
			}
			if len(a.Regexes) > 0 {
				checks = append(checks, regex)
			}
			if len(a.StopWords) > 0 {
				checks = append(checks, stop)
			}
			all := true
			for _, c := range checks {
				all = all && c
			}
			if all {
				return true
			}
			continue
		}
		if regex || stop {
			return true
		}
	}
	return false
}

// dedupeGeneric drops a generic finding whose secret a specific rule's
// finding on the same line holds, as gitleaks does.
func dedupeGeneric(fs []found) []found {
	out := fs[:0:0]
	for _, f := range fs {
		keep := true
		if f.r.generic {
			for _, g := range fs {
				if g.r != f.r && !g.r.generic && g.line == f.line && strings.Contains(g.secret, f.secret) {
					keep = false
					break
				}
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}

// shannonEntropy is gitleaks's: over the runes of data, per byte of it.
func shannonEntropy(data string) float64 {
	if data == "" {
		return 0
	}
	counts := make(map[rune]int)
	for _, c := range data {
		counts[c]++
	}
	inv := 1.0 / float64(len(data))
	var h float64
	for _, n := range counts {
		f := float64(n) * inv
		h -= f * math.Log2(f)
	}
	return h
}
