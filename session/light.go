package session

// Light returns the tree Parser.Parse (with no TopKeys) builds, for a value
// that encoding/json decoded whole: strings cut to MaxString bytes,
// containers kept empty from MaxDepth under the entry's "message" and from
// ShallowDepth under its other fields. Tests check the parser, and the
// schemas' promise to constrain nothing deeper, against it.
func Light(v any) any { return light(v, 0, MaxDepth) }

func light(v any, depth, limit int) any {
	switch x := v.(type) {
	case string:
		if len(x) > MaxString {
			return x[:MaxString]
		}
	case map[string]any:
		out := map[string]any{}
		if depth >= limit {
			return out
		}
		for k, e := range x {
			lim := limit
			if depth == 0 && k != "message" {
				lim = ShallowDepth
			}
			out[k] = light(e, depth+1, lim)
		}
		return out
	case []any:
		out := []any{}
		if depth >= limit {
			return out
		}
		for _, e := range x {
			out = append(out, light(e, depth+1, limit))
		}
		return out
	}
	return v
}
