package show

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cfix-dev/cfix/desktop"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/store"
	"github.com/cfix-dev/cfix/trim"
	"github.com/cfix-dev/cfix/validate"
)

// Report is what cfix show tells of a session; cfix show --json prints it.
type Report struct {
	Root    string `json:"root"`
	Session string `json:"session"`
	// Resumable is false for a file that is no session of the store;
	// NotResumable then says why.
	Resumable    bool   `json:"resumable"`
	NotResumable string `json:"not_resumable,omitempty"`
	// The session's main transcripts taken together (subagents have
	// their own figures in Files).
	Titles   []Title  `json:"titles"`
	Slugs    []string `json:"slugs"`
	CWDs     []string `json:"cwds"`
	Versions []string `json:"versions"`
	Models   []string `json:"models"`
	First    string   `json:"first"`
	Last     string   `json:"last"`
	// Prompts counts every prompt of the main transcripts; Turns are
	// those of the history a resume loads, numbered as cfix fork --turn
	// counts them (trim.Turns).
	Prompts     int            `json:"prompts"`
	Turns       []trim.Turn    `json:"turns"`
	Entries     int            `json:"entries"`
	Types       map[string]int `json:"types"`
	Compactions int            `json:"compactions"`
	// Usage sums every transcript of the family, subagents included.
	Usage    Usage              `json:"usage"`
	Files    []File             `json:"files"`
	Sidecars []Sidecar          `json:"sidecars"`
	Findings []validate.Finding `json:"findings"`
	Counts   map[string]int     `json:"counts"`
	// Left is what is left of a session whose conversation is gone while
	// its subagents survive; nil for every other.
	Left *Left `json:"left,omitempty"`
}

// File is one transcript of the family.
type File struct {
	Path string `json:"path"`
	// Kind: main, subagent, workflow (a subagent a workflow started), or
	// side (compaction, prompt suggestion, side question: never resumed).
	Kind        string `json:"kind"`
	Layout      string `json:"layout,omitempty"` // subagents: flat or nested
	Agent       string `json:"agent,omitempty"`
	AgentType   string `json:"agent_type,omitempty"`
	Description string `json:"description,omitempty"`
	ToolUseID   string `json:"tool_use_id,omitempty"`
	Workflow    string `json:"workflow,omitempty"`
	Side        string `json:"side,omitempty"` // the side run's label: acompact, aprompt_suggestion, ...
	Size        int64  `json:"size"`
	Stats       *Stats `json:"stats"`
	// Resume is what a resume of a main transcript loads.
	Resume *Resume `json:"resume,omitempty"`
}

// Resume is what a resume of a main transcript loads against what sits on
// other branches, as the writing version's loader works (session.Loaders).
type Resume struct {
	Version string `json:"version"`
	Loader  string `json:"loader"`
	Leaf    int    `json:"leaf_line"` // the line of the entry it starts from; 0 for none
	Loaded  int    `json:"loaded"`    // entries loaded
	// Compacted counts the entries behind the compactions on the loaded
	// chain: summarized, not loaded.
	Compacted int `json:"compacted"`
	// Branches counts the chain entries on no loaded or compacted chain:
	// forks, retries, rewinds, abandoned runs.
	Branches int `json:"other_branches"`
	// Progress counts the progress entries on no loaded chain (hook and
	// tool progress hang off the chain; a resume never loads them).
	Progress  int  `json:"progress"`
	Sidechain int  `json:"sidechain"` // inline subagent entries
	Dropped   int  `json:"dropped_tool_uses"`
	Cut       bool `json:"cut"`
	Cycle     bool `json:"cycle"`
	// OtherBranches are the branches that hold messages a resume does not
	// load, the newest first (at most 20; BranchCount counts them all):
	// cfix fork --at a branch's leaf resumes it.
	OtherBranches []validate.Branch `json:"branches"`
	BranchCount   int               `json:"branch_count"`
}

