package validate

import (
	"fmt"
	"strings"

	"github.com/cfix-dev/cfix/session"
)

// SyntheticModel is the model Claude Code writes on the assistant entries
// it makes itself (an API error's message, an interrupted turn's partial
// reply): no API wrote them.
const SyntheticModel = "<synthetic>"

// Provider is the judgment of which API a session's replies came from.
// Anthropic's API names the request of every reply (Claude Code writes it
// as requestId) and gives message ids that start with msg_ (Bedrock's and
// Vertex's too); a proxy to another provider (deepseek, Kimi, MiniMax,
// qwen through a compatible endpoint) gives neither: ids of its own
// (gen-..., UUIDs), no request id, and mostly a model that is not Claude.
// What that API accepts is its own affair: a session went on for dozens of
// turns after replies the Anthropic API would reject (tool ids that
// restart in each message, unsigned thinking).
type Provider struct {
	// Foreign: the session's last reply came from another provider than
	// Anthropic.
	Foreign bool
	// Why says what the judgment rests on ("model deepseek-v4-pro, no
	// request ids"), for messages.
	Why string
}

// ProviderOf judges the session of graph g by its last reply (in file
// order) that Claude Code did not make itself: the API the session talked
// to last is the one its next resume talks to. A graph without a reply is
// Anthropic's.
func ProviderOf(g *session.Graph) Provider {
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := &g.Nodes[i]
		if n.Type != "assistant" || n.Model == SyntheticModel || n.Model == "" && n.MsgID == "" {
			continue
		}
		return replyProvider(n)
	}
	return Provider{}
}

// replyProvider judges one assistant entry.
func replyProvider(n *session.Node) Provider {
	var why []string
	if ThirdPartyModel(n.Model) {
		why = append(why, "model "+n.Model)
	}
	if !n.Requested && !strings.HasPrefix(n.MsgID, "msg_") {
		id := n.MsgID
		if len(id) > 12 {
			id = id[:12] + "…"
		}
		why = append(why, fmt.Sprintf("message ids like %s and no request id", id))
	}
	if len(why) == 0 {
		return Provider{}
	}
	return Provider{Foreign: true, Why: strings.Join(why, ", ")}
}
