package browse

import (
	"strings"
	"testing"

	"github.com/cfix-dev/cfix/internal/rsstest"
)

// TestMemoryHostile: browse's preview of a session of hostile input (its
// export, of which the last PreviewCap bytes are kept) peaks under 200 MB
// of RSS; the prompt of 256 MB shows its start and the note that cuts it,
// and the reply after it.
func TestMemoryHostile(t *testing.T) {
	for _, kind := range rsstest.QuickKinds {
		t.Run(string(kind), func(t *testing.T) {
			root, path := rsstest.Store(t, kind)
			rsstest.Measure(t, 200, func(t *testing.T) {
				msg := previewCmd(root, path, 1, nil)().(previewMsg)
				if msg.err != nil {
					t.Fatal(msg.err)
				}
				if len(msg.text) > PreviewCap {
					t.Errorf("the preview holds %d bytes", len(msg.text))
				}
				if kind == rsstest.HugeLine && (!strings.Contains(msg.text, "over the 64.0 MB cfix reads whole") || !strings.Contains(msg.text, "Read it.")) {
					t.Errorf("the preview of the long prompt ends %q", msg.text[max(0, len(msg.text)-400):])
				}
			})
		})
	}
}
