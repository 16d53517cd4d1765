package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/cfix-dev/cfix/internal/plural"
	"github.com/cfix-dev/cfix/internal/rfile"
	"github.com/cfix-dev/cfix/internal/visible"
)

// An archive file is <session-id>.tar.zst: a tar stream (PAX format, which
// keeps modification times to the nanosecond) compressed with zstd (frames
// with a content checksum). Its first member is ManifestName, the JSON
// Manifest; then every folder and file the session owned, in the
// manifest's order, named by its path relative to the store's root.

// After the zstd frame comes a skippable frame (which zstd and tar --zstd
// pass over) holding the sha256 of every byte before it: a bit flipped
// anywhere, even where the zstd frame's own checksum does not look (its
// header), or a cut, makes the archive fail to verify.

// trailerMagic starts the skippable frame (0x184D2A50, little-endian);
// trailerTag names its content.
var (
	trailerMagic = []byte{0x50, 0x2a, 0x4d, 0x18}
	trailerTag   = []byte("cfixsha2")
)

// trailerSize is the size of the trailing frame: magic, length, tag, sum.
const trailerSize = 4 + 4 + 8 + sha256.Size

// trailer returns the skippable frame holding sum.
func trailer(sum []byte) []byte {
	b := append([]byte(nil), trailerMagic...)
	b = append(b, 8+sha256.Size, 0, 0, 0)
	b = append(b, trailerTag...)
	return append(b, sum...)
}

// ManifestName is the name of an archive's first member.
const ManifestName = "cfix-manifest.json"

// Ext is the archive files' extension.
const Ext = ".tar.zst"

// FormatName and FormatVersion identify the manifest's format.
const (
	FormatName    = "cfix-session-archive"
	FormatVersion = 1
)

// Manifest describes one archived session.
type Manifest struct {
	Format   string   `json:"format"`
	Version  int      `json:"version"`
	Cfix     string   `json:"cfix"`
	Session  string   `json:"session"`
	Projects []string `json:"projects"` // project folders that held its main transcripts
	CWD      string   `json:"cwd,omitempty"`
	Title    string   `json:"title,omitempty"`
	// First and Last are the timestamps of the first and the last entry
	// of its main transcript (as the /resume picker reads them: the first
	// and the last 64 KB).
	First string `json:"first,omitempty"`
	Last  string `json:"last,omitempty"`
	// LastActivity is the newest modification time of its files.
	LastActivity time.Time  `json:"last_activity"`
	Archived     time.Time  `json:"archived"`
	Bytes        int64      `json:"bytes"` // of all its files
	Parts        []PartInfo `json:"parts"`
	Files        []FileInfo `json:"files"`
	// Index holds the entry each project folder's sessions-index.json
	// had for the session, by folder.
	Index map[string]json.RawMessage `json:"index,omitempty"`
	// Folders holds the mode and mtime of each project folder of Projects
	// when the session was archived: restore makes one that is gone (the
	// archive left it empty, and removed it) as it was.
	Folders map[string]FolderInfo `json:"folders,omitempty"`
	// StubOf names the session this one is a stub of (metadata only,
	// archived with it): restore of that session restores it too.
	StubOf string `json:"stub_of,omitempty"`
}

// FolderInfo is the mode and mtime of a project folder.
type FolderInfo struct {
	Mode    fs.FileMode `json:"mode"` // permission bits
	ModTime time.Time   `json:"mtime"`
}

// PartInfo is one file or folder the session owned, as removed.
type PartInfo struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir,omitempty"`
	What string `json:"what"`
}

// FileInfo is one member: a file, or a folder (Dir).
type FileInfo struct {
	Path    string      `json:"path"`
	Dir     bool        `json:"dir,omitempty"`
	Mode    fs.FileMode `json:"mode"` // permission bits
	ModTime time.Time   `json:"mtime"`
	Size    int64       `json:"size,omitempty"`
	SHA256  string      `json:"sha256,omitempty"`
	// changed is the file's change time when it was hashed.
	changed time.Time
	// data holds its bytes from the hash to the write, when they fit in
	// the worker's buffer (see holder).
	data []byte
}

