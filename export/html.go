package export

import (
	"bufio"
	"fmt"
	"html"
	"strings"
)

// htmlOut writes one self-contained HTML file: styles inline, no script,
// nothing fetched. Folded parts are <details> elements.
type htmlOut struct {
	w    *bufio.Writer
	open bool // a message's <section> is open
}

const css = `
:root{color-scheme:light dark;--bg:#fbfbfa;--fg:#1f2328;--muted:#656d76;--line:#d8dee4;--user:#eef4ff;--user-b:#9ab8f5;--asst:#ffffff;--asst-b:#d8dee4;--tool:#f6f8fa;--think:#fff8e6;--think-b:#e5c76b;--err:#cf222e;--code:#f3f4f6;--other:#fff1f0}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--line:#30363d;--user:#132339;--user-b:#2f5fa8;--asst:#161b22;--asst-b:#30363d;--tool:#1c2128;--think:#2a2414;--think-b:#8a6d1e;--err:#ff7b72;--code:#1c2128;--other:#2b1718}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif}
main{max-width:960px;margin:0 auto;padding:24px 20px 64px}
header h1{font-size:1.5em;margin:0 0 8px;overflow-wrap:anywhere}
header dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0 0 8px;color:var(--muted);font-size:.9em}
header dt{font-weight:600}header dd{margin:0;overflow-wrap:anywhere}
header p{color:var(--muted);font-size:.9em;margin:0 0 20px}
h2.turn{font-size:1.05em;margin:28px 0 4px;padding-top:8px;border-top:1px solid var(--asst-b)}
section.msg{border:1px solid var(--asst-b);background:var(--asst);border-radius:8px;padding:10px 14px;margin:12px 0}
section.user{background:var(--user);border-color:var(--user-b)}
section.other{border-style:dashed;opacity:.8}
.role{font-weight:600;font-size:.85em;color:var(--muted);margin-bottom:4px;display:flex;gap:10px;flex-wrap:wrap}
.role .who{color:var(--fg)}
.role .branch{color:var(--err)}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0}
details{border:1px solid var(--line);border-radius:6px;background:var(--tool);margin:6px 0;padding:0 10px}
details[open]{padding-bottom:8px}
summary{cursor:pointer;padding:5px 0;font-size:.9em;overflow-wrap:anywhere}
summary code{font-weight:600}
details.thinking{background:var(--think);border-color:var(--think-b)}
details.thinking>summary{font-style:italic}
details.error>summary{color:var(--err)}
details.agent{background:var(--bg)}
pre{background:var(--code);border:1px solid var(--line);border-radius:4px;padding:8px;margin:6px 0;overflow:auto;max-height:480px;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
.label{font-size:.8em;font-weight:600;color:var(--muted);margin-top:6px}
.sub{border-left:3px solid var(--user-b);padding-left:10px;margin:6px 0}
.compaction{text-align:center;color:var(--muted);font-size:.9em;margin:22px 0;display:flex;align-items:center;gap:10px}
.compaction::before,.compaction::after{content:"";flex:1;border-top:2px dashed var(--line)}
.note{font-size:.85em}
div.attach{font-size:.85em;color:var(--muted);margin:2px 0 2px 14px;overflow-wrap:anywhere}
`

func esc(s string) string { return html.EscapeString(s) }

