package secrets

// keywords finds where the rules' keywords (and anchors) start in a text, without regard
// to ASCII case (gitleaks lower-cases the text and looks for its lower-case
// keywords). Every keyword has at least two bytes: a table of the first two
// (lower-cased) says at each position whether a keyword may start there.
type keywords struct {
	words []string
	// pairs has a bit set for each pair of lower-cased bytes some keyword
	// starts with; first holds, for such a pair, 1 + the index into
	// lists of the keywords starting with it.
	pairs [1 << 10]uint64
	first [1 << 16]uint16
	lists [][]int
	// single holds the one-byte keywords (none in the default
	// configuration), found byte by byte.
	single    [256][]int
	hasSingle bool
}

var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

func newKeywords(words []string) *keywords {
	k := &keywords{words: words}
	for i, w := range words {
		if len(w) == 1 {
			k.single[lower[w[0]]] = append(k.single[lower[w[0]]], i)
			k.hasSingle = true
			continue
		}
		if len(w) == 0 {
			continue
		}
		key := uint16(lower[w[0]])<<8 | uint16(lower[w[1]])
		k.pairs[key>>6] |= 1 << (key & 63)
		if k.first[key] == 0 {
			k.lists = append(k.lists, nil)
			k.first[key] = uint16(len(k.lists))
		}
		k.lists[k.first[key]-1] = append(k.lists[k.first[key]-1], i)
	}
	return k
}

// scan appends where each keyword starts in text, and which it is, in the
// order of the text.
func (k *keywords) scan(text string, hits, ids []int) ([]int, []int) {
	n := len(text)
	if n < 2 {
		return k.singles(text, hits, ids)
	}
	prev := uint(lower[text[0]])
	for i := 1; i < n; i++ {
		c := uint(lower[text[i]])
		key := prev<<8 | c
		prev = c
		if k.pairs[key>>6]&(1<<(key&63)) == 0 {
			continue
		}
		at := i - 1
		for _, w := range k.lists[k.first[key]-1] {
			word := k.words[w]
			if len(word) > n-at {
				continue
			}
			j := 2
			for j < len(word) && lower[text[at+j]] == word[j] {
				j++
			}
			if j == len(word) {
				hits, ids = append(hits, at), append(ids, w)
			}
		}
	}
	if k.hasSingle {
		return k.singles(text, hits, ids)
	}
	return hits, ids
}

// singles appends where the one-byte keywords are (after the others: no
// rule of the default configuration has one).
func (k *keywords) singles(text string, hits, ids []int) ([]int, []int) {
	for i := 0; i < len(text); i++ {
		for _, w := range k.single[lower[text[i]]] {
			hits, ids = append(hits, i), append(ids, w)
		}
	}
	return hits, ids
}
