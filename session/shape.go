package session

import "hash/maphash"

// Shaper hashes the shape of a light tree: the fields at every level, the
// JSON type of every value, and the string values of the fields it is told
// count (those some schema compares with const or enum). Parser.Scan
// computes the same hash from a line without building the tree. A Shaper
// is not changed after NewShaper and is safe for concurrent use.
type Shaper struct {
	seed   maphash.Seed
	values map[string]bool
}

// NewShaper returns a Shaper with a fresh seed; values names the fields
// whose string values count.
func NewShaper(values map[string]bool) *Shaper {
	return &Shaper{seed: maphash.MakeSeed(), values: values}
}

// Shape hashes a light tree (map[string]any, []any, string, bool, nil or a
// number).
func (s *Shaper) Shape(v any) uint64 { return s.shape(v, 0) }

// The hash of each kind of value, given the salt its parent gives it (the
// hash of its key in an object, 0 in an array). An object's fields are
// summed, so their order does not count; an array's elements are chained.
const (
	objectSeed = 0x9e3779b97f4a7c15
	valueSalt  = 0x5bd1e995
	arraySeed  = 2
)

func (s *Shaper) shape(v any, salt uint64) uint64 {
	switch x := v.(type) {
	case map[string]any:
		h := uint64(objectSeed)
		for k, e := range x {
			kh := maphash.String(s.seed, k)
			var vh uint64
			if str, ok := e.(string); ok && s.values[k] {
				vh = maphash.String(s.seed, str) ^ valueSalt
			} else {
				vh = s.shape(e, kh)
			}
			h += field(kh, vh)
		}
		return endObject(h, salt)
	case []any:
		h := uint64(arraySeed)
		for _, e := range x {
			h = element(h, s.shape(e, 0))
		}
		return endArray(h, salt)
	case string:
		return mix(salt ^ 4)
	case bool:
		return mix(salt ^ 5)
	case nil:
		return mix(salt ^ 6)
	}
	// Numbers: json.Number, float64, ints.
	return mix(salt ^ 7)
}

// field is what one field (key hash kh, value hash vh) adds to its object.
func field(kh, vh uint64) uint64 { return mix(kh ^ mix(vh)) }

// element chains an element's hash onto its array's.
func element(h, eh uint64) uint64 { return mix(h ^ eh) }

func endObject(h, salt uint64) uint64 { return mix(h ^ salt ^ 1) }

func endArray(h, salt uint64) uint64 { return mix(h ^ salt ^ 3) }

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
