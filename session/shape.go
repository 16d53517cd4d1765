package session

import "hash/maphash"

// Shaper hashes the shape of a light tree: the fields it counts at every
// level, the JSON type of their values, and the string values of the
// fields whose values count (those some schema compares with const or
// enum). Parser.Scan computes the same hash from a line without building
// the tree. A Shaper is not changed after NewShaper and is safe for
// concurrent use.
type Shaper struct {
	seed   maphash.Seed
	values map[string]bool
	named  map[string]bool // nil: every field counts
}

// NewShaper returns a Shaper with a fresh seed. values names the fields
// whose string values count. named, when not nil, names the fields that
// count: a field of another name is left out of the hash with all it holds
// (for a validator, the fields some schema names; a field no schema names
// cannot change a verdict, nor can anything inside it). The fields HeaderOf
// reads always count, so Scan never reads the header from a field it
// leaves out.
func NewShaper(values, named map[string]bool) *Shaper {
	s := &Shaper{seed: maphash.MakeSeed(), values: values}
	if named != nil {
		s.named = map[string]bool{}
		for k, ok := range named {
			s.named[k] = ok
		}
		for _, k := range HeaderKeys {
			s.named[k] = true
		}
		for k := range headerMessage {
			s.named[k] = true
		}
		for k := range headerBlock {
			s.named[k] = true
		}
	}
	return s
}

// counted reports whether field k counts.
func (s *Shaper) counted(k string) bool { return s.named == nil || s.named[k] }

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

	kindString = 4
	kindBool   = 5
	kindNull   = 6
	kindNumber = 7
)

func (s *Shaper) shape(v any, salt uint64) uint64 {
	switch x := v.(type) {
	case map[string]any:
		h := uint64(objectSeed)
		for k, e := range x {
			if !s.counted(k) {
				continue
			}
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
		return leaf(salt, kindString)
	case bool:
		return leaf(salt, kindBool)
	case nil:
		return leaf(salt, kindNull)
	}
	// Numbers: json.Number, float64, ints.
	return leaf(salt, kindNumber)
}

// leaf is the hash of a string, bool, null or number.
func leaf(salt, kind uint64) uint64 { return mix(salt ^ kind) }

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
