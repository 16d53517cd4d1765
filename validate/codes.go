// Package validate turns a Claude Code store into findings: each has a
// stable code, a severity, a file and line, and the command that fixes it.
package validate

// Severity orders findings by how much they matter.
type Severity int

const (
	// Notice is worth knowing: an entry type with no schema, a fork count.
	Notice Severity = iota
	// Warning is suspicious or wasteful.
	Warning
	// Error is broken data, or a resume that fails or silently loses history.
	Error
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "notice"
}

// Code is a stable finding identifier. Scripts match on it: never rename one.
type Code string

// Finding codes. docs/codes.md lists each with its meaning; a test keeps the
// two in step.
const (
	// Lines.
	JSONInvalid      Code = "json-invalid"
	LineTorn         Code = "line-torn"
	LineTooDeep      Code = "line-too-deep"
	LineLong         Code = "line-long"
	NoFinalNewline   Code = "final-newline-missing"
	LineGlued        Code = "line-glued"
	NULBytes         Code = "nul-bytes"
	UTF8Invalid      Code = "utf8-invalid"
	SurrogateLone    Code = "surrogate-lone"
	NULEscape        Code = "nul-escape"
	LineEmpty        Code = "line-empty"
	EntryNotObject   Code = "entry-not-object"
	TypeMissing      Code = "type-missing"
	SchemaInvalid    Code = "schema-invalid"
	TypeUnknown      Code = "type-unknown"
	UUIDDuplicate    Code = "uuid-duplicate"
	UUIDConflict     Code = "uuid-conflict"
	UUIDReplayed     Code = "uuid-replayed"
	ParentMissing    Code = "parent-missing"
	ParentElsewhere  Code = "parent-elsewhere"
	ParentSelf       Code = "parent-self"
	ChainCycle       Code = "chain-cycle"
	LeafMissing      Code = "leaf-missing"
	ChainForks       Code = "chain-forks"
	ToolResultMiss   Code = "tool-result-missing"
	ToolUseMiss      Code = "tool-use-missing"
	ToolUseDuplicate Code = "tool-use-duplicate"
	ThinkingUnsigned Code = "thinking-unsigned"
	ThinkingEmpty    Code = "thinking-empty"
	ThinkingForeign  Code = "thinking-third-party"
	TextBlank        Code = "text-blank"
	ServerToolSplit  Code = "server-tool-split"
	AttachMalformed  Code = "attachment-malformed"
	// Files and store.
	SessionName      Code = "session-name-invalid"
	SessionEmpty     Code = "session-empty"
	SessionStub      Code = "session-stub"
	SessionUnwritten Code = "session-unwritten"
	SessionHusk      Code = "session-husk"
	TranscriptLost   Code = "transcript-lost"
	TitleOutOfReach  Code = "title-out-of-reach"
	SessionIDDup     Code = "session-id-duplicate"
	SessionIDWrong   Code = "session-id-mismatch"
	CWDMismatch      Code = "cwd-mismatch"
	ProjectDirNamed  Code = "project-dir-named"
	ProjectShared    Code = "project-folder-shared"
	ProjectSymlink   Code = "project-symlink"
	AgentIDMismatch  Code = "agent-id-mismatch"
	AgentSessionDiff Code = "agent-session-mismatch"
	AgentOrphan      Code = "agent-orphan"
	MetaInvalid      Code = "meta-invalid"
	IndexInvalid     Code = "index-invalid"
	IndexMissingFile Code = "index-missing-file"
	IndexUnindexed   Code = "index-unindexed"
	IndexPath        Code = "index-path-wrong"
	IndexDrift       Code = "index-drift"
	HistoryInvalid   Code = "history-entry-invalid"
	SessionEnvEmpty  Code = "session-env-empty"
	OrphanSessionEnv Code = "orphan-session-env"
	OrphanFileHist   Code = "orphan-file-history"
	OrphanTodos      Code = "orphan-todos"
	OrphanDebug      Code = "orphan-debug"
	OrphanTasks      Code = "orphan-tasks"
	OrphanPlan       Code = "orphan-plan"
	OrphanUsageData  Code = "orphan-usage-data"
	OrphanPaste      Code = "orphan-paste"
	OrphanShellSnap  Code = "orphan-shell-snapshot"
	SessionLive      Code = "session-live"
	SessionPIDStale  Code = "session-pid-stale"
	ReadFailed       Code = "read-failed"
	FileNotJSONL     Code = "file-not-jsonl"
	FileSpecial      Code = "file-special"

	// Claude Desktop's index of the sessions it shows (outside the store).
	DesktopMissing    Code = "desktop-transcript-missing"
	DesktopMismatch   Code = "desktop-session-mismatch"
	DesktopElsewhere  Code = "desktop-transcript-elsewhere"
	DesktopUnreadable Code = "desktop-index-unreadable"
)

