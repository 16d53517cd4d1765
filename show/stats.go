package show

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
	"github.com/cfix-dev/cfix/validate"
)

// Usage is token usage summed from message.usage, each API message once
// (Claude Code writes one entry per content block, each with the usage of
// the whole message).
type Usage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
}

func (u *Usage) add(v Usage) {
	u.Input += v.Input
	u.Output += v.Output
	u.CacheCreation += v.CacheCreation
	u.CacheRead += v.CacheRead
}

// Total is every token counted.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheCreation + u.CacheRead }

// Title is one title line of a transcript.
type Title struct {
	Kind string `json:"kind"` // custom-title, ai-title, summary, agent-name, desktop (Claude Desktop's title)
	Text string `json:"text"`
}

// Stats is what one pass over a transcript gathers.
type Stats struct {
	Lines    int            `json:"lines"`
	Entries  int            `json:"entries"` // JSON objects
	NotJSON  int            `json:"not_json"`
	Types    map[string]int `json:"types"`
	First    string         `json:"first,omitempty"` // earliest timestamp
	Last     string         `json:"last,omitempty"`  // latest timestamp
	Versions []string       `json:"versions"`
	Models   []string       `json:"models"`
	CWDs     []string       `json:"cwds"`
	Slugs    []string       `json:"slugs"`
	Titles   []Title        `json:"titles"`
	// Prompts counts the person's prompts: user entries holding text, not
	// tool results, meta entries or compaction summaries.
	Prompts     int   `json:"prompts"`
	Compactions int   `json:"compactions"`
	Sidechain   int   `json:"sidechain_entries"` // inline subagent entries (1.0.x, 2.0.x)
	Usage       Usage `json:"usage"`
	// SessionIDs lists the sessionId values the entries carry.
	SessionIDs []string `json:"session_ids,omitempty"`

	chain   *validate.ChainReader
	notJSON []int // the first lines not JSON
}

// maxNotJSON is how many lines not JSON Stats names.
const maxNotJSON = 10

// NotJSONLines returns the numbers of the first lines that hold no JSON
// (at most 10; NotJSON counts them all).
func (s *Stats) NotJSONLines() []int { return s.notJSON }

// line is what the stats read of an entry.
type line struct {
	Type             string  `json:"type"`
	Subtype          string  `json:"subtype"`
	Timestamp        any     `json:"timestamp"`
	Version          string  `json:"version"`
	CWD              string  `json:"cwd"`
	Slug             string  `json:"slug"`
	SessionID        string  `json:"sessionId"`
	IsMeta           bool    `json:"isMeta"`
	IsSidechain      bool    `json:"isSidechain"`
	IsCompactSummary bool    `json:"isCompactSummary"`
	CustomTitle      string  `json:"customTitle"`
	AITitle          string  `json:"aiTitle"`
	Summary          any     `json:"summary"`
	AgentName        string  `json:"agentName"`
	Message          message `json:"message"`
}

type message struct {
	ID      string  `json:"id"`
	Model   string  `json:"model"`
	Usage   *Usage  `json:"usage"`
	Content content `json:"content"`
}

// content is what the stats need of message.content: whether it holds
// text the person wrote and whether it holds a tool result.
type content struct{ text, result bool }

// UnmarshalJSON reads message.content with session's parser: strings cut
// to session.MaxString bytes are all notPrompt looks at, and a prompt of
// hundreds of MB is neither decoded nor checked again (encoding/json
// checked the line).
func (c *content) UnmarshalJSON(b []byte) error {
	p := parsers.Get().(*session.Parser)
	defer parsers.Put(p)
	switch v := p.Parse(b).Value.(type) {
	case string:
		c.text = v != "" && !notPrompt(v)
	case []any:
		for _, e := range v {
			bl, _ := e.(map[string]any)
			typ, _ := bl["type"].(string)
			switch typ {
			case "text":
				text, _ := bl["text"].(string)
				c.text = c.text || !notPrompt(text)
			case "image":
				c.text = true
			case "tool_result":
				c.result = true
			}
		}
	}
	return nil
}

// parsers holds the parsers content.UnmarshalJSON uses.
var parsers = sync.Pool{New: func() any { return session.NewParser() }}

