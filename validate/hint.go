package validate

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/cfix-dev/cfix/internal/shell"
)

// TranscriptFixes are the codes cfix repair fixes in the transcript a
// finding names, by rewriting it (its line and chain fixers). The repair
// planner fixes these codes and no other in a transcript (repair.Fixable
// is built from this list), and their findings' hint is cfix repair FILE,
// unless the check that made a finding knows the fixer leaves that one
// (Finding.unfixed): a hint is given only where running it fixes the
// finding.
var TranscriptFixes = []Code{
	JSONInvalid, LineTorn, NoFinalNewline, LineGlued, NULBytes, UTF8Invalid, SurrogateLone, LineEmpty,
	UUIDDuplicate, ParentSelf, ChainCycle, ToolResultMiss, ToolUseMiss, ThinkingUnsigned, NULEscape,
	UUIDReplayed, TextBlank, ServerToolSplit, AttachMalformed,
}

// hintFor returns the cfix command that fixes a finding, or "" when no
// command can fix it safely.
func hintFor(f *Finding) string {
	q := shell.Quote(f.Path)
	if f.unfixed {
		return ""
	}
	if slices.Contains(TranscriptFixes, f.Code) {
		return "cfix repair --apply " + q
	}
	switch f.Code {
	case SessionStub, TitleOutOfReach:
		return "cfix repair --apply " + q
	case ParentMissing:
		return "cfix repair --aggressive --only parent-missing --apply " + q
	case ChainForks:
		if strings.Contains(f.Message, "progress") {
			return "cfix repair --aggressive --only progress --apply " + q
		}
	case SessionEmpty, SessionUnwritten:
		return "cfix prune --what empty-sessions --apply"
	case SessionHusk:
		return "cfix prune --what husks --apply"
	case OrphanTasks:
		return "cfix prune --what tasks --apply"
	case OrphanPlan:
		return "cfix prune --what plans --apply"
	case OrphanUsageData:
		return "cfix prune --what usage-data --apply"
	case OrphanPaste:
		return "cfix prune --what paste-cache --apply"
	case OrphanShellSnap:
		return "cfix prune --what shell-snapshots --apply"
	case SessionPIDStale:
		return "cfix prune --what stale-pid-files --apply"
	case IndexMissingFile, IndexUnindexed, IndexPath, IndexDrift:
		return "cfix repair --only index --apply " + shell.Quote(filepath.Dir(f.Path))
	case SessionEnvEmpty, OrphanSessionEnv:
		return "cfix prune --what session-env --apply"
	case OrphanFileHist:
		return "cfix prune --what file-history --apply"
	case OrphanTodos:
		return "cfix prune --what todos --apply"
	case OrphanDebug:
		return "cfix prune --what debug --apply"
	case SessionIDDup, CWDMismatch:
		// A subagent transcript goes with its session: move refuses one.
		if f.Severity > Notice && !subagentFile(f.Path) {
			return "cfix move " + q + " --to DIR"
		}
	}
	return ""
}

// subagentFile reports whether path names a subagent transcript (beside
// its sessions before 2.1.2, under its session's folder after).
func subagentFile(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "agent-")
}

// FixFor returns the command that fixes findings of code, as validate's
// hints give it, with FILE standing for the file a finding names; "" when
// no command fixes it safely.
func FixFor(code Code) string {
	if code == TranscriptLost || code == AgentOrphan {
		// Set by describeLeft, with the session's id, when the session
		// has no conversation anywhere in the store.
		return "cfix export ID -o ID.md && cfix rm ID --apply (ID: the session, when no main transcript of it holds a conversation)"
	}
	for _, c := range Codes {
		if c.Code == code {
			f := &Finding{Code: code, Severity: c.Severity, Path: "FILE"}
			return hintFor(f)
		}
	}
	return ""
}

// Lookup returns what Codes says of code.
func Lookup(code Code) (CodeInfo, bool) {
	for _, c := range Codes {
		if c.Code == code {
			return c, true
		}
	}
	return CodeInfo{}, false
}
