//go:build !unix

package secrets

import "os"

// openFile opens a file of the store for reading.
func openFile(path string) (*os.File, error) { return os.Open(path) }