// CodeInfo describes a code: its severity and what it means.
type CodeInfo struct {
	Code     Code
	Severity Severity
	Meaning  string
}

// Codes lists every code, in the order docs/codes.md documents them.
var Codes = []CodeInfo{
	{JSONInvalid, Error, "a line is not valid JSON (the message gives the column)"},
	{LineTorn, Error, "the last line was cut off mid-write (no final newline, not valid JSON)"},
	{LineTooDeep, Warning, "a line is valid JSON whose objects and arrays nest deeper than 10000 levels (real entries nest under 10): cfix checks its syntax only, and repair keeps it as it is (it is data); Claude Code reads it, but its JSON.stringify fails from a few thousand levels"},
	{LineLong, Notice, "a line is longer than 64 MB, the longest cfix reads whole: cfix checks it as it streams past, from its skeleton (its strings cut to 8 KB), and never holds it; warning when even that skeleton is over 8 MB (its structure alone), and the line is not checked. Planners copy such a line as it is, from the file, and refuse to change it"},
	{NoFinalNewline, Warning, "the last line is complete but has no final newline; the next append would glue onto it"},
	{LineGlued, Error, "two or more records were written on one line"},
	{NULBytes, Error, "a line holds NUL bytes (a crash or power loss left them)"},
	{UTF8Invalid, Error, "a line holds bytes that are not valid UTF-8"},
	{SurrogateLone, Error, "a \\uD800-\\uDFFF escape without its pair: 2.1.131 and older send it and the API rejects the request (no low surrogate in string); warning when the resuming client (2.1.132 and later) sends U+FFFD in its place"},
	{NULEscape, Warning, "a \\u0000 escape in a string (a tool's binary output): every client measured sends it escaped on resume, and the API accepts it, but a session holding one died with 400 unexpected end of data in 2.1.270 (anthropics/claude-code#94055); repair replaces it with \\ufffd (raw NUL bytes are nul-bytes)"},
	{LineEmpty, Warning, "an empty line"},
	{EntryNotObject, Error, "a line is valid JSON but not an object"},
	{TypeMissing, Error, "an entry has no string \"type\" field"},
	{SchemaInvalid, Error, "an entry does not match the JSON Schema of its type (wrong type or missing required field): error for user and assistant messages, which a resume sends; warning for other entries, whose unusable fields the loader skips"},
	{TypeUnknown, Notice, "an entry type this version of cfix has no schema for (Claude Code adds types often)"},
	{UUIDDuplicate, Warning, "the same entry (byte-identical) was written twice; resume shows it twice"},
	{UUIDConflict, Warning, "two different entries share a uuid"},
	{UUIDReplayed, Warning, "an entry written again under its uuid, differing only in fields that describe where it was written (gitBranch, promptId, version, slug, cwd), as resumes and /branch write them: resume shows it twice; the message names the fields; repair keeps the first copy"},
	{ParentMissing, Error, "parentUuid names an entry written nowhere in the store: error when the chain a resume loads is cut there (the history before it is lost), warning on another branch"},
	{ParentElsewhere, Notice, "parentUuid names an entry of another file (a session continued from a sibling file, progress pointing into a side run's transcript): Claude Code writes such links; warning when the chain a resume loads stops there and leaves history of the file out"},
	{ParentSelf, Error, "an entry is its own parent"},
	{ChainCycle, Error, "parentUuid links form a cycle: resume hangs or truncates"},
	{LeafMissing, Warning, "the leafUuid of a summary or last-prompt entry resolves to no entry anywhere in the store. 2.1.120 and later resume (-r and -c alike) from the entry the last last-prompt names; one naming no entry is ignored, and the resume starts from the message written last, which after a rewind is on another branch (measured with 2.1.205 and 2.1.332). Every repair that removes an entry points the leafUuids naming it at its nearest ancestor that stays"},
	{ChainForks, Notice, "entries on other branches than the one a resume loads (forks: retries, rewinds, abandoned tool runs, a resume that kept one child of a parent and left delivered replies on the other, anthropics/claude-code#88597): the message names the newest three branches (lines, the line they hang from, entries, messages, the time of the last message) and `cfix fork --at LEAF`, which makes one a session of its own (docs/trim.md)"},
	{ToolResultMiss, Error, "on the resumed chain, a tool_use has no tool_result: error when the writing version's client sends it and the API answers 400; warning when that client drops the unanswered call itself, as every version measured does (a session stopped mid-tool; a parallel call whose result an older loader does not re-attach); the hint, cfix repair FILE, comes with a call whose result the file does not hold (repair adds an error tool_result after it); one whose result sits on a branch the resume does not load has no hint (repair keeps it)"},
	{ToolUseMiss, Error, "on the resumed chain, a tool_result answers no earlier tool_use: 1.0.x and 2.0.x send it and the API answers 400 (error); 2.1.x drops it or sends a text instead (warning)"},
	{ToolUseDuplicate, Error, "on the resumed chain, two tool_use blocks share an id: the API rejects the request (tool_use ids must be unique); notice in a session whose replies came from another provider (no request ids, ids that are not msg_, a model that is not Claude), whose ids restart in each message and whose API took them"},
	{ThinkingUnsigned, Error, "on the resumed chain, a thinking block has an empty signature: the API rejects it"},
	{ThinkingForeign, Notice, "on the resumed chain, a thinking block with an empty signature in a session whose replies came from another provider than Anthropic (a model that is not Claude, no request ids, message ids that are not msg_): that provider never signs thinking; resuming it against the Anthropic API would be rejected"},
	{ThinkingEmpty, Notice, "on the resumed chain, a signed thinking block with empty text: newer clients store omitted thinking so, and the API accepts it"},
	{TextBlank, Error, "on the resumed chain, an empty or whitespace-only text block that the writing version's client sends: the API answers 400 (text content blocks must be non-empty / must contain non-whitespace text); repair drops the block (an entry left empty goes, its children re-parented)"},
	{ServerToolSplit, Error, "on the resumed chain, a server tool's result (web_search_tool_result, advisor_tool_result...) that the client sends apart from its server_tool_use: entries it sends as messages of their own (a slash command's, a hook's) sit between them, or a compaction does; the API answers 400 (unexpected tool_use_id found in advisor_tool_result blocks) on every resume; warning when only attachments some versions send sit between; repair moves the separating entries after the pair; a result whose call no entry holds is left out by 2.1.88 and later (warning)"},
	{AttachMalformed, Error, "on the resumed chain, an attachment entry a client cannot turn into a message: the attachment is null, missing or not an object, or a field its type needs is missing or of the wrong type (a file's or nested_memory's content, a reminder's list, a hook's stdout, a listing delta's lists, a diagnostics' files... docs/clients.md lists them); the client throws (null is not an object, x.map is not a function) and exits 1 before any request, on every resume: error when the writing version's client does (measured per field, 2.0.77 to 2.1.332), warning when it leaves the entry out; repair removes the entry (context the client attached, not a message) and links its children to its parent"},
	{SessionName, Warning, "a session file's name is not a UUID: /resume does not list it; no command renames it in place, so the finding has no hint: its message names cfix clone FILE --to DIR, which copies it under a session id /resume lists (the file stays)"},
	{SessionEmpty, Warning, "a session file of 0 bytes; when its subagent transcripts survive (the `Warmup` runs 2.0.x starts with, flat beside it), the message says what is left and prune leaves it: cfix export writes it, cfix rm removes the session"},
	{SessionStub, Warning, "a session file holds only metadata lines (a stub); the message says where its transcript lives"},
	{SessionUnwritten, Warning, "a session file holds only metadata lines (a title, queue operations, snapshots) and no file of the store holds its transcript: the conversation was never written; /resume lists a titled one and opens it empty (the message gives the title); prune removes it; a notice when its lines are, byte for byte, the first lines of another session's transcript under that session's id (a fork Claude Desktop began and never continued)"},
	{SessionHusk, Warning, "a session folder (<id>/ with tool-results/, custom-title.json, ...) of a session with no transcript anywhere in the store and no subagent transcript inside: disk used by nothing; prune removes it"},
	{TranscriptLost, Warning, "a session file holds only metadata lines (a title, last-prompt, mode, queue operations) while the session's subagent transcripts survive: its conversation was written, then lost (rewritten to a stub at resume, anthropics/claude-code#79298); /resume opens it empty; the message says what is left (subagent transcripts, file-history backups, history.jsonl prompts): cfix export writes it, cfix rm removes the session; prune leaves it"},
	{TitleOutOfReach, Warning, "a session's title (its last custom-title, else ai-title) sits beyond the first and last 64 KB of its transcript, all the /resume picker reads: the picker shows another name and /resume NAME finds nothing; repair appends the title line again at the end, as Claude Code itself does"},
	{SessionIDDup, Warning, "the same session id has a transcript in more than one project folder"},
	{SessionIDWrong, Warning, "entries of a main session carry a sessionId other than the file's name; a notice when the file starts with another session's entries under its id and goes on under its own, as Claude Desktop writes forks (Claude Code loads the whole file)"},
	{CWDMismatch, Warning, "entries' cwd does not encode to the project folder they sit in (warning when none does, notice when only some do); none for a subagent transcript whose every cwd is one of its session's (a subagent runs where its session runs), and a subagent's finding names no command (move and clone take its session)"},
	{ProjectDirNamed, Notice, "a project folder named by CLAUDE_CODE_PROJECT_DIR_NAME (2.1.234 and 2.1.330 honour it only when CLAUDE_CONFIG_DIR is set): its sessions' cwds never encode to its name, by design; the message lists them, and no cwd-mismatch is reported there"},
	{ProjectShared, Notice, "two or more working directories encode to one project folder (non-ASCII characters, or '.', '_' and '-', all become '-'): their sessions share the folder and its /resume list; the message lists them"},
	{ProjectSymlink, Warning, "a project folder is a symbolic link (a project moved to another disk): cfix reads through it, Claude Code's /resume picker lists no session behind it, and planners write nothing through one that leads out of the store"},
	{AgentIDMismatch, Error, "a subagent entry's agentId differs from the id in the file name"},
	{AgentSessionDiff, Error, "a subagent entry's sessionId differs from its parent session; a notice when the transcript is a symbolic link to the same agent's transcript in that session's folder, as Claude Code links running agents into a session forked from theirs"},
	{AgentOrphan, Warning, "subagent transcripts whose parent session file is missing: when the session has no main transcript anywhere in the store, the message says what is left (subagent transcripts, file-history backups, history.jsonl prompts): cfix export writes it, cfix rm removes the session"},
	{MetaInvalid, Error, "a subagent .meta.json is not a JSON object (0 bytes is fine)"},
	{IndexInvalid, Error, "sessions-index.json cannot be parsed"},
	{IndexMissingFile, Warning, "sessions-index.json lists a session whose file is gone"},
	{IndexUnindexed, Warning, "a session file holding a message that sessions-index.json does not list: /resume may hide it (one with no message /resume lists neither way, and repair's rebuild leaves it out)"},
	{IndexPath, Warning, "sessions-index.json gives a wrong fullPath for a session"},
	{IndexDrift, Notice, "sessions-index.json's messageCount or fileMtime no longer match the file"},
	{HistoryInvalid, Warning, "a history.jsonl line lacks display, timestamp or project of the right type"},
	{SessionEnvEmpty, Notice, "an empty session-env/<id> folder"},
	{OrphanSessionEnv, Warning, "session-env/<id> of a session that no longer exists"},
	{OrphanFileHist, Warning, "file-history/<id> of a session that no longer exists"},
	{OrphanTodos, Warning, "todos/<id>-agent-*.json of a session that no longer exists"},
	{OrphanDebug, Warning, "debug/<id>.txt of a session that no longer exists"},
	{OrphanTasks, Warning, "tasks/<id>/ (the Task tools' list) of a session that no longer exists"},
	{OrphanPlan, Warning, "plans/<slug>.md whose slug no transcript of the store names"},
	{OrphanUsageData, Warning, "usage-data/session-meta/<id>.json or usage-data/facets/<id>.json (/insights) of a session that no longer exists"},
	{OrphanPaste, Warning, "paste-cache/<hash>.txt that no history.jsonl prompt names (older than an hour)"},
	{OrphanShellSnap, Warning, "shell-snapshots/snapshot-*.sh made more than a day ago, before every running Claude Code process started: its process is gone (a normal exit removes it: 1.0.128 and 2.1.330 seen; a killed process leaves it)"},
	{SessionLive, Notice, "a session is live (sessions/<pid>.json names it and the process runs): planners leave it alone"},
	{SessionPIDStale, Warning, "a sessions/<pid>.json whose session is not on disk (no transcript, no session folder) and whose pid runs no process, or runs another program than Claude Code (the pid reused; told from /proc/<pid>/cmdline on Linux) (anthropics/claude-code#93132): cfix would take the session for live; prune removes the file; the file of a running Claude Code is never a finding"},
	{ReadFailed, Error, "a file or folder could not be read"},
	{FileSpecial, Warning, "a name in a project folder ending in .jsonl that is not a file: a named pipe (FIFO), a socket, a device, or a symbolic link leading nowhere or to one of those; cfix reads nothing from it (a read could wait forever) and no planner touches it; remove or rename it by hand"},
	{FileNotJSONL, Warning, "a .jsonl file of which no line is JSON (another program's output written over it): one finding for the file; repair leaves it alone"},
	{DesktopMissing, Warning, "Claude Desktop lists a session (a `local_<uuid>.json` of its index, whose cliSessionId names a transcript) that has no transcript in the store: Desktop shows Session not found on disk, and a message sent there binds its entry to a new, empty session (anthropics/claude-code#63904, #78284); a notice for an entry Desktop archived; none for an entry of no completed turn (its transcript may not be written yet). Checked in a run of the whole store only; cfix writes nothing outside the store, so no command fixes it: cfix restore brings back a session cfix archived"},
	{DesktopMismatch, Warning, "Claude Desktop lists a session whose transcript holds another session's entries only (none carries the file's own session id: a file copied or synced over another, anthropics/claude-code#63904): Desktop shows Session not found on disk; a fork Desktop writes (its parent's lines first, then its own) is none"},
	{DesktopElsewhere, Notice, "Claude Desktop lists a session whose transcript is in the store, but not in the project folder of the entry's cwd, where Desktop resumes it: a session that worked in a git worktree, or was moved, or whose project was renamed (anthropics/claude-code#83541, #78284); Desktop says the conversation is no longer on disk and binds its entry to a new, empty session when a message is sent; cfix move SESSION --to CWD puts it back"},
	{DesktopUnreadable, Notice, "a file of Claude Desktop's index that cfix did not read: not a regular file (a symbolic link is not followed), larger than 8 MB, or not a JSON object; the message names the file and why"},
}

var codeSeverity = func() map[Code]Severity {
	m := make(map[Code]Severity, len(Codes))
	for _, c := range Codes {
		m[c.Code] = c.Severity
	}
	return m
}()

// SeverityOf returns the default severity of a code.
func SeverityOf(c Code) Severity { return codeSeverity[c] }
