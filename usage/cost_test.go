package usage

import (
	"bytes"
	"os"
	"testing"

	"github.com/cfix-dev/cfix/usage/pricelist"
)

// TestCostByHand: each pricing rule of the list, worked out by hand from
// the list's prices (dollars per million tokens).
func TestCostByHand(t *testing.T) {
	p := NewPricer(nil)
	for _, c := range []struct {
		name  string
		r     Reply
		want  float64 // dollars
		price bool
	}{
		// Opus 4.5: $5 in, $25 out. 1,000 in + 2,000 out = 0.005 + 0.05.
		{"input and output", Reply{Model: "claude-opus-4-5-20251101", Tokens: Tokens{Input: 1000, Output: 2000}}, 0.055, true},
		// Sonnet 4.6 cache writes: 5m $3.75, 1h $6; 100,000 written,
		// 40,000 of them for an hour: 60,000*3.75e-6 + 40,000*6e-6 =
		// 0.225 + 0.24; 1,000,000 read at $0.30 = 0.30.
		{"cache writes by duration, reads", Reply{Model: "claude-sonnet-4-6", Tokens: Tokens{CacheWrite: 100000, CacheWrite1h: 40000, CacheRead: 1000000}}, 0.765, true},
		// Sonnet 4.5 under its long-context threshold: a prompt of
		// 200,000 tokens exactly (100,000 in, 100,000 read) is priced
		// at $3 and $0.30: 0.3 + 0.03, output 1,000 at $15: 0.015.
		{"long context, at the threshold", Reply{Model: "claude-sonnet-4-5-20250929", Tokens: Tokens{Input: 100000, CacheRead: 100000, Output: 1000}}, 0.345, true},
		// One token over: every token at $6, $0.60, $22.50:
		// 100,001*6e-6 + 100,000*0.6e-6 + 1,000*22.5e-6.
		{"long context, over it", Reply{Model: "claude-sonnet-4-5", Tokens: Tokens{Input: 100001, CacheRead: 100000, Output: 1000}}, 0.600006 + 0.06 + 0.0225, true},
		// Haiku 5.5's prompt tier is 100,000: 150,000 written (5m) at
		// $0.625 and 10 out at $2.50.
		{"prompt tier of another threshold", Reply{Model: "claude-haiku-5-5", Tokens: Tokens{CacheWrite: 150000, Output: 10}}, 0.09375 + 0.000025, true},
		// Web search: $10 per 1,000 requests; 3 requests and 10 tokens
		// in at Haiku 4.5's $1.
		{"web search requests", Reply{Model: "claude-haiku-4-5-20251001", Tokens: Tokens{Input: 10, WebSearch: 3, WebFetch: 2}}, 0.03001, true},
		// Opus 4 keeps its dateless id and its -0 alias.
		{"an alias", Reply{Model: "claude-opus-4-0", Tokens: Tokens{Output: 1000}}, 0.075, true},
		{"a dated id", Reply{Model: "claude-opus-4-20250514", Tokens: Tokens{Output: 1000}}, 0.075, true},
		// Not priced: another provider's model, a model the list does not
		// have, fast mode, a near miss of an id.
		{"another provider", Reply{Model: "MiniMax-M2.1", Tokens: Tokens{Input: 1000}}, 0, false},
		{"not in the list", Reply{Model: "claude-sonnet-5-5", Tokens: Tokens{Input: 1000}}, 0, false},
		{"fast mode", Reply{Model: "claude-opus-4-6", Speed: "fast", Tokens: Tokens{Input: 1000}}, 0, false},
		{"a longer id", Reply{Model: "claude-opus-4-50", Tokens: Tokens{Input: 1000}}, 0, false},
	} {
		got, ok := p.Cost(&c.r)
		if ok != c.price {
			t.Errorf("%s: priced %v, want %v", c.name, ok, c.price)
			continue
		}
		if want := pricelist.Pico(c.want*1e12 + 0.5); got != want {
			t.Errorf("%s: %d picodollars (%v), want %d (%v)", c.name, got, got.USD(), want, c.want)
		}
	}
}

// TestPricesGenerated: prices_table.go is what go generate writes from
// prices.json.
func TestPricesGenerated(t *testing.T) {
	b, err := os.ReadFile("prices.json")
	if err != nil {
		t.Fatal(err)
	}
	l, err := pricelist.Parse("prices.json", b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pricelist.GoSource(l, "usage", "Builtin", "prices.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("prices_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("prices_table.go is not what prices.json gives: run go generate ./usage")
	}
}

// TestPriceListRefused: a list that is not one is refused with its name.
func TestPriceListRefused(t *testing.T) {
	for _, c := range []string{
		`{}`,
		`{"date": "2026-11-29", "source": "x", "models": [{"name": "a", "ids": ["a"], "input": 1, "output": 1, "cache_write_5m": 1, "cache_write_1h": 1}]}`,
		`{"date": "2026-11-29", "source": "x", "models": [{"name": "a", "ids": ["A b"], "input": 1, "output": 1, "cache_write_5m": 1, "cache_write_1h": 1, "cache_read": 1}]}`,
		`{"date": "2026-11-29", "source": "x", "models": [{"name": "a", "ids": ["a"], "input": 0.0000001, "output": 1, "cache_write_5m": 1, "cache_write_1h": 1, "cache_read": 1}]}`,
		`{"date": "2026-11-29", "source": "x", "extra": 1, "models": []}`,
	} {
		if _, err := pricelist.Parse("p.json", []byte(c)); err == nil || !bytes.Contains([]byte(err.Error()), []byte("p.json")) {
			t.Errorf("%s: %v", c, err)
		}
	}
}