func (h *htmlOut) begin(hd header) {
	fmt.Fprintf(h.w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(h.w, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n")
	name := hd.Name
	if name == "" {
		name = hd.Title
	}
	fmt.Fprintf(h.w, "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n<header>\n<h1>%s</h1>\n<dl>\n", esc(name), css, esc(hd.Title))
	if hd.Session != "" {
		fmt.Fprintf(h.w, "<dt>session</dt><dd>%s</dd>\n", esc(hd.Session))
	}
	fmt.Fprintf(h.w, "<dt>transcript</dt><dd>%s</dd>\n", esc(hd.Path))
	for _, f := range hd.Facts {
		fmt.Fprintf(h.w, "<dt>%s</dt><dd>%s</dd>\n", esc(f[0]), esc(f[1]))
	}
	fmt.Fprintf(h.w, "</dl>\n<p>%s</p>\n</header>\n", esc(hd.What))
}

func (h *htmlOut) message(role, model, ts string, other bool) {
	h.closeMsg()
	class := "msg " + strings.ToLower(role)
	if other {
		class += " other"
	}
	fmt.Fprintf(h.w, "<section class=\"%s\">\n<div class=\"role\"><span class=\"who\">%s</span>", class, esc(role))
	if model != "" {
		fmt.Fprintf(h.w, "<span>%s</span>", esc(model))
	}
	if ts != "" {
		fmt.Fprintf(h.w, "<span>%s</span>", esc(ts))
	}
	if other {
		fmt.Fprintf(h.w, "<span class=\"branch\">other branch: a resume does not load it</span>")
	}
	fmt.Fprintf(h.w, "</div>\n")
	h.open = true
}

func (h *htmlOut) closeMsg() {
	if h.open {
		fmt.Fprintf(h.w, "</section>\n")
		h.open = false
	}
}

func (h *htmlOut) endMessage() { h.closeMsg() }

func (h *htmlOut) text(s string) {
	fmt.Fprintf(h.w, "<div class=\"text\">%s</div>\n", esc(strings.TrimRight(s, "\n")))
}

func (h *htmlOut) folded(title, body, class string) {
	fmt.Fprintf(h.w, "<details class=\"%s\"><summary>%s</summary>\n", esc(class), esc(title))
	if strings.TrimSpace(body) != "" {
		if class == "thinking" || class == "summary" {
			h.text(body)
		} else {
			fmt.Fprintf(h.w, "<pre>%s</pre>\n", esc(body))
		}
	}
	fmt.Fprintf(h.w, "</details>\n")
}

func (h *htmlOut) tool(c toolCall, sub func() error) error {
	class := "tool"
	if c.IsError {
		class += " error"
	}
	if sub != nil {
		class += " agent"
	}
	fmt.Fprintf(h.w, "<details class=\"%s\"><summary><code>%s</code> %s", class, esc(c.Name), esc(c.Summary))
	if c.IsError {
		fmt.Fprintf(h.w, " (error)")
	}
	fmt.Fprintf(h.w, "</summary>\n")
	if c.Input != "" && c.Input != "{}" {
		fmt.Fprintf(h.w, "<div class=\"label\">Input</div><pre>%s</pre>\n", esc(c.Input))
	}
	if c.HasResult {
		label := "Result"
		if c.IsError {
			label = "Error"
		}
		fmt.Fprintf(h.w, "<div class=\"label\">%s</div><pre>%s</pre>\n", label, esc(c.Result))
	}
	if sub != nil {
		open := h.open
		h.open = false
		fmt.Fprintf(h.w, "<div class=\"label\">Subagent conversation</div>\n<div class=\"sub\">\n")
		if err := sub(); err != nil {
			return err
		}
		h.closeMsg()
		fmt.Fprintf(h.w, "</div>\n")
		h.open = open
	}
	fmt.Fprintf(h.w, "</details>\n")
	return nil
}

func (h *htmlOut) note(kind, body, ts string, other bool) {
	h.closeMsg()
	class := "note"
	title := kind
	if ts != "" {
		title += " · " + ts
	}
	if other {
		title += " · other branch"
	}
	h.folded(title, body, class)
}

// attachment writes an attachment's line; with a body, a folded block
// whose summary is the line.
func (h *htmlOut) attachment(a Attachment, body, ts string, other bool) {
	h.closeMsg()
	line := "attachment · " + esc(a.What)
	if a.Name != "" {
		line += " <code>" + esc(a.Name) + "</code>"
	}
	line += esc(a.More)
	if other {
		line += " · other branch"
	}
	if body == "" {
		fmt.Fprintf(h.w, "<div class=\"attach\">%s</div>\n", line)
		return
	}
	fmt.Fprintf(h.w, "<details class=\"note attach\"><summary>%s</summary>\n<pre>%s</pre>\n</details>\n", line, esc(body))
}

func (h *htmlOut) compaction(s, ts string) {
	h.closeMsg()
	fmt.Fprintf(h.w, "<div class=\"compaction\">%s · %s</div>\n", esc(s), esc(ts))
}

func (h *htmlOut) turn(n int) {
	h.closeMsg()
	fmt.Fprintf(h.w, "<h2 class=\"turn\" id=\"turn-%d\">Turn %d</h2>\n", n, n)
}

func (h *htmlOut) forkStart()     {}
func (h *htmlOut) forkEnd(string) {}

func (h *htmlOut) end() {
	h.closeMsg()
	fmt.Fprintf(h.w, "</main>\n</body>\n</html>\n")
}
