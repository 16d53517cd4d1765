package usage

import "time"

// RowDoc is a row of cfix usage --json, or its totals.
type RowDoc struct {
	Key                        string    `json:"key,omitempty"`
	Project                    string    `json:"project,omitempty"`
	First                      time.Time `json:"first,omitzero"`
	Last                       time.Time `json:"last,omitzero"`
	End                        time.Time `json:"end,omitzero"`
	Active                     *bool     `json:"active,omitempty"`
	Replies                    int       `json:"replies"`
	InputTokens                int64     `json:"input_tokens"`
	OutputTokens               int64     `json:"output_tokens"`
	CacheCreationInputTokens   int64     `json:"cache_creation_input_tokens"`
	CacheCreation5mInputTokens int64     `json:"cache_creation_5m_input_tokens"`
	CacheCreation1hInputTokens int64     `json:"cache_creation_1h_input_tokens"`
	CacheReadInputTokens       int64     `json:"cache_read_input_tokens"`
	TotalTokens                int64     `json:"total_tokens"`
	WebSearchRequests          int64     `json:"web_search_requests"`
	WebFetchRequests           int64     `json:"web_fetch_requests"`
	// CostUSD is null when a reply of the row has no price;
	// PricedCostUSD is the cost of those that have one.
	CostUSD        *float64  `json:"cost_usd"`
	PricedCostUSD  float64   `json:"priced_cost_usd"`
	UnpricedModels []string  `json:"unpriced_models"`
	Models         []string  `json:"models"`
	Breakdown      []*RowDoc `json:"breakdown,omitempty"`
}

// Doc is the document of cfix usage --json.
type Doc struct {
	Group    string    `json:"group"`
	Timezone string    `json:"timezone"`
	Rows     []*RowDoc `json:"rows"`
	Totals   *RowDoc   `json:"totals"`
	// Archived counts the replies and sessions counted that only cfix's
	// archive holds.
	Archived struct {
		Replies  int `json:"replies"`
		Sessions int `json:"sessions"`
	} `json:"archived"`
	Prices struct {
		Date   string `json:"date"`
		Source string `json:"source"`
	} `json:"prices"`
}

// DocOf is the JSON document of a report.
func DocOf(r *Report) *Doc {
	d := &Doc{Group: string(r.Group), Timezone: r.Loc.String(), Rows: []*RowDoc{}, Totals: rowDoc(&r.Total, false)}
	for _, row := range r.Rows {
		d.Rows = append(d.Rows, rowDoc(row, r.Group == Block))
	}
	d.Totals.Key = ""
	d.Archived.Replies, d.Archived.Sessions = r.Archived, r.ArchivedSessions
	d.Prices.Date, d.Prices.Source = r.Prices.Date, r.Prices.Source
	return d
}

func rowDoc(r *Row, block bool) *RowDoc {
	d := &RowDoc{Key: r.Key, Project: r.Project, First: r.First.UTC(), Last: r.Last.UTC(), Replies: r.Replies,
		InputTokens: r.Input, OutputTokens: r.Output, CacheCreationInputTokens: r.CacheWrite,
		CacheCreation5mInputTokens: r.CacheWrite5m(), CacheCreation1hInputTokens: r.CacheWrite1h,
		CacheReadInputTokens: r.CacheRead, TotalTokens: r.Total(), WebSearchRequests: r.WebSearch, WebFetchRequests: r.WebFetch,
		PricedCostUSD: r.Cost.USD(), UnpricedModels: r.UnpricedModels, Models: r.Models}
	if r.Replies == 0 {
		d.First, d.Last = time.Time{}, time.Time{}
	}
	if r.Priced() {
		c := r.Cost.USD()
		d.CostUSD = &c
	}
	if d.UnpricedModels == nil {
		d.UnpricedModels = []string{}
	}
	if d.Models == nil {
		d.Models = []string{}
	}
	if block {
		d.End = r.End.UTC()
		a := r.Active
		d.Active = &a
	}
	for _, b := range r.Breakdown {
		d.Breakdown = append(d.Breakdown, rowDoc(b, false))
	}
	return d
}
