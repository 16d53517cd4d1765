package archive

import (
	"archive/tar"
	"io"
	"os"
	"path"
	"strings"
)

// Transcripts reads the archive at path as a stream and calls fn with
// each transcript it holds (every .jsonl member under projects/: main
// transcripts and subagents): its path in the store and its bytes. It
// returns the archive's manifest. The zstd frames' checksums are checked
// as they are read; the archive's final hash is not (restore checks it).
func Transcripts(file string, fn func(name string, r io.Reader) error) (*Manifest, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return TranscriptsOf(file, f, fn)
}

// TranscriptsOf is Transcripts of the archive file's bytes r.
func TranscriptsOf(file string, r io.Reader, fn func(name string, r io.Reader) error) (*Manifest, error) {
	zr, err := newDecoder(r, 1)
	if err != nil {
		return nil, &DamagedError{Path: file, Reason: err.Error()}
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	m, err := manifestOf(file, tr)
	if err != nil {
		return nil, err
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, &DamagedError{Path: file, Reason: err.Error()}
		}
		if hdr.Typeflag != tar.TypeReg || sparse(hdr) || safePath(hdr.Name) != nil ||
			!strings.HasPrefix(hdr.Name, "projects/") || path.Ext(hdr.Name) != ".jsonl" {
			continue
		}
		if err := fn(hdr.Name, tr); err != nil {
			return nil, err
		}
	}
}