func notPrompt(s string) bool {
	for _, p := range []string{"<local-command-", "<bash-stdout>", "<bash-stderr>", "[Request interrupted by user"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// longLine is the length from which ReadLines reads a line's light tree
// instead of decoding it whole.
const longLine = 1 << 20

// Read reads the transcript at path once: its stats, and (chain) the
// parentUuid graph a resume is modelled on.
func Read(path string, chain bool) (*Stats, error) {
	var c *validate.ChainReader
	if chain {
		c = validate.NewChainReader()
	}
	return ReadLines(path, c, nil)
}

// maxTypes is how many entry types Stats counts apart; the entries of
// others are counted under otherTypes. maxValues is how many versions,
// cwds, slugs, session ids and models it lists (the first ones found).
const (
	maxTypes   = 64
	otherTypes = "(other types)"
	maxValues  = 64
)

// ReadLines reads the transcript at path once: its stats, each line into
// chain when it is not nil, and each line to each when it is not nil.
func ReadLines(path string, chain *validate.ChainReader, each func(session.Line)) (*Stats, error) {
	fh, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	s := &Stats{Types: map[string]int{}, chain: chain}
	sets := map[string]map[string]bool{}
	add := func(set *[]string, key, v string) {
		if v == "" || len(*set) >= maxValues {
			return
		}
		if sets[key] == nil {
			sets[key] = map[string]bool{}
		}
		if !sets[key][v] {
			sets[key][v] = true
			*set = append(*set, v)
		}
	}
	usage := map[string]Usage{} // message id → its usage, the last written
	var order []string
	var noID Usage
	rd := session.NewReader(fh, nil)
	p := session.NewParser()
	var v line // one for every line: Unmarshal's pointer made it escape, an allocation a line
	dec := func(raw []byte) bool {
		v = line{}
		if len(raw) > longLine {
			// A line of MB (a pasted file): its light tree, made in one
			// pass, holds all the stats read (strings cut to
			// session.MaxString bytes).
			pr := p.Parse(raw)
			if pr.Err != nil || pr.GluedAt >= 0 {
				return false
			}
			b, err := json.Marshal(pr.Value)
			if err != nil || json.Unmarshal(b, &v) != nil {
				return false
			}
		} else if json.Unmarshal(raw, &v) != nil {
			return false
		}
		s.Entries++
		if _, ok := s.Types[v.Type]; ok || len(s.Types) < maxTypes {
			s.Types[v.Type]++
		} else {
			s.Types[otherTypes]++ // a type per line is no store Claude Code wrote
		}
		if ts, ok := v.Timestamp.(string); ok && ts != "" {
			if s.First == "" || ts < s.First {
				s.First = ts
			}
			if ts > s.Last {
				s.Last = ts
			}
		}
		add(&s.Versions, "v", v.Version)
		add(&s.CWDs, "c", v.CWD)
		add(&s.Slugs, "s", v.Slug)
		add(&s.SessionIDs, "i", v.SessionID)
		if v.IsSidechain {
			s.Sidechain++
		}
		switch v.Type {
		case "assistant":
			if v.Message.Model != "" && v.Message.Model != "<synthetic>" {
				add(&s.Models, "m", v.Message.Model)
			}
			if u := v.Message.Usage; u != nil {
				if v.Message.ID == "" {
					noID.add(*u)
				} else {
					if _, ok := usage[v.Message.ID]; !ok {
						order = append(order, v.Message.ID)
					}
					usage[v.Message.ID] = *u
				}
			}
		case "user":
			if !v.IsMeta && !v.IsCompactSummary && !v.IsSidechain && v.Message.Content.text && !v.Message.Content.result &&
				!bytes.Contains(raw, []byte(`"<local-command-`)) {
				s.Prompts++
			}
		case "system":
			if v.Subtype == "compact_boundary" {
				s.Compactions++
			}
		case "custom-title":
			s.title("custom-title", v.CustomTitle)
		case "ai-title":
			s.title("ai-title", v.AITitle)
		case "summary":
			if t, ok := v.Summary.(string); ok {
				s.title("summary", t)
			}
		case "agent-name":
			s.title("agent-name", v.AgentName)
		}
		return true
	}
	for rd.Next() {
		ln := rd.Line()
		s.Lines++
		if s.chain != nil {
			s.chain.Line(ln)
		}
		if each != nil {
			each(ln)
		}
		raw := bytes.TrimSpace(ln.Raw)
		if len(raw) == 0 {
			continue
		}
		if bytes.IndexByte(raw, 0) >= 0 {
			raw = bytes.ReplaceAll(raw, []byte{0}, nil) // as the chain reader and validate read it
		}
		if dec(raw) {
			continue
		}
		// Records glued on one line, or no JSON.
		d := json.NewDecoder(bytes.NewReader(raw))
		n := 0
		for ; d.More(); n++ {
			var rec json.RawMessage
			if d.Decode(&rec) != nil || !dec(rec) {
				break
			}
		}
		if n == 0 {
			s.NotJSON++
			if len(s.notJSON) < maxNotJSON {
				s.notJSON = append(s.notJSON, ln.N)
			}
		}
	}
	for _, id := range order {
		s.Usage.add(usage[id])
	}
	s.Usage.add(noID)
	sort.Strings(s.Versions)
	sort.Strings(s.Models)
	for _, p := range []*[]string{&s.Versions, &s.Models, &s.CWDs, &s.Slugs} {
		if *p == nil {
			*p = []string{}
		}
	}
	if s.Titles == nil {
		s.Titles = []Title{}
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// title keeps the last text of each kind of title, in the order first met.
func (s *Stats) title(kind, text string) {
	if text == "" {
		return
	}
	for i := range s.Titles {
		if s.Titles[i].Kind == kind {
			s.Titles[i].Text = text
			return
		}
	}
	s.Titles = append(s.Titles, Title{Kind: kind, Text: text})
}
