#!/usr/bin/env bash
# new-version.sh: bring a new Claude Code version into the tests.
#
# Usage: scripts/new-version.sh VERSION
#
#   1. installs VERSION (scripts/install-claude.sh VERSION);
#   2. writes its corpus store testdata/corpus/VERSION: the real client runs
#      the e2e scenario and the corpus steps (e2e.CorpusScenario) against the
#      fake API (e2e/fakeapi) with HOME=/home/dev, as every corpus store was
#      written (go test ./e2e -run TestCorpusStore); skipped when the folder
#      exists already (remove it to write it again);
#   3. runs the unit tests that loop over the corpus stores;
#   4. runs the end-to-end tests of VERSION alone (CFIX_E2E_VERSIONS=VERSION),
#      whether or not e2e/versions.txt lists it yet.
#
# It leaves e2e/versions.txt alone: add the line VERSION to it (see
# CONTRIBUTING.md), then commit it with testdata/corpus/VERSION.
# CLAUDE_CACHE_DIR overrides where the clients are installed (.cache/claude).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)

die() {
	echo "new-version.sh: $*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: scripts/new-version.sh VERSION (e.g. $(sed -n '/^[0-9]/p' "$root/e2e/versions.txt" | tail -1))"
version=$1
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "version $version: want MAJOR.MINOR.PATCH, as npm view @anthropic-ai/claude-code version prints it"
command -v go >/dev/null 2>&1 || die "go not found in PATH"

cd "$root"
corpus=testdata/corpus/$version

echo "== 1. install Claude Code $version"
scripts/install-claude.sh "$version"

if [ -e "$corpus" ]; then
	echo "== 2. $corpus exists: kept (remove it to write it again)"
else
	echo "== 2. write $corpus (the scenario against the fake API, HOME=/home/dev)"
	CFIX_E2E_VERSIONS=$version CFIX_CORPUS_VERSION=$version CFIX_CORPUS_OUT=$corpus \
		go test ./e2e -run '^TestCorpusStore$' -count=1 -timeout 20m ||
		echo "new-version.sh: the corpus run reported failures (see above)" >&2
	[ -d "$corpus/.claude" ] || die "Claude Code $version: $corpus was not written"
fi

echo "== 3. unit tests over the corpus stores"
unit_status=0
go test -count=1 ./session ./schemas ./store ./validate ./repair ./trim ./search ./show ./export ./clone ./archive ./cmd/cfix || unit_status=$?

log=$(mktemp "${TMPDIR:-/tmp}/new-version-$version-e2e.XXXXXX")
echo "== 4. end-to-end tests of Claude Code $version (whole log: $log)"
e2e_status=0
CFIX_E2E_VERSIONS=$version go test -count=1 -timeout 30m -v ./e2e -skip '^(TestOracle|TestOracleProbe|TestCorpusStore)$' >"$log" 2>&1 || e2e_status=$?
grep -E '^(    )?--- (PASS|FAIL|SKIP)|^(ok|FAIL|panic)' "$log" || true

if [ $unit_status -ne 0 ] || [ $e2e_status -ne 0 ]; then
	die "Claude Code $version: some tests failed (unit: exit $unit_status, e2e: exit $e2e_status). A failure on the new store is either a cfix bug (an error finding on what the real client wrote) or the client behaving differently from the version a fact was measured on: see CONTRIBUTING.md"
fi
if ! grep -qx "$version" e2e/versions.txt; then
	echo "Claude Code $version passes. Pin it: add the line $version to e2e/versions.txt, and the row of what it writes that is new to testdata/corpus/README.md."
else
	echo "Claude Code $version passes."
fi
