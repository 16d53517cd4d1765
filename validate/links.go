package validate

import (
	"fmt"
	"os"
	"strings"

	"github.com/cfix-dev/cfix/store"
)

// linkFindings reports the project folders of the layout that are
// symbolic links (validate reads through them, Claude Code's /resume
// picker does not, and planners write nothing through one that leads out
// of the store), and the names of transcripts that are not files.
func linkFindings(l *store.Layout) []Finding {
	var out []Finding
	for _, pl := range l.Links {
		f := Finding{Code: ProjectSymlink, Severity: SeverityOf(ProjectSymlink), Path: pl.Path}
		switch {
		case pl.Err != nil && pl.Dest == "":
			f.Message = fmt.Sprintf("project folder cannot be read as a symbolic link: %v", pl.Err)
		case pl.Err != nil:
			f.Message = fmt.Sprintf("project folder is a %v; its sessions were not checked", pl.Err)
		default:
			f.Message = fmt.Sprintf("project folder is a symbolic link to %s: its sessions were checked through it, "+
				"but Claude Code's /resume picker lists none of them (anthropics/claude-code#60965; claude --resume ID still finds one)", pl.Real)
			if pl.Outside {
				f.Message += "; it leads out of the store, and cfix planners write nothing through it"
			}
		}
		out = append(out, f)
	}
	for _, sp := range l.Specials {
		out = append(out, Finding{Code: FileSpecial, Severity: SeverityOf(FileSpecial), Path: sp.Path,
			Message: "named like a transcript but " + sp.What + ": cfix reads nothing from it and no planner touches it"})
	}
	return out
}

// outsideLinks returns a predicate telling whether a path lies behind a
// project folder linked out of the store: no cfix command writes there,
// so its findings get no hint.
func outsideLinks(l *store.Layout) func(path string) bool {
	var dirs []string
	for _, pl := range l.Links {
		if pl.Outside {
			dirs = append(dirs, pl.Path+string(os.PathSeparator))
		}
	}
	return func(path string) bool {
		for _, d := range dirs {
			if strings.HasPrefix(path, d) {
				return true
			}
		}
		return false
	}
}