// cfixVersion names the cfix that writes an archive.
func cfixVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}

// DefaultDir returns where archives are kept: $CFIX_ARCHIVE_DIR, else
// $XDG_DATA_HOME/cfix/archive, else ~/.local/share/cfix/archive: outside
// the store, where Claude Code's cleanup does not reach.
func DefaultDir() (string, error) {
	if d := os.Getenv("CFIX_ARCHIVE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "cfix", "archive"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("archive folder: no home directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "cfix", "archive"), nil
}

// folder returns the archive folder dir names, absolute: DefaultDir when
// dir is "".
func folder(dir string) (string, error) {
	if dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return "", err
		}
		dir = d
	}
	return filepath.Abs(dir)
}

// newEncoder returns a zstd encoder for archives: the fastest level, on
// conc goroutines (a big session alone keeps every core busy; small ones
// are compressed side by side, one each). One encoder writes many
// archives, one after the other (Reset). The fastest level, not the
// default: over a store of transcripts it compresses about 20% faster
// for archives about 5% bigger (the sessions' JSON repeats itself within
// a window either level sees).
func newEncoder(conc int) (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(conc))
}

// write writes the archive of m's files (read under root) to w, copying
// through buf. A file whose bytes describe held is written from them;
// any other is read again, and must still have the size, modification
// time and change time it had when it was hashed (checked as it is
// copied).
func write(w io.Writer, root string, m *Manifest, zw *zstd.Encoder, buf []byte) error {
	zw.Reset(w)
	tw := tar.NewWriter(zw)
	if err := WriteManifest(tw, ManifestName, m, m.Archived); err != nil {
		return err
	}
	if buf == nil {
		buf = make([]byte, 256<<10)
	}
	for i := range m.Files {
		f := &m.Files[i]
		src := filepath.Join(root, filepath.FromSlash(f.Path))
		if err := WriteHeader(tw, f.member()); err != nil {
			return err
		}
		if f.Dir {
			continue
		}
		if f.data != nil {
			// Read once, hashed, unchanged to the end of the read.
			_, err := tw.Write(f.data)
			f.data = nil
			if err != nil {
				return err
			}
			continue
		}
		if err := copyChecked(tw, src, *f, buf); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// copyChecked copies the file at src to w, checking that it is still what
// f describes.
func copyChecked(w io.Writer, src string, f FileInfo, buf []byte) error {
	in, err := rfile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	n, err := io.CopyBuffer(w, io.LimitReader(in, f.Size), buf)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	// The file is the one hashed, unchanged since: the same size, mtime
	// and change time (which every write moves, and nothing sets back).
	if n != f.Size || fi.Size() != f.Size || !fi.ModTime().Equal(f.ModTime) || !sameChange(fi, f.changed) {
		return fmt.Errorf("%s changed while it was archived; plan again", src)
	}
	return nil
}

// DamagedError is an archive file that cannot be read whole, or whose
// content differs from its manifest.
type DamagedError struct {
	Path   string
	Reason string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("archive %s is damaged or truncated: %s; nothing was restored", visible.String(e.Path), visible.String(e.Reason))
}

// maxWindow is the largest zstd window an archive's reader accepts: cfix
// writes 8 MB windows at most, and a frame that asks for more would make
// the reader hold that much.
const maxWindow = 64 << 20

// newDecoder returns a zstd reader of r for archives, on conc goroutines.
func newDecoder(r io.Reader, conc int) (*zstd.Decoder, error) {
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(conc), zstd.WithDecoderMaxWindow(maxWindow))
}

// readManifest reads the manifest of the archive at path (its first
// member only, never more than maxManifest bytes of it).
func readManifest(path string) (*Manifest, error) {
	f, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := newDecoder(f, 1)
	if err != nil {
		return nil, &DamagedError{Path: path, Reason: err.Error()}
	}
	defer zr.Close()
	return manifestOf(path, tar.NewReader(zr))
}

// manifestOf reads the manifest, the first member of tr: at most
// maxManifest bytes (a bigger one is refused unread), decoded, checked
// to name only its session's own files (checkOwned).
func manifestOf(path string, tr *tar.Reader) (*Manifest, error) {
	hdr, err := tr.Next()
	if err != nil {
		return nil, &DamagedError{Path: path, Reason: "no manifest: " + err.Error()}
	}
	if hdr.Name != ManifestName || hdr.Typeflag != tar.TypeReg {
		return nil, &DamagedError{Path: path, Reason: fmt.Sprintf("the first member is %s, not %s", visible.String(hdr.Name), ManifestName)}
	}
	if hdr.Size > maxManifest || sparse(hdr) {
		return nil, &DamagedError{Path: path, Reason: fmt.Sprintf("its manifest is %s, over the %s a manifest may have: refused unread", sizeWords(hdr.Size), sizeWords(maxManifest))}
	}
	b, err := io.ReadAll(io.LimitReader(tr, maxManifest+1))
	if err != nil {
		return nil, &DamagedError{Path: path, Reason: "manifest: " + err.Error()}
	}
	return acceptManifest(path, b)
}

// acceptManifest decodes the manifest b of the archive at path, and
// checks it: its format, every path clean (safePath) and the session's
// own (checkOwned).
func acceptManifest(path string, b []byte) (*Manifest, error) {
	m, err := parseManifest(b)
	if err != nil {
		return nil, &DamagedError{Path: path, Reason: "manifest: " + err.Error()}
	}
	if m.Format != FormatName {
		return nil, &DamagedError{Path: path, Reason: fmt.Sprintf("not a cfix session archive (format %q)", m.Format)}
	}
	if m.Version != FormatVersion {
		return nil, fmt.Errorf("archive %s: format version %d, this cfix reads %d", visible.String(path), m.Version, FormatVersion)
	}
	for _, f := range m.Files {
		if err := safePath(f.Path); err != nil {
			return nil, &DamagedError{Path: path, Reason: err.Error()}
		}
	}
	for _, p := range m.Parts {
		if err := safePath(p.Path); err != nil {
			return nil, &DamagedError{Path: path, Reason: err.Error()}
		}
	}
	if err := checkOwned(path, m); err != nil {
		return nil, err
	}
	return m, nil
}

// topFolders are the folders of a store an archive may write into.
var topFolders = map[string]bool{"projects": true, "file-history": true, "session-env": true, "tasks": true,
	"todos": true, "debug": true, "usage-data": true}

// safePath refuses a member path that is not a clean relative path into
// one of the store's session folders.
func safePath(p string) error {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." || strings.Contains(p, "\\") {
		return fmt.Errorf("member %q: not a clean relative path", p)
	}
	top, _, _ := strings.Cut(p, "/")
	if !topFolders[top] || !strings.Contains(p, "/") {
		return fmt.Errorf("member %q: not in a folder of the store that holds sessions", p)
	}
	return nil
}

