//go:build !unix

package changeset

import "errors"

// statRoom: the platform does not say.
func statRoom(dir string) (fsRoom, error) { return fsRoom{}, errors.New("unknown") }

// checkHandles: the platform does not say.
func checkHandles(root string) error { return nil }
