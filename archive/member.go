package archive

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"

	"github.com/klauspost/compress/zstd"
)

// The checks of what an archive holds, for the readers of other streams
// of a store's files written elsewhere (a pack): the same bounds and the
// same refusals as restore's.

// MaxManifest is the largest manifest a reader takes (see maxManifest).
const MaxManifest = maxManifest

// CheckMemberPath refuses a member path that is not a clean relative path
// into one of the store's folders that hold sessions' files.
func CheckMemberPath(p string) error { return safePath(p) }

// OwnedPart reports whether p, a clean member path, is a file or folder
// session s may own, with projects its project folders, and whether it is
// a folder (see checkOwned).
func OwnedPart(s string, projects map[string]bool, p string) (dir, ok bool) {
	return ownedPart(s, projects, p)
}

// UnderDir reports whether p lies under one of dirs (forward slashes).
func UnderDir(dirs map[string]bool, p string) bool { return underDir(dirs, p) }

// ValidName reports whether s can be one component of a path in a store.
func ValidName(s string) bool { return validName(s) }

// Sparse reports whether a tar member is a sparse file, which cfix never
// writes and refuses to read.
func Sparse(hdr *tar.Header) bool { return sparse(hdr) }

// SafeMode is the mode a member extracted into a store gets: its
// permission bits without those no file of the store needs (files 0664 at
// most, folders 0775 at most and always the owner's rwx).
func SafeMode(dir bool, mode fs.FileMode) fs.FileMode {
	return safeMode(FileInfo{Dir: dir, Mode: mode})
}

// CheckShape refuses a JSON text over MaxManifest bytes or holding more
// objects and values than a manifest of that size holds, before it is
// decoded.
func CheckShape(b []byte) error {
	if len(b) > maxManifest {
		return fmt.Errorf("%s, over the %s a manifest may have", sizeWords(int64(len(b))), sizeWords(maxManifest))
	}
	if objects, values := shape(b); objects > maxObjects || values > maxValues {
		return fmt.Errorf("%d objects and %d values, more than a manifest holds (%d and %d at most)", objects, values, maxObjects, maxValues)
	}
	return nil
}

// SizeWords is a byte count for a message: 16 MB, 200.0 MB.
func SizeWords(n int64) string { return sizeWords(n) }

// NewDecoder returns a zstd reader of r that refuses frames asking for a
// window over what cfix writes, on conc goroutines.
func NewDecoder(r io.Reader, conc int) (*zstd.Decoder, error) { return newDecoder(r, conc) }

// NewEncoder returns a zstd encoder at the level archives are written
// with, on conc goroutines.
func NewEncoder(conc int) (*zstd.Encoder, error) { return newEncoder(conc) }

// CfixVersion names the cfix that runs (its module version and commit).
func CfixVersion() string { return cfixVersion() }

// FreeSpace returns the file system of path (its device) and the bytes
// free on it to an unprivileged writer, or -1 where that is not known.
func FreeSpace(path string) (dev uint64, free int64, err error) { return freeSpace(path) }
