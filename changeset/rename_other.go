//go:build !linux

package changeset

// renameNoReplace is not available here: the caller links.
func renameNoReplace(from, to string) error { return errNoRename }
