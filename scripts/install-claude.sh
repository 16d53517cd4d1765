#!/usr/bin/env bash
# install-claude.sh: install pinned Claude Code versions from the npm registry,
# each into its own folder, for the end-to-end tests in e2e/.
#
# Usage: scripts/install-claude.sh [VERSION...]
#   With no argument it installs every version listed in e2e/versions.txt.
#
# Each version goes to .cache/claude/<version>/ (CLAUDE_CACHE_DIR overrides
# .cache/claude). When the install is complete and the executable answers
# --version, the script writes .cache/claude/<version>/.installed holding the
# executable's path relative to that folder; a version that has this marker is
# skipped, so running the script again costs nothing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${CLAUDE_CACHE_DIR:-$root/.cache/claude}
versions_file=$root/e2e/versions.txt
pkg=@anthropic-ai/claude-code

die() {
	echo "install-claude.sh: $*" >&2
	exit 1
}

if ! command -v npm >/dev/null 2>&1; then
	die "npm not found in PATH: the end-to-end tests install Claude Code from the npm registry; install Node.js and npm (https://nodejs.org/) and run 'make claude-versions' again"
fi

versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
	[ -f "$versions_file" ] || die "$versions_file is missing"
	while IFS= read -r line; do
		line=${line%%#*}
		line=$(echo "$line" | tr -d '[:space:]')
		[ -n "$line" ] && versions+=("$line")
	done <"$versions_file"
fi
[ ${#versions[@]} -gt 0 ] || die "no version to install (is $versions_file empty?)"

mkdir -p "$cache"

# Serialize concurrent runs (make and go test may start the script together).
if command -v flock >/dev/null 2>&1; then
	exec 9>"$cache/.lock"
	flock 9
fi

# find_exe prints the path, relative to the install folder $1, of the program
# that runs Claude Code: the native binary of the platform package when the
# version ships one, else the JavaScript entry point node_modules/.bin/claude
# points to.
find_exe() {
	local dir=$1 arch os cand
	os=$(uname -s | tr '[:upper:]' '[:lower:]')
	case $(uname -m) in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) arch=$(uname -m) ;;
	esac
	# Native builds (2.1.x): @anthropic-ai/claude-code-<os>-<arch>[-musl]/claude.
	for cand in \
		"node_modules/$pkg-$os-$arch/claude" \
		"node_modules/$pkg-$os-$arch-musl/claude"; do
		if [ -f "$dir/$cand" ] && [ -x "$dir/$cand" ]; then
			echo "$cand"
			return 0
		fi
	done
	# JavaScript builds (and native builds whose postinstall put the binary in
	# place): follow node_modules/.bin/claude.
	if [ -e "$dir/node_modules/.bin/claude" ]; then
		cand=$(readlink -f "$dir/node_modules/.bin/claude")
		if [ -f "$cand" ]; then
			echo "${cand#"$dir"/}"
			return 0
		fi
	fi
	return 1
}

for v in "${versions[@]}"; do
	# The version names a folder that gets removed and refilled: accept
	# version numbers only.
	[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] || die "'$v' is not a version number"
	dir=$cache/$v
	marker=$dir/.installed
	if [ -f "$marker" ] && [ -x "$dir/$(cat "$marker")" ]; then
		echo "claude $v: already installed ($dir/$(cat "$marker"))"
		continue
	fi
	echo "claude $v: installing into $dir"
	rm -rf "$dir"
	mkdir -p "$dir"
	# --include=optional: 2.1.x ships its native binary as an optional
	# dependency; a user config that omits optional packages would break it.
	if ! npm install --prefix "$dir" --no-audit --no-fund --no-save \
		--include=optional --loglevel=error "$pkg@$v" >"$dir/npm-install.log" 2>&1; then
		cat "$dir/npm-install.log" >&2
		die "npm install $pkg@$v failed (log: $dir/npm-install.log)"
	fi
	exe=$(find_exe "$dir") || die "claude $v: no executable found under $dir/node_modules"
	chmod +x "$dir/$exe"
	# Check the program runs before calling the install complete.
	home=$(mktemp -d)
	limit=()
	if command -v timeout >/dev/null 2>&1; then
		limit=(timeout 60)
	fi
	got=$(cd "$home" && HOME=$home DISABLE_AUTOUPDATER=1 "${limit[@]}" "$dir/$exe" --version 2>&1) || {
		rm -rf "$home"
		die "claude $v: '$dir/$exe --version' failed: $got"
	}
	rm -rf "$home"
	case $got in
	*"$v"*) ;;
	*) die "claude $v: '$dir/$exe --version' printed '$got', want $v" ;;
	esac
	echo "$exe" >"$marker"
	echo "claude $v: ok ($got, $dir/$exe)"
done
