package mcpserver

import (
	"context"
	"sort"
	"time"

	"github.com/cfix-dev/cfix/export"
	"github.com/cfix-dev/cfix/show"
	"github.com/cfix-dev/cfix/store"
)

// Warming: the first read of a big transcript passes over the whole file
// (its header and its resumed chain need every line): about 2 s for a
// 200 MB one. So that the model's first read_session of it is a page's
// work, the server writes the index of the newest big transcripts once it
// has started (warmDelay later, when the client has finished its own
// start), one at a time, each in its turn with the tool calls (see
// server.turn): the newest, at most warmMax of them and warmBytes
// in all. A transcript written to within warmQuiet is left
// alone: a live session changes under its index.
const (
	warmDelay = 2 * time.Second
	warmQuiet = time.Minute
	// warmMax is how many transcripts are warmed: the newest, under the
	// index folder's bound (32) so that warming leaves room for what
	// reads used; warmBytes bounds what one start reads to warm them.
	warmMax   = 24
	warmBytes = 1 << 30
)

// warmCandidates are the main transcripts of l worth an index, newest
// first: at least export.IndexMin bytes, unchanged since before now-warmQuiet.
func warmCandidates(l *store.Layout, now time.Time) []store.File {
	var fs []store.File
	for _, f := range l.Files {
		if f.Kind == store.KindSession && f.Size >= export.IndexMin && now.Sub(f.ModTime) >= warmQuiet {
			fs = append(fs, f)
		}
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].ModTime.After(fs[j].ModTime) })
	var total int64
	for i, f := range fs {
		if i == warmMax || total+f.Size > warmBytes {
			return fs[:i]
		}
		total += f.Size
	}
	return fs
}

// warm writes the indexes of the warm candidates of the store, after
// delay, until ctx ends. It is a cache: what fails is left undone.
func (s *server) warm(ctx context.Context, delay time.Duration) {
	if s.opts.Index == "" {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(delay):
	}
	l, err := store.Scan(s.opts.Root)
	if err != nil {
		return
	}
	conf := store.NewConfine(s.opts.Root)
	for _, f := range warmCandidates(conf.Keep(l), time.Now()) {
		if ctx.Err() != nil {
			return
		}
		fam, err := show.ResolveWith(s.opts.Root, store.NewResolver(s.opts.Root, l).InStore(), f.Path)
		if err != nil || conf.Check(fam.Layout) != nil {
			continue
		}
		done, err := s.turn(ctx)
		if err != nil {
			return
		}
		export.Prepare(fam, s.opts.Index)
		done()
	}
}