// Sidecar is a file or folder of the session beside its transcripts.
type Sidecar struct {
	Kind  string `json:"kind"`
	Path  string `json:"path"`
	Dir   bool   `json:"dir"`
	Files int    `json:"files"`
	Size  int64  `json:"size"`
}

// Build reads the family: each transcript once, then validate's checks of
// the session.
func Build(fam *Family) (*Report, error) {
	rep := &Report{Root: fam.Root, Session: fam.Session, Resumable: fam.Loose == "", NotResumable: fam.Why, Turns: []trim.Turn{},
		Types: map[string]int{}, Counts: map[string]int{"error": 0, "warning": 0, "notice": 0}}
	if fam.Loose != "" {
		fi, err := os.Stat(fam.Loose)
		if err != nil {
			return nil, err
		}
		st, err := Read(fam.Loose, false)
		if err != nil {
			return nil, err
		}
		rep.Files = []File{{Path: fam.Loose, Kind: "loose", Size: fi.Size(), Stats: st}}
		rep.sum(st)
		rep.Usage = st.Usage
		rep.finish()
		return rep, nil
	}
	slugs := map[string]bool{}
	for _, f := range fam.Layout.Files {
		rf := File{Path: f.Path, Size: f.Size, Agent: f.Agent}
		switch {
		case f.Kind == store.KindSession:
			rf.Kind = "main"
		case f.Side():
			rf.Kind, rf.Side = "side", f.SideLabel()
		case Workflow(f) != "":
			rf.Kind, rf.Workflow = "workflow", Workflow(f)
		default:
			rf.Kind = "subagent"
		}
		if f.Kind == store.KindAgentFlat {
			rf.Layout = "flat"
		} else if f.Kind == store.KindAgent {
			rf.Layout = "nested"
			m, err := MetaOf(f.Path)
			if err != nil {
				return nil, err
			}
			rf.AgentType, rf.Description, rf.ToolUseID = m.AgentType, m.Description, m.ToolUseID
		}
		st, err := Read(f.Path, rf.Kind == "main")
		if err != nil {
			return nil, err
		}
		rf.Stats = st
		if rf.Kind == "main" {
			rf.Resume = resumeOf(st.chain)
			rep.sum(st)
			if len(rep.Turns) == 0 && rep.Resumable {
				// A file trim cannot read line by line (glued records)
				// has no turns.
				if ts, err := trim.Turns(f.Path); err == nil {
					rep.Turns = ts
				}
			}
		}
		st.chain = nil
		rep.Usage.add(st.Usage)
		for _, s := range st.Slugs {
			slugs[s] = true
		}
		rep.Files = append(rep.Files, rf)
	}
	if err := rep.sidecars(fam, slugs); err != nil {
		return nil, err
	}
	left, err := leftOf(fam)
	if err != nil {
		return nil, err
	}
	rep.Left = left
	var targets []string
	for _, f := range fam.Layout.Files {
		targets = append(targets, f.Path)
	}
	vr, err := validate.Run(validate.Options{Root: fam.Root, Targets: targets, DesktopDir: fam.DesktopDir})
	if err != nil {
		return nil, err
	}
	rep.desktopTitles(fam)
	rep.Findings, rep.Counts = vr.Findings, vr.Counts
	rep.finish()
	return rep, nil
}

// desktopTitles adds the titles Claude Desktop lists the session under
// (kind "desktop"), one per entry of its index that names the session. An
// index that cannot be read adds none: validate's findings say why.
func (r *Report) desktopTitles(fam *Family) {
	if fam.DesktopDir == "" || fam.Session == "" {
		return
	}
	x, err := desktop.Read(fam.DesktopDir)
	if err != nil {
		return
	}
	for _, e := range x.For(fam.Session) {
		if e.Title != "" {
			r.Titles = append(r.Titles, Title{Kind: "desktop", Text: e.Title})
		}
	}
}

