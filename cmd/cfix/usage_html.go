package main

import (
	"github.com/cfix-dev/cfix/internal/outfile"
	"github.com/cfix-dev/cfix/usage"
)

// writeUsageHTML writes the report rep and its days as one HTML page.
func writeUsageHTML(path string, rep, days *usage.Report, view usage.View) error {
	out, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer out.Cleanup()
	if err := view.HTML(out, rep, days); err != nil {
		return err
	}
	return out.CloseAtomicallyReplace()
}
