package session

// Salvage finds, in a line that is not JSON, a suffix that is: the
// complete record(s) appended after a torn one lost its newline. Every
// record of the suffix must look like an entry (a "type" and a uuid,
// sessionId or leafUuid), so a fragment of the torn record (an inner
// content block) is never taken for one. A failed try stops where the
// fragment it started at ends, so the search stays linear.
func Salvage(p *Parser, raw []byte) [][]byte {
	var e Entry
	for k := 1; k < len(raw)-1; k++ {
		if raw[k] != '{' || raw[k+1] != '"' {
			continue
		}
		r := p.Parse(raw[k:])
		if r.Err != nil {
			continue
		}
		values := append([]any{r.Value}, r.More...)
		entries := true
		for _, v := range values {
			if !HeaderOf(v, &e) || e.Type == "" || (e.UUID == "" && e.SessionID == "" && e.LeafUUID == "") {
				entries = false
				break
			}
		}
		if !entries {
			continue
		}
		var out [][]byte
		for _, sp := range r.Spans {
			out = append(out, raw[k+sp[0]:k+sp[1]])
		}
		return out
	}
	return nil
}
