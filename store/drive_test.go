package store

import "testing"

// TestFolderMatchesDriveCase: on Windows the drive letter's case varies
// between runs, and NTFS folds the case of every letter: c--Users-x,
// C--Users-x and c--users-X are the folder of C:\Users\x. A POSIX path's
// folder matches its case exactly.
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
		{"c--Users-X", `C:\Users\x`, true},
		{"C--Users-d1-desktop-d3", `C:\Users\d1\Desktop\d3`, true},
		{"C--Users-d1-desktop-d3", `C:\Users\d1\Desktop\d4`, false},
		{"-home-x", "/home/x", true},
		{"-Home-x", "/home/x", false},
	} {
		if got := FolderMatches(c.folder, c.cwd); got != c.want {
			t.Errorf("FolderMatches(%q, %q) = %v, want %v", c.folder, c.cwd, got, c.want)
		}
	}
}