func (r *Report) sum(st *Stats) {
	merge := func(dst *[]string, src []string) {
		for _, v := range src {
			if !contains(*dst, v) {
				*dst = append(*dst, v)
			}
		}
	}
	for _, t := range st.Titles {
		found := false
		for i := range r.Titles {
			if r.Titles[i].Kind == t.Kind {
				r.Titles[i].Text, found = t.Text, true
			}
		}
		if !found {
			r.Titles = append(r.Titles, t)
		}
	}
	merge(&r.Slugs, st.Slugs)
	merge(&r.CWDs, st.CWDs)
	merge(&r.Versions, st.Versions)
	merge(&r.Models, st.Models)
	if st.First != "" && (r.First == "" || st.First < r.First) {
		r.First = st.First
	}
	if st.Last > r.Last {
		r.Last = st.Last
	}
	r.Prompts += st.Prompts
	r.Entries += st.Entries
	r.Compactions += st.Compactions
	for k, v := range st.Types {
		r.Types[k] += v
	}
}

func (r *Report) finish() {
	sort.Slice(r.Versions, func(i, j int) bool { return session.VersionLess(r.Versions[i], r.Versions[j]) })
	sort.Strings(r.Models)
	for _, p := range []*[]string{&r.Slugs, &r.CWDs, &r.Versions, &r.Models} {
		if *p == nil {
			*p = []string{}
		}
	}
	if r.Titles == nil {
		r.Titles = []Title{}
	}
	if r.Files == nil {
		r.Files = []File{}
	}
	if r.Sidecars == nil {
		r.Sidecars = []Sidecar{}
	}
	if r.Findings == nil {
		r.Findings = []validate.Finding{}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// resumeOf models the resume of a main transcript whose graph c holds.
func resumeOf(c *validate.ChainReader) *Resume {
	loaded, ld := c.Load(false)
	g := c.Graph
	r := &Resume{Version: loaded.Version, Loader: loaded.Loader, Loaded: len(ld.Chain), Dropped: len(loaded.DroppedToolUses),
		Cut: loaded.Cut, Cycle: loaded.Cycle}
	if ld.Leaf >= 0 {
		r.Leaf = g.Nodes[ld.Leaf].Line
	}
	on := map[int]bool{}
	for _, i := range ld.Chain {
		on[i] = true
	}
	for _, i := range Compacted(g, ld.Chain) {
		if !on[i] {
			on[i] = true
			r.Compacted++
		}
	}
	for i := range g.Nodes {
		switch {
		case on[i]:
		case g.Nodes[i].Sidechain:
			r.Sidechain++
		case g.Nodes[i].Type == "progress":
			r.Progress++
		default:
			r.Branches++
		}
	}
	onList := make([]bool, len(g.Nodes))
	for i := range on {
		onList[i] = true
	}
	r.OtherBranches, r.BranchCount = validate.OtherBranches(g, onList, make([]bool, len(g.Nodes)), func(i int) bool {
		n := &g.Nodes[i]
		return !on[i] && !n.Sidechain && (n.Type == "user" || n.Type == "assistant")
	}, 20)
	return r
}

// Compacted returns the entries behind the compactions of a loaded chain,
// oldest first: from each compact boundary's logicalParentUuid (or, when
// the file lacks it, the message written right before the boundary) back
// to a root, through earlier compactions too. A resume sends the summary,
// not these.
func Compacted(g *session.Graph, chain []int) []int {
	var out []int
	seen := map[int]bool{}
	for len(chain) > 0 {
		first := &g.Nodes[chain[0]]
		if first.Type != "system" || first.Subtype != "compact_boundary" {
			break
		}
		j := g.Lookup(first.Logical)
		if j < 0 {
			// The file lacks the logical parent (Claude Code names one it
			// never wrote): the message written right before the boundary.
			for k := chain[0] - 1; k >= 0; k-- {
				if n := &g.Nodes[k]; !n.Sidechain && (n.Type == "user" || n.Type == "assistant") {
					j = k
					break
				}
			}
		}
		if j < 0 || seen[j] {
			break
		}
		walk, _ := g.Walk(j)
		var fresh []int
		for _, k := range walk {
			if !seen[k] {
				seen[k] = true
				fresh = append(fresh, k)
			}
		}
		out = append(fresh, out...)
		chain = walk
	}
	return out
}

// sidecars lists what belongs to the session beside its transcripts: the
// session folders' other files (tool-results/, workflows/, a workflow's
// journal, custom-title.json), and file-history, todos, session-env,
// debug, tasks, plans, usage-data and background jobs under the store.
func (r *Report) sidecars(fam *Family, slugs map[string]bool) error {
	root, id := fam.Root, fam.Session
	add := func(kind, path string) error {
		fi, err := os.Lstat(path)
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		s := Sidecar{Kind: kind, Path: path, Dir: fi.IsDir(), Files: 1, Size: fi.Size()}
		if s.Dir {
			s.Files, s.Size = 0, 0
			err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() {
					s.Files++
					if i, err := d.Info(); err == nil {
						s.Size += i.Size()
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		r.Sidecars = append(r.Sidecars, s)
		return nil
	}
	for _, d := range fam.Layout.SessionDirs {
		ents, err := os.ReadDir(d.Path)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := filepath.Join(d.Path, e.Name())
			if e.Name() != "subagents" {
				if err := add(sessionDirKind(e.Name()), p); err != nil {
					return err
				}
				continue
			}
			// Under subagents/: what is not a transcript or its meta
			// (a workflow's journal.jsonl).
			err := filepath.WalkDir(p, func(q string, de fs.DirEntry, err error) error {
				if err != nil || de.IsDir() {
					return err
				}
				n := de.Name()
				if strings.HasPrefix(n, "agent-") && (strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".meta.json")) {
					return nil
				}
				kind := "subagents"
				if n == "journal.jsonl" && filepath.Base(filepath.Dir(filepath.Dir(q))) == "workflows" {
					// subagents/workflows/<run id>/journal.jsonl: the
					// Workflow tool's run journal (measured, 2.1.223 and
					// 2.1.332).
					kind = "workflow journal"
				}
				return add(kind, q)
			})
			if err != nil {
				return err
			}
		}
	}
	if !store.IsUUID(id) {
		return nil
	}
	for _, s := range []struct{ kind, path string }{
		{"file-history", filepath.Join(root, "file-history", id)},
		{"session-env", filepath.Join(root, "session-env", id)},
		{"debug", filepath.Join(root, "debug", id+".txt")},
		{"tasks", filepath.Join(root, "tasks", id)},
		{"usage-data", filepath.Join(root, "usage-data", "session-meta", id+".json")},
		{"usage-data", filepath.Join(root, "usage-data", "facets", id+".json")},
	} {
		if err := add(s.kind, s.path); err != nil {
			return err
		}
	}
	// jobs/<short>/: the record of a background session (claude --bg,
	// measured with 2.1.332), named by its state.json's sessionId.
	jobs, err := store.Jobs(root)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.SessionID == id {
			if err := add("job", j.Dir); err != nil {
				return err
			}
		}
	}
	todos, _ := filepath.Glob(filepath.Join(root, "todos", id+"-agent-*.json"))
	for _, p := range todos {
		if err := add("todos", p); err != nil {
			return err
		}
	}
	if len(slugs) > 0 {
		plans, err := store.Plans(root)
		if err != nil {
			return err
		}
		for _, p := range plans {
			if store.PlanNamedBy(filepath.Base(p.Path), slugs) {
				if err := add("plans", p.Path); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func sessionDirKind(name string) string {
	switch name {
	case "tool-results":
		return "tool-results"
	case "workflows":
		return "workflows"
	case "custom-title.json":
		return "custom-title"
	}
	return "session folder"
}
