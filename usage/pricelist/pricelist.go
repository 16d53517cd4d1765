// Package pricelist reads the price list cfix prices Claude Code's usage
// with: a JSON file of Anthropic's published per-model prices, with its
// date and source, that go generate turns into the table cfix is built
// with (usage/prices.json), and that --prices reads at run time.
package pricelist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"math"
	"regexp"
	"sort"
	"strings"
)

// Pico is an amount of US dollars in millionths of a millionth
// (picodollars): a price per token of every list is a whole number of
// them ($0.01 per million tokens is 10,000), so sums are exact.
type Pico int64

// USD is p in dollars.
func (p Pico) USD() float64 { return float64(p) / 1e12 }

// Rates are the prices of one kind of token, per token.
type Rates struct {
	Input, Output, CacheWrite5m, CacheWrite1h, CacheRead Pico
}

// Model is the prices of one model.
type Model struct {
	Name string   // as the list names it: Claude Opus 4.5
	IDs  []string // the API's model ids (a dated id, claude-x-20250101, matches its id without the date too)
	Rates
	// LongContext, when set, are the rates of every token of a request
	// whose prompt (input, cache writes and reads) is over Above tokens.
	LongContext *Tier
}

// Tier is a long-context price tier.
type Tier struct {
	Above int64
	Rates
}

// List is a price list.
type List struct {
	Date   string // when the prices were read from the source
	Source string // where they were read
	// WebSearch is the price of one web search request (server tool).
	WebSearch Pico
	Models    []Model
}

// file is the JSON form, prices in dollars per million tokens (and per
// 1,000 web searches).
type file struct {
	Date             string      `json:"date"`
	Source           string      `json:"source"`
	Note             string      `json:"note,omitempty"`
	WebSearchPer1000 *float64    `json:"web_search_per_1000"`
	Models           []fileModel `json:"models"`
	Units            string      `json:"units"`
}

type fileRates struct {
	Input        *float64 `json:"input"`
	Output       *float64 `json:"output"`
	CacheWrite5m *float64 `json:"cache_write_5m"`
	CacheWrite1h *float64 `json:"cache_write_1h"`
	CacheRead    *float64 `json:"cache_read"`
}

type fileModel struct {
	Name string   `json:"name"`
	IDs  []string `json:"ids"`
	fileRates
	LongContext *struct {
		Above int64 `json:"above_prompt_tokens"`
		fileRates
	} `json:"long_context,omitempty"`
}

