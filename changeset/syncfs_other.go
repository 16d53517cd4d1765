//go:build !linux

package changeset

// canSyncFS: no syncfs here; a batch is applied op by op.
const canSyncFS = false

func syncFS(path string) error { return nil }
