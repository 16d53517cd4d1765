#!/usr/bin/env bash
# test-deps.sh: install, or check, what the tests need beyond Go; make test
# and .ci/run (through make test) run it first.
#
#   chromium    the HTML export is tested in headless Chromium (export/chromium_test.go)
#   cmark-gfm   the Markdown export is read back with GitHub's renderer (export/markdown_test.go)
#   tmux        for end-to-end tests that run Claude Code interactively, in a terminal
#   faketime    (and its libfaketime) runs the interactive client's clock 10 times
#               faster, so TestGuardSweep waits a minute for its 10-minute sweep
#   ripgrep     (rg) for the same tests
#   npm         installs the Claude Code clients the end-to-end tests run
#   versitygw   an S3 server over a local folder, which the push and pull
#               tests run on loopback (go install, into .cache/bin)
#
# As root, it installs the missing Debian packages with apt-get (apt-get update
# first, only when something is missing). Otherwise it stops at once with the
# one command to run. Then it installs the pinned Claude Code clients
# (scripts/install-claude.sh: e2e/versions.txt, and the clients TestOracle
# resumes the wild stores with), about 1.2 GB into .cache/claude; a client
# already installed costs nothing.
#
# Usage: scripts/test-deps.sh [--no-clients]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)

# package:program pairs; a package is missing when its program is.
need=(chromium:chromium cmark-gfm:cmark-gfm tmux:tmux ripgrep:rg npm:npm faketime:faketime)
missing=()
for pair in "${need[@]}"; do
	pkg=${pair%%:*} prog=${pair#*:}
	command -v "$prog" >/dev/null 2>&1 || missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "test-deps.sh: installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq "${missing[@]}" >/dev/null
	elif command -v apt-get >/dev/null 2>&1; then
		echo "test-deps.sh: the tests need ${missing[*]}; install them, then run make test again:" >&2
		echo "  sudo apt-get install -y ${missing[*]}" >&2
		exit 1
	else
		echo "test-deps.sh: the tests need these programs: ${missing[*]} (Debian package names); install them, then run make test again" >&2
		exit 1
	fi
fi

# versitygw, at the version the tests are written against (a go install
# from the module proxy: some minutes the first time, nothing after).
versitygw_version=v1.8.0
if [ ! -x "$root/.cache/bin/versitygw" ]; then
	echo "test-deps.sh: installing versitygw $versitygw_version into .cache/bin"
	mkdir -p "$root/.cache/bin"
	(cd "$root" && GOBIN="$root/.cache/bin" go install "github.com/versity/versitygw/cmd/versitygw@$versitygw_version")
fi

[ "${1:-}" = --no-clients ] && exit 0

# The pinned clients, those TestOracle resumes the wild stores with
# ("# oracle:" in e2e/versions.txt) and those single tests run ("# probe:").
oracle=$(sed -nE 's/^# (oracle|probe): *//p' "$root/e2e/versions.txt")
"$root/scripts/install-claude.sh"
# shellcheck disable=SC2086 # a list of versions
[ -z "$oracle" ] || "$root/scripts/install-claude.sh" $oracle
