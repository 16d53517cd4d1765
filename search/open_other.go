//go:build !unix

package search

import "os"

// openFile opens a transcript for reading.
func openFile(path string) (*os.File, error) { return os.Open(path) }