var (
	dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	idRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:-]*$`)
)

// Parse reads a price list (name is the file's, for messages).
func Parse(name string, b []byte) (*List, error) {
	var f file
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("price list %s: %w", name, err)
	}
	if !dateRE.MatchString(f.Date) {
		return nil, fmt.Errorf("price list %s: date %q: want YYYY-MM-DD", name, f.Date)
	}
	if f.Source == "" {
		return nil, fmt.Errorf("price list %s: no source", name)
	}
	l := &List{Date: f.Date, Source: f.Source}
	if f.WebSearchPer1000 != nil {
		p, err := pico(*f.WebSearchPer1000, 1000) // per request
		if err != nil {
			return nil, fmt.Errorf("price list %s: web_search_per_1000: %w", name, err)
		}
		l.WebSearch = p
	}
	seen := map[string]string{}
	for i, m := range f.Models {
		where := fmt.Sprintf("price list %s: model %d (%s)", name, i+1, m.Name)
		if m.Name == "" || len(m.IDs) == 0 {
			return nil, fmt.Errorf("%s: a name and ids are needed", where)
		}
		r, err := m.fileRates.rates()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		mm := Model{Name: m.Name, IDs: m.IDs, Rates: r}
		for _, id := range m.IDs {
			if !idRE.MatchString(id) {
				return nil, fmt.Errorf("%s: id %q: letters, digits, dots, dashes, slashes and colons only", where, id)
			}
			if other, ok := seen[id]; ok {
				return nil, fmt.Errorf("%s: id %s is %s's too", where, id, other)
			}
			seen[id] = m.Name
		}
		if lc := m.LongContext; lc != nil {
			r, err := lc.fileRates.rates()
			if err != nil {
				return nil, fmt.Errorf("%s: long_context: %w", where, err)
			}
			if lc.Above <= 0 {
				return nil, fmt.Errorf("%s: long_context: above_prompt_tokens must be positive", where)
			}
			mm.LongContext = &Tier{Above: lc.Above, Rates: r}
		}
		l.Models = append(l.Models, mm)
	}
	return l, nil
}

func (f fileRates) rates() (Rates, error) {
	var r Rates
	for _, x := range []struct {
		name string
		v    *float64
		to   *Pico
	}{{"input", f.Input, &r.Input}, {"output", f.Output, &r.Output}, {"cache_write_5m", f.CacheWrite5m, &r.CacheWrite5m},
		{"cache_write_1h", f.CacheWrite1h, &r.CacheWrite1h}, {"cache_read", f.CacheRead, &r.CacheRead}} {
		if x.v == nil {
			return r, fmt.Errorf("no %s price", x.name)
		}
		p, err := pico(*x.v, 1e6) // per token: dollars per million tokens
		if err != nil {
			return r, fmt.Errorf("%s: %w", x.name, err)
		}
		*x.to = p
	}
	return r, nil
}

// pico turns dollars per unit units into picodollars per one, refusing a
// price that is not a whole number of them.
func pico(usd, per float64) (Pico, error) {
	if usd < 0 || math.IsNaN(usd) || math.IsInf(usd, 0) || usd > 1e6 {
		return 0, fmt.Errorf("price %v: not a price", usd)
	}
	v := usd * 1e12 / per
	r := math.Round(v)
	if math.Abs(v-r) > 1e-6 {
		return 0, fmt.Errorf("price %v: finer than a picodollar per token", usd)
	}
	return Pico(r), nil
}

// Find returns the model of l that model (a reply's message.model) is:
// one of its ids, or one of them followed by a date (-20250514).
func (l *List) Find(model string) *Model {
	base := model
	if i := strings.LastIndexByte(model, '-'); i > 0 && len(model)-i-1 == 8 && allDigits(model[i+1:]) {
		base = model[:i]
	}
	for i := range l.Models {
		for _, id := range l.Models[i].IDs {
			if id == model || id == base {
				return &l.Models[i]
			}
		}
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// GoSource is the Go file go generate writes from l: package pkg, the
// variable name holding the list.
func GoSource(l *List, pkg, name, from string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by go run ./usage/genprices from %s; DO NOT EDIT.\n\n", from)
	fmt.Fprintf(&b, "package %s\n\nimport \"github.com/cfix-dev/cfix/usage/pricelist\"\n\n", pkg)
	fmt.Fprintf(&b, "// %s is the price list cfix is built with: %s, read %s.\n", name, l.Source, l.Date)
	fmt.Fprintf(&b, "var %s = &pricelist.List{\n\tDate: %q,\n\tSource: %q,\n\tWebSearch: %d,\n\tModels: []pricelist.Model{\n", name, l.Date, l.Source, l.WebSearch)
	rates := func(r Rates) string {
		return fmt.Sprintf("Input: %d, Output: %d, CacheWrite5m: %d, CacheWrite1h: %d, CacheRead: %d", r.Input, r.Output, r.CacheWrite5m, r.CacheWrite1h, r.CacheRead)
	}
	for _, m := range l.Models {
		ids := append([]string(nil), m.IDs...)
		fmt.Fprintf(&b, "\t\t{Name: %q, IDs: %#v, Rates: pricelist.Rates{%s}", m.Name, ids, rates(m.Rates))
		if m.LongContext != nil {
			fmt.Fprintf(&b, ", LongContext: &pricelist.Tier{Above: %d, Rates: pricelist.Rates{%s}}", m.LongContext.Above, rates(m.LongContext.Rates))
		}
		b.WriteString("},\n")
	}
	b.WriteString("\t},\n}\n")
	return format.Source(b.Bytes())
}

// IDs lists every model id of l, sorted.
func (l *List) IDs() []string {
	var out []string
	for _, m := range l.Models {
		out = append(out, m.IDs...)
	}
	sort.Strings(out)
	return out
}
