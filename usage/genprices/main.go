// Command genprices turns the price list usage/prices.json into the Go
// table cfix is built with (usage/prices_table.go): go generate ./usage.
package main

import (
	"fmt"
	"os"

	"github.com/cfix-dev/cfix/usage/pricelist"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genprices prices.json out.go")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err == nil {
		var l *pricelist.List
		if l, err = pricelist.Parse(os.Args[1], b); err == nil {
			if b, err = pricelist.GoSource(l, "usage", "Builtin", "prices.json"); err == nil {
				err = os.WriteFile(os.Args[2], b, 0o644)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genprices:", err)
		os.Exit(1)
	}
}
