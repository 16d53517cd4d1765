package archive

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/cfix-dev/cfix/changeset"
	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/visible"
)

// maxShown is how many files of a restored folder Show lists.
const maxShown = 40

// member is what a restore plan creates from an archive: the member
// named part of the archive whose manifest is m.
type member struct {
	m    *Manifest
	part string
}

// Diff writes the diff of a restore plan: what each restored file and
// folder gets from its archive, from the manifests (a dry run extracts
// nothing, so there are no files to read; a folder's files listed with
// o.Full, else counted), then the other changes (index rewrites, the
// archive files' removal) as diffs.
func (p *RestorePlan) Diff(w io.Writer, cs *changeset.ChangeSet, o changeset.DiffOptions) error {
	bw := bufio.NewWriter(w)
	for i := range cs.Ops {
		op := &cs.Ops[i]
		mb, ok := p.members[op.Path]
		switch {
		case ok && op.Action == changeset.CreateDir && !o.Full:
			files, size := 0, int64(0)
			for _, f := range mb.m.Files {
				if !f.Dir && strings.HasPrefix(f.Path, mb.part+"/") {
					files++
					size += f.Size
				}
			}
			fmt.Fprintf(bw, "--- /dev/null\n+++ %s/\n@@ %s @@\n+ new folder: %d %s, %s\n", visible.String(op.Path), visible.String(op.Reason), files, plural.Of(files, "file"), changeset.Size(size))
		case ok && op.Action == changeset.CreateDir:
			fmt.Fprintf(bw, "--- /dev/null\n+++ %s/\n", visible.String(op.Path))
			n := 0
			for _, f := range mb.m.Files {
				if f.Dir || !strings.HasPrefix(f.Path, mb.part+"/") {
					continue
				}
				if n++; n > maxShown {
					fmt.Fprintf(bw, "+…\n")
					break
				}
				fmt.Fprintf(bw, "+%s (%s)\n", visible.String(strings.TrimPrefix(f.Path, mb.part+"/")), changeset.Size(f.Size))
			}
		case ok:
			for _, f := range mb.m.Files {
				if f.Path == mb.part {
					fmt.Fprintf(bw, "--- /dev/null\n+++ %s\n@@ %s, mode %04o, modified %s @@ %s\n", visible.String(op.Path), changeset.Size(f.Size),
						safeMode(f), f.ModTime.Local().Format("2006-01-02 15:04:05"), visible.String(op.Reason))
				}
			}
		default:
			one := *cs
			one.Ops = cs.Ops[i : i+1]
			if err := bw.Flush(); err != nil {
				return err
			}
			if err := changeset.DiffWith(bw, &one, o); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
