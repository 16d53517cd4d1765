package archive

import (
	"fmt"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/visible"
)

// freeSpace returns the file system of path (its device) and the bytes
// free on it to an unprivileged writer, or -1 where that is not known; a
// variable, so tests can shrink it.
var freeSpace = fsSpace

// roomFor refuses a restore whose files, total bytes, are extracted into
// the folder staging and then copied into the store at root, when their
// file systems (one or two) lack the room: total on each, twice on one
// they share, a tenth more and 256 KB as a margin.
func roomFor(root, staging string, total int64) error {
	need := map[uint64]int64{}
	free := map[uint64]int64{}
	where := map[uint64]string{}
	for _, p := range []string{staging, root} {
		dev, n, err := freeSpace(p)
		if err != nil {
			return fmt.Errorf("free space of %s: %w", visible.String(p), err)
		}
		if n < 0 {
			return nil // not known here
		}
		need[dev] += total
		free[dev] = n
		if where[dev] == "" {
			where[dev] = p
		}
	}
	for dev, n := range need {
		// A tenth more and 256 KB: the folders, the journal's log and
		// the rounding of blocks (the apply checks its own writes again).
		want := n + n/10 + 256<<10
		if free[dev] < want {
			return fmt.Errorf("restore needs %s free on the file system of %s (the archived files, %s, extracted then copied, and a margin); it has %s: nothing is planned",
				changeset.Size(want), visible.String(where[dev]), changeset.Size(total), changeset.Size(free[dev]))
		}
	}
	return nil
}

// fileBytes is the sum of the sizes of the files a manifest lists.
func fileBytes(m *Manifest) int64 {
	var n int64
	for _, f := range m.Files {
		n = min(n+f.Size, 1<<62) // each at most 1<<50 (checkOwned)
	}
	return n
}
