package store

import (
	"io"
	"regexp"
	"runtime"
	"sync"

	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/session"
)

// versionTail is how much of the end of a transcript NewestVersion reads.
const versionTail = 16 << 10

var versionField = regexp.MustCompile(`"version":"([0-9]+\.[0-9]+\.[0-9]+)"`)

// NewestVersion returns the newest Claude Code version that wrote to the
// main transcripts of files (and the subagent transcripts beside them,
// in 2.0.x stores), "" when none names one: the client its user
// runs now, and the one that resumes every session of the store, whichever
// version wrote it. It reads the last 16 KB of each (where the entries a
// client wrote last are; their mtimes do not tell, a copied store has them
// all alike).
func NewestVersion(files []File) string {
	var mu sync.Mutex
	newest := ""
	next := 0
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, versionTail)
			for {
				mu.Lock()
				for next < len(files) && (files[next].Kind != KindSession && files[next].Kind != KindAgentFlat || files[next].Size == 0) {
					next++
				}
				if next == len(files) {
					mu.Unlock()
					return
				}
				f := files[next]
				next++
				mu.Unlock()
				if v := lastVersion(f, buf); v != "" {
					mu.Lock()
					if newest == "" || session.VersionLess(newest, v) {
						newest = v
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return newest
}

// lastVersion returns the newest version named in the last 16 KB of f.
func lastVersion(f File, buf []byte) string {
	fh, err := rfile.Open(f.Path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	n, err := fh.ReadAt(buf[:min(int64(len(buf)), f.Size)], max(f.Size-int64(len(buf)), 0))
	if err != nil && err != io.EOF {
		return ""
	}
	v := ""
	for _, m := range versionField.FindAllSubmatch(buf[:n], -1) {
		if s := string(m[1]); v == "" || session.VersionLess(v, s) {
			v = s
		}
	}
	return v
}
