#!/usr/bin/env bash
# release-extras.sh: write the shell completions and man pages a release
# archive holds into .release/ (goreleaser's before hook; .goreleaser.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .release
mkdir -p .release/completions .release/man
go build -o .release/cfix ./cmd/cfix
for sh in bash zsh fish; do
	.release/cfix completion "$sh" >".release/completions/cfix.$sh"
done
.release/cfix man .release/man
rm .release/cfix
