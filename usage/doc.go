// Package usage is what Claude Code cost: the usage of every reply of the
// API a store's transcripts (and cfix's archives) hold, each counted
// once, grouped by day, week, month, session, project, model or 5-hour
// block, and priced from a price list.
//
// A reply is counted once, by its message id, with the usage of its last
// written entry: streamed entries of one reply repeat its id and grow its
// output count; a copy of a reply (a fork, a resumed session's copy, a
// subagent file) carries the same. <synthetic> and API error entries
// count nothing.
package usage

//go:generate go run ./genprices prices.json prices_table.go
