package usage

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/cfix-dev/cfix/session"
)

// fileReplies is what one transcript holds: its replies, each once.
type fileReplies struct {
	list []Reply
	at   map[string]int // index in list by message id
}

// add takes r in: a reply seen before (its id) keeps the later state of
// the two (the larger usage) and the earlier time.
func (f *fileReplies) add(r Reply) {
	if r.ID == "" {
		f.list = append(f.list, r)
		return
	}
	if f.at == nil {
		f.at = map[string]int{}
	}
	i, ok := f.at[r.ID]
	if !ok {
		f.at[r.ID] = len(f.list)
		f.list = append(f.list, r)
		return
	}
	merge(&f.list[i], r)
}

// merge folds r, another entry or copy of the reply *into, into it.
func merge(into *Reply, r Reply) {
	t := into.Time
	if r.Tokens.more(into.Tokens) {
		*into = r
	}
	if t != 0 && (into.Time == 0 || t < into.Time) {
		into.Time = t
	}
}

// linesRead counts the bytes of the lines readFrom read (for tests).
var linesRead atomic.Int64

var bufs = sync.Pool{New: func() any { return make([]byte, session.DefaultBufSize) }}

// readFrom reads the replies of the transcript r into f (which holds
// those of the bytes before r, when r starts at an offset).
func readFrom(r io.Reader, f *fileReplies) error {
	buf := bufs.Get().([]byte)
	rd := session.NewReader(r, buf)
	var in interner
	var n int64
	defer func() { linesRead.Add(n) }()
	for rd.Next() {
		n += rd.Line().Len() + 1
		if rep, ok := parseLine(rd.Line().Raw, &in); ok {
			f.add(rep)
		}
	}
	if b := rd.Buffer(); b != nil {
		bufs.Put(b[:cap(b)])
	}
	return rd.Err()
}

// ReadFile reads the replies of the transcript at path, each once.
func ReadFile(path string) ([]Reply, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var f fileReplies
	if err := readFrom(fh, &f); err != nil {
		return nil, err
	}
	return f.list, nil
}

// encode writes replies as the cache keeps them: a table of the strings
// that repeat, then each reply.
func encode(rs []Reply) []byte {
	idx := map[string]uint64{}
	var strs []string
	ref := func(s string) uint64 {
		if i, ok := idx[s]; ok {
			return i
		}
		idx[s] = uint64(len(strs))
		strs = append(strs, s)
		return idx[s]
	}
	for _, r := range rs {
		ref(r.Model)
		ref(r.Session)
		ref(r.Tier)
		ref(r.Speed)
	}
	b := binary.AppendUvarint(nil, uint64(len(strs)))
	for _, s := range strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(rs)))
	for _, r := range rs {
		b = binary.AppendUvarint(b, uint64(len(r.ID)))
		b = append(b, r.ID...)
		b = binary.AppendVarint(b, r.Time)
		for _, s := range []string{r.Model, r.Session, r.Tier, r.Speed} {
			b = binary.AppendUvarint(b, idx[s])
		}
		for _, n := range []int64{r.Input, r.Output, r.CacheWrite, r.CacheWrite1h, r.CacheRead, r.WebSearch, r.WebFetch} {
			b = binary.AppendUvarint(b, uint64(n))
		}
	}
	return b
}

var errCorrupt = errors.New("usage cache: corrupt")

// decode reads what encode wrote.
func decode(b []byte) ([]Reply, error) {
	d := decoder{b: b}
	n := d.uvarint()
	if n > uint64(len(b)) {
		return nil, errCorrupt
	}
	strs := make([]string, n)
	for i := range strs {
		strs[i] = string(d.bytes())
	}
	str := func() string {
		i := d.uvarint()
		if i >= uint64(len(strs)) {
			d.err = errCorrupt
			return ""
		}
		return strs[i]
	}
	m := d.uvarint()
	if m > uint64(len(b)) {
		return nil, errCorrupt
	}
	rs := make([]Reply, m)
	for i := range rs {
		r := &rs[i]
		r.ID = string(d.bytes())
		r.Time = d.varint()
		r.Model, r.Session, r.Tier, r.Speed = str(), str(), str(), str()
		for _, p := range []*int64{&r.Input, &r.Output, &r.CacheWrite, &r.CacheWrite1h, &r.CacheRead, &r.WebSearch, &r.WebFetch} {
			*p = int64(d.uvarint())
		}
		if d.err != nil {
			return nil, d.err
		}
	}
	if len(d.b) != 0 {
		return nil, errCorrupt
	}
	return rs, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err, d.b = errCorrupt, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err, d.b = errCorrupt, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err, d.b = errCorrupt, nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}
