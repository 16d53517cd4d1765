package e2e

import (
	"os"
	"strings"

	"github.com/cfix-dev/cfix/session"
)

// Since reports whether version is from (or newer than) the version from.
// What a test measured on one client holds for every later one until a
// newer client is seen to behave otherwise: facts about versions are ranges
// starting at the version they were measured on, so that pinning a new
// release fails a test only when that release really behaves differently.
func Since(version, from string) bool { return !session.VersionLess(version, from) }

// ScenarioVersions returns the versions the per-version tests run
// (EachScenario, TestTitleReach): the ones CFIX_E2E_VERSIONS names
// (comma- or space-separated; a version need not be pinned yet, which is
// how scripts/new-version.sh tries a new release), else every pinned one.
func ScenarioVersions() ([]string, error) {
	if sel := os.Getenv("CFIX_E2E_VERSIONS"); strings.TrimSpace(sel) != "" {
		return strings.FieldsFunc(sel, func(r rune) bool { return r == ',' || r == ' ' }), nil
	}
	return Versions()
}

// CrossFolderResume says whether "-r ID" run from a folder other than the
// session's finds the session (2.1.330 and later: it resumes it and appends
// to it in its original folder, the entries then carrying the new cwd) or
// answers "No conversation found with session ID" and exits 1 (up to
// 2.1.205: 1.0.51, 1.0.128, 2.0.14, 2.0.77, 2.1.30, 2.1.88, 2.1.205 in the
// corpus stores). known is false for the versions between, never measured:
// the tests then accept either and log what the client did.
func CrossFolderResume(version string) (finds, known bool) {
	switch {
	case Since(version, "2.1.330"):
		return true, true
	case !Since(version, "2.1.206"):
		return false, true
	}
	return false, false
}
