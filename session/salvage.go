package session

// Salvage finds, in a line that is not JSON, a suffix that is: the
// complete record(s) appended after a torn one lost its newline. Every
// record of the suffix must look like an entry (a "type" and a uuid,
// sessionId or leafUuid), so a fragment of the torn record (an inner
// content block) is never taken for one. It returns the records of the
// longest such suffix that starts at a `{"`, or nil.
//
// The work is linear in the line: a try from one `{"` that fails rules
// out every object it opened (their tries would fail at the same byte,
// or at the ',' or '}' after them), except the one it closed right before
// failing; the tries left are bounded by salvageWork times the line.
func Salvage(p *Parser, raw []byte) [][]byte {
	out, _ := salvage(p, raw)
	return out
}

// salvageWork bounds the bytes Salvage's tries read, in lines: a line
// crafted to defeat the pruning costs no more than that, and yields
// nothing (real torn lines take about two).
const salvageWork = 8

// salvage is Salvage, and the bytes its tries read.
func salvage(p *Parser, raw []byte) (out [][]byte, work int) {
	ruled := newBitset(len(raw))
	p.marks, p.lastStart = ruled, -1
	defer func() { p.marks = nil }()
	budget := salvageWork*len(raw) + 4096
	var e Entry
	for k := 0; k < len(raw)-1; k++ {
		if raw[k] != '{' || raw[k+1] != '"' || ruled.has(k) {
			continue
		}
		if work >= budget {
			return nil, work
		}
		p.markBase, p.lastStart = k, -1
		r := p.Parse(raw[k:])
		end := len(raw)
		if r.Err != nil && !r.Err.Deep {
			end = k + r.Err.Offset
		}
		work += end - k
		// The line itself (k 0) is not JSON, or not entries.
		if r.Err == nil && k > 0 {
			values := append([]any{r.Value}, r.More...)
			entries := true
			for _, v := range values {
				if !HeaderOf(v, &e) || e.Type == "" || (e.UUID == "" && e.SessionID == "" && e.LeafUUID == "") {
					entries = false
					break
				}
			}
			if entries {
				for _, sp := range r.Spans {
					out = append(out, raw[k+sp[0]:k+sp[1]])
				}
				return out, work
			}
			// Later records of the line may still be entries: their
			// tries are left open.
			for _, sp := range r.Spans[1:] {
				ruled.clear(k + sp[0])
			}
		}
		// The object closed right before the failure would fail no
		// sooner than the end of its own value: its try is left open.
		if p.lastStart >= 0 && blank(raw[k+p.lastEnd:end]) {
			ruled.clear(k + p.lastStart)
		}
	}
	return nil, work
}

// blank reports whether b is JSON whitespace only.
func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// bitset is a set of offsets in a line.
type bitset []uint64

func newBitset(n int) *bitset {
	b := make(bitset, (n+63)/64)
	return &b
}

func (b *bitset) set(i int) {
	if i >= 0 && i/64 < len(*b) {
		(*b)[i/64] |= 1 << (i % 64)
	}
}

func (b *bitset) clear(i int) {
	if i >= 0 && i/64 < len(*b) {
		(*b)[i/64] &^= 1 << (i % 64)
	}
}

func (b *bitset) has(i int) bool { return (*b)[i/64]&(1<<(i%64)) != 0 }
