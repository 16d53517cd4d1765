// Package clone plans cfix clone (a session under a new id, in the
// project folder of another directory), cfix move (the same, keeping the
// id and removing the original) and cfix move-project (every session of a
// renamed or moved project). The copy of a session family itself is
// package carry's; clone names the commands and moves whole projects.
// Planners never write: they return a change set.
package clone

import (
	"fmt"
	"os"

	"github.com/cfix-dev/cfix/carry"
	"github.com/cfix-dev/cfix/changeset"
)

// Options configure a clone or a move of one session (carry.Options).
type Options = carry.Options

// Plan is a clone's or a move's change set and what it makes.
type Plan = carry.Plan

// InputError and ConflictError are carry's: what the user asked is wrong
// (the CLI exits 2), or the store refuses it (exit 1).
type (
	InputError    = carry.InputError
	ConflictError = carry.ConflictError
)

// Clone plans a copy of a session (its whole family) under a new id, in
// the project folder of opts.To (carry.Copy). The source is never
// modified.
func Clone(opts Options) (*Plan, error) { return carry.Copy(opts) }

// Move plans a clone that keeps the session id, then removes the
// originals, all in one change set (carry.Move).
func Move(opts Options) (*Plan, error) { return carry.Move(opts) }

// NormDir makes a working directory absolute and clean (carry.NormDir).
func NormDir(dir string) (string, error) { return carry.NormDir(dir) }

// TargetFolder returns the project folder name Claude Code uses for dir
// (carry.TargetFolder).
func TargetFolder(root, dir string) string { return carry.TargetFolder(root, dir) }

// DerivedUUID returns the UUID made from seed (carry.DerivedUUID).
func DerivedUUID(seed string) string { return carry.DerivedUUID(seed) }

func inputErr(format string, args ...any) error {
	return &carry.InputError{Msg: fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) error {
	return &carry.ConflictError{Msg: fmt.Sprintf(format, args...)}
}

func fp(f changeset.Fingerprint) *changeset.Fingerprint { return &f }

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
