package store

import "testing"

// TestFolderMatchesDriveCase: on Windows the drive letter's case varies
// between runs; c--Users-x and C--Users-x are the folder of C:\Users\x.
func TestFolderMatchesDriveCase(t *testing.T) {
	for _, c := range []struct {
		folder, cwd string
		want        bool
	}{
		{"C--Users-x", `C:\Users\x`, true},
		{"c--Users-x", `C:\Users\x`, true},
		{"C--Users-x", `c:\Users\x`, true},
		{"c--Users-x", `c:/Users/x`, true},
		{"d--Users-x", `C:\Users\x`, false},
		{"c--Users-X", `C:\Users\x`, false}, // only the drive letter
		{"-home-x", "/home/x", true},
		{"-Home-x", "/home/x", false},
	} {
		if got := FolderMatches(c.folder, c.cwd); got != c.want {
			t.Errorf("FolderMatches(%q, %q) = %v, want %v", c.folder, c.cwd, got, c.want)
		}
	}
}
