package changeset

// A small allocation-free JSON scanner for the transform's hot loop: it
// finds the byte ranges of an object's fields and an array's elements
// without building anything (session.Fields does the same with key
// strings). It checks structure, not every detail of the grammar, and stops
// at depth 256; the transform only rewrites lines it could scan whole, and
// copies every other line (those nested deeper too) as it is.

const maxScanDepth = 256

// jsonField is one field of an object: the raw bytes of its key (between
// the quotes, escapes left as they are) and the range of its value.
type jsonField struct {
	key        []byte
	start, end int
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the offset just past the string starting at b[i]
// (a '"'), or -1 when it is not a valid JSON string.
func scanString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// scanNumber returns the offset just past the number at b[i], or -1.
func scanNumber(b []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// scanValue returns the offset just past the value starting at b[i], or -1.
func scanValue(b []byte, i, depth int) int {
	if i >= len(b) || depth > maxScanDepth {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{':
		return scanObject(b, i, depth, nil)
	case c == '[':
		return scanArray(b, i, depth, nil)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	}
	return -1
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// scanObject scans the object at b[i], calling fn (when set) for each
// field. It returns the offset just past the object, or -1.
func scanObject(b []byte, i, depth int, fn func(f jsonField)) int {
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		ke := scanString(b, i)
		if ke < 0 {
			return -1
		}
		key := b[i+1 : ke-1]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		vs := skipWS(b, i+1)
		ve := scanValue(b, vs, depth+1)
		if ve < 0 {
			return -1
		}
		if fn != nil {
			fn(jsonField{key: key, start: vs, end: ve})
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// scanArray scans the array at b[i], calling fn (when set) for each
// element's range. It returns the offset just past the array, or -1.
func scanArray(b []byte, i, depth int, fn func(s, e int)) int {
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		e := scanValue(b, i, depth+1)
		if e < 0 {
			return -1
		}
		if fn != nil {
			fn(i, e)
		}
		i = skipWS(b, e)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// objectFields lists the fields of the object at b[at] into buf. ok is
// false when b[at:] is not an object that scans whole.
func objectFields(b []byte, at int, buf []jsonField) ([]jsonField, int, bool) {
	buf = buf[:0]
	end := scanObject(b, at, 0, func(f jsonField) { buf = append(buf, f) })
	return buf, end, end >= 0
}