// sparse reports whether a member is a sparse file (PAX GNU.sparse
// records): its holes read as zeros, so a few bytes of it can stand for
// a terabyte, beyond what even zstd compresses to.
func sparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// verified is what reading a whole archive gave.
type verified struct {
	Manifest *Manifest
	Size     int64
	ModTime  time.Time
	SHA256   string // of the archive file
}

// verify reads the archive at path whole, streaming: zstd frames and
// checksums, the tar stream, every member against the manifest (order,
// kind, size, mode, sha256 of the bytes), nothing after the last. With dst
// (an apply), it extracts the members under dst (files and folders with
// their modes, see safeMode, and mtimes), each stopped at the size the
// manifest declares; before, when set, is called with the manifest
// before any member is read (to check there is room for them). Without
// dst (a dry run) nothing is written anywhere.
func verify(path, dst string, before func(*Manifest) error) (*verified, error) {
	f, err := rfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < trailerSize {
		return nil, &DamagedError{Path: path, Reason: plural.Count(fi.Size(), "byte") + ": too short for an archive"}
	}
	body := fi.Size() - trailerSize
	tr0 := make([]byte, trailerSize)
	if _, err := f.ReadAt(tr0, body); err != nil {
		return nil, err
	}
	if !bytes.Equal(tr0[:16], trailer(nil)[:16]) {
		return nil, &DamagedError{Path: path, Reason: "its end is not the checksum frame cfix writes (cut short?)"}
	}
	h := sha256.New()
	zr, err := newDecoder(io.TeeReader(io.NewSectionReader(f, 0, body), h), 2)
	if err != nil {
		return nil, &DamagedError{Path: path, Reason: err.Error()}
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	m, err := manifestOf(path, tr)
	if err != nil {
		return nil, err
	}
	if before != nil {
		if err := before(m); err != nil {
			return nil, err
		}
	}
	damaged := func(format string, args ...any) error {
		return &DamagedError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	want := make([]Member, len(m.Files))
	for i, f := range m.Files {
		want[i] = f.member()
	}
	dirs, err := ReadMembers(tr, want, dst, MemberErrors{Damaged: damaged})
	if err != nil {
		return nil, err
	}
	// The rest of the stream (tar padding, the zstd frame's checksum).
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, damaged("%v", err)
	}
	if !bytes.Equal(h.Sum(nil), tr0[16:]) {
		return nil, damaged("its bytes differ from the sha256 written at its end")
	}
	if err := SetFolders(dst, dirs); err != nil {
		return nil, err
	}
	whole := sha256.New()
	if _, err := io.Copy(whole, io.NewSectionReader(f, 0, fi.Size())); err != nil {
		return nil, err
	}
	return &verified{Manifest: m, Size: fi.Size(), ModTime: fi.ModTime(), SHA256: hex.EncodeToString(whole.Sum(nil))}, nil
}

// window is how much of each end of a transcript the /resume picker reads.
const window = 64 << 10

// windowPool holds the buffers of headTail.
var windowPool = sync.Pool{New: func() any { return &[2][]byte{make([]byte, window), make([]byte, window)} }}

// headTail returns up to window bytes of the start and of the end of a
// file, read into bufs.
func headTail(path string, bufs *[2][]byte) (head, tail []byte, err error) {
	n := int64(window)
	f, err := rfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	head = bufs[0][:min(n, fi.Size())]
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, nil, err
	}
	if fi.Size() <= n {
		return head, head, nil
	}
	tail = bufs[1][:n]
	if _, err := f.ReadAt(tail, fi.Size()-n); err != nil {
		return nil, nil, err
	}
	return head, tail, nil
}

