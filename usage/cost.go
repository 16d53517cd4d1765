package usage

import "github.com/cfix-dev/cfix/usage/pricelist"

// Pricer prices replies by a price list, remembering each model's entry.
type Pricer struct {
	List   *pricelist.List
	models map[string]*pricelist.Model
}

// NewPricer returns a Pricer of l (Builtin when nil).
func NewPricer(l *pricelist.List) *Pricer {
	if l == nil {
		l = Builtin
	}
	return &Pricer{List: l, models: map[string]*pricelist.Model{}}
}

// Model is the list's entry for model, nil when it has none.
func (p *Pricer) Model(model string) *pricelist.Model {
	m, ok := p.models[model]
	if !ok {
		m = p.List.Find(model)
		p.models[model] = m
	}
	return m
}

// Cost is what r cost by the list; ok is false when the list has no price
// for it: a model it does not know, or a speed other than standard (fast
// mode has prices of its own the list does not give). Every token of a
// request whose prompt is over a model's long-context threshold is priced
// at the long-context rates; each web search request at the list's price.
func (p *Pricer) Cost(r *Reply) (pricelist.Pico, bool) {
	m := p.Model(r.Model)
	if m == nil || r.Speed != "" && r.Speed != "standard" {
		return 0, false
	}
	rt := m.Rates
	if m.LongContext != nil && r.Prompt() > m.LongContext.Above {
		rt = m.LongContext.Rates
	}
	c := pricelist.Pico(r.Input)*rt.Input + pricelist.Pico(r.Output)*rt.Output +
		pricelist.Pico(r.CacheWrite5m())*rt.CacheWrite5m + pricelist.Pico(r.CacheWrite1h)*rt.CacheWrite1h +
		pricelist.Pico(r.CacheRead)*rt.CacheRead + pricelist.Pico(r.WebSearch)*p.List.WebSearch
	return c, true
}
