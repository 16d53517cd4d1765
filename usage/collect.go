package usage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/archive"
	"github.com/cfix-dev/cfix/catalog"
	"github.com/cfix-dev/cfix/store"
)

// Record is one reply of a store, counted once: where it was first
// written (the project folder and session of its earliest entry) and
// whether only an archive holds it.
type Record struct {
	Reply
	Project  string // project folder
	Archived bool   // no transcript of the store holds it, an archive does
}

// Options say what Collect reads.
type Options struct {
	Root string // the store
	// ArchiveDir is cfix's archive folder ("": none read).
	ArchiveDir string
	// CacheDir holds the cache of what each file gave ("": none kept).
	CacheDir string
}

// Set is every reply of a store and its archives, each once.
type Set struct {
	Records []Record
	// Files and Archives are how many transcripts and archive files were
	// read (or found in the cache).
	Files, Archives int
	// Warnings name the files that could not be read, and why.
	Warnings []error
	// CacheErr says why the cache could not be written (the next report
	// reads the files again; this one stands).
	CacheErr error
}

// source is one file Collect reads.
type source struct {
	f       store.File
	archive bool
}

// Collect reads the replies of every transcript of the store and of every
// archive of opts.ArchiveDir, through the cache, on every core.
func Collect(opts Options) (*Set, error) {
	l, err := store.Scan(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", opts.Root, err)
	}
	var srcs []source
	for _, f := range l.Files {
		if f.Size > 0 {
			srcs = append(srcs, source{f: f})
		}
	}
	set := &Set{Files: len(srcs)}
	if opts.ArchiveDir != "" {
		ents, err := os.ReadDir(opts.ArchiveDir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("archive folder %s: %w", opts.ArchiveDir, err)
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), archive.Ext) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			f := store.File{Path: filepath.Join(opts.ArchiveDir, e.Name())}
			f.Identify(fi)
			srcs = append(srcs, source{f: f, archive: true})
			set.Archives++
		}
	}
	file := ""
	if opts.CacheDir != "" && filepath.IsAbs(opts.Root) {
		file = catalog.UsageCacheFile(opts.CacheDir, opts.Root)
	}
	cache := catalog.OpenCache(file, opts.Root)
	// Biggest first, so that the cores finish together.
	order := make([]int, len(srcs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return srcs[order[a]].f.Size > srcs[order[b]].f.Size })
	got := make([][]part, len(srcs))
	errs := make([]error, len(srcs))
	store.Parallel(len(order), func(k int) {
		i := order[k]
		got[i], errs[i] = readSource(cache, srcs[i])
	})
	cache.Listed(store.ProjectsDir(opts.Root))
	if opts.ArchiveDir != "" {
		cache.Listed(opts.ArchiveDir)
	}
	set.CacheErr = cache.Save()
	n := 0
	for i := range got {
		for _, p := range got[i] {
			n += len(p.replies)
		}
	}
	at := make(map[string]int, n)
	inStore := make([]bool, 0, n)
	set.Records = make([]Record, 0, n)
	for i, s := range srcs {
		if errs[i] != nil {
			set.Warnings = append(set.Warnings, errs[i])
			continue
		}
		for _, p := range got[i] {
			folder := s.f.Project
			if s.archive {
				folder = p.folder
			}
			for _, r := range p.replies {
				rec := Record{Reply: r, Project: folder, Archived: s.archive}
				j, ok := at[r.ID]
				if r.ID == "" || !ok {
					if r.ID != "" {
						at[r.ID] = len(set.Records)
					}
					set.Records = append(set.Records, rec)
					inStore = append(inStore, !s.archive)
					continue
				}
				into := &set.Records[j]
				if !s.archive {
					inStore[j] = true
				}
				if r.Time != 0 && (into.Time == 0 || r.Time < into.Time) {
					into.Time, into.Session, into.Project = r.Time, r.Session, folder
				}
				if r.Tokens.more(into.Tokens) {
					into.Tokens, into.Model, into.Tier, into.Speed = r.Tokens, r.Model, r.Tier, r.Speed
				}
			}
		}
	}
	for j := range set.Records {
		set.Records[j].Archived = !inStore[j]
	}
	return set, nil
}

// part is the replies of one transcript; folder is its project folder
// (an archive's members name theirs).
type part struct {
	folder  string
	replies []Reply
}

// readSource reads one transcript or archive through the cache.
func readSource(c *catalog.Cache, s source) ([]part, error) {
	if s.archive {
		b, err := c.Usage(s.f, func(fh *os.File, _ int64, _ []byte) ([]byte, error) { return readArchive(s.f.Path, fh) })
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", s.f.Path, err)
		}
		ps, err := decodeArchive(b)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", s.f.Path, err)
		}
		return ps, nil
	}
	b, err := c.Usage(s.f, func(fh *os.File, from int64, old []byte) ([]byte, error) {
		var f fileReplies
		if from > 0 {
			rs, err := decode(old)
			if err != nil {
				return nil, err
			}
			for _, r := range rs {
				f.add(r)
			}
		}
		if err := readFrom(io.NewSectionReader(fh, from, 1<<62), &f); err != nil {
			return nil, err
		}
		return encode(f.list), nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.f.Path, err)
	}
	rs, err := decode(b)
	if err != nil {
		// Not what the cache should hold: the file is read again.
		if rs, err = ReadFile(s.f.Path); err != nil {
			return nil, fmt.Errorf("%s: %w", s.f.Path, err)
		}
	}
	return []part{{replies: rs}}, nil
}

// readArchive reads the transcripts of an archive: for each, its project
// folder and its replies, encoded.
func readArchive(name string, fh *os.File) ([]byte, error) {
	var b []byte
	n := 0
	var body []byte
	_, err := archive.TranscriptsOf(name, fh, func(member string, r io.Reader) error {
		folder := strings.Split(path.Dir(member), "/")
		if len(folder) < 2 {
			return nil // not in a project folder: no transcript
		}
		var f fileReplies
		if err := readFrom(r, &f); err != nil {
			return fmt.Errorf("%s: %w", member, err)
		}
		body = binary.AppendUvarint(body, uint64(len(folder[1])))
		body = append(body, folder[1]...)
		e := encode(f.list)
		body = binary.AppendUvarint(body, uint64(len(e)))
		body = append(body, e...)
		n++
		return nil
	})
	if err != nil {
		return nil, err
	}
	b = binary.AppendUvarint(b, uint64(n))
	return append(b, body...), nil
}

func decodeArchive(b []byte) ([]part, error) {
	d := decoder{b: b}
	n := d.uvarint()
	if n > uint64(len(b)) {
		return nil, errCorrupt
	}
	ps := make([]part, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		folder := string(d.bytes())
		rs, err := decode(d.bytes())
		if err != nil {
			return nil, err
		}
		ps = append(ps, part{folder: folder, replies: rs})
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errCorrupt
	}
	return ps, nil
}