// describeMain reads what the /resume picker reads of a main transcript
// (its first and last 64 KB) into m: cwd, first and last timestamps.
// held, when set, is the whole file's bytes, read already. (The title is
// the store's glance's, as cfix ls shows it: see describe.)
func describeMain(m *Manifest, path string, held []byte) error {
	var head, tail []byte
	if held != nil {
		head, tail = held[:min(window, len(held))], held[max(0, len(held)-window):]
	} else {
		bufs := windowPool.Get().(*[2][]byte)
		defer windowPool.Put(bufs)
		var err error
		if head, tail, err = headTail(path, bufs); err != nil {
			return err
		}
	}
	headLines := bytes.Split(head, []byte("\n"))
	tailLines := bytes.Split(tail, []byte("\n"))
	cut := len(tail) == window && len(tailLines) > 0 && len(head) == window
	if cut {
		tailLines = tailLines[1:] // cut at the window's edge: not an entry
	}
	for _, l := range headLines {
		if m.First == "" {
			m.First, _ = stringField(l, "timestamp")
		}
		if m.CWD == "" {
			m.CWD, _ = stringField(l, "cwd")
		}
		if m.First != "" && m.CWD != "" {
			break
		}
	}
	for i := len(tailLines) - 1; i >= 0 && m.Last == ""; i-- {
		m.Last, _ = stringField(tailLines[i], "timestamp")
	}
	return nil
}
