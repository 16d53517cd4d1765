# cfix: build, install, test, benchmark.
GO      ?= go
PREFIX  ?= $(HOME)/.local
BINDIR  ?= $(PREFIX)/bin
# Where make install puts cfix, as go install does: $GOBIN (the
# environment's, make's command line or go env -w's), else $GOPATH/bin.
GOBIN   ?= $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)

# goreleaser, at the version this Go serves (make release-check).
GORELEASER ?= $(GO) run github.com/goreleaser/goreleaser/v2@v2.15.1
# Every package but the end-to-end tests, which run in a go test of their
# own, beside them (make test), with a timeout that holds on a loaded 2-core
# machine.
UNIT_PKGS = $(shell $(GO) list ./... | grep -v '/e2e')
# How many end-to-end tests run at once: they wait on the clients, the
# fake API and terminals about as much as they compute.
E2E_PARALLEL ?= 4

.PHONY: all build install test quick test-deps unit e2e e2e-newest release-check man bench fuzz vet clean

all: build

build:
	$(GO) build -buildvcs=auto -o bin/cfix ./cmd/cfix

## install: build cfix and install it into $(GOBIN) (go install).
install:
	GOBIN="$(GOBIN)" $(GO) install -buildvcs=auto ./cmd/cfix
	@echo "cfix installed to $(GOBIN)/cfix"

## test: every test CI runs: the test programs and Claude Code clients (test-deps), vet,
## then at once (each waits as much as it computes, on 2 cores): the unit and CLI
## script tests, the end-to-end tests, the release config (release-check).
test:
	scripts/test-deps.sh
	$(MAKE) vet
	$(MAKE) -j3 --output-sync=line unit e2e release-check

## quick: what to run before a commit, within minutes: vet, the unit and CLI script tests,
## and the end-to-end tests with the newest pinned client only (no other client's
## grid, no wild-store oracle). make test, which CI runs, runs every client.
quick:
	scripts/test-deps.sh
	$(MAKE) vet
	$(MAKE) -j2 --output-sync=line unit e2e-newest

## test-deps: install (as root) or check the Debian packages the tests need, and install the pinned Claude Code clients.
test-deps:
	scripts/test-deps.sh

# The S3 tests fail rather than skip when versitygw is missing.
unit e2e: export CFIX_REQUIRE_S3 = 1

unit:
	$(GO) test -count=1 -timeout 20m $(UNIT_PKGS)

e2e:
	$(GO) test -count=1 -timeout 45m -parallel $(E2E_PARALLEL) ./e2e/...

## release-check: goreleaser check and a snapshot build of this platform, so .goreleaser.yaml cannot rot.
# The newest pinned client: the last version line of e2e/versions.txt.
NEWEST_CLIENT = $(shell grep -v '^\#' e2e/versions.txt | grep . | tail -1)

e2e-newest: export CFIX_REQUIRE_S3 = 1
e2e-newest: export CFIX_E2E_VERSIONS = $(NEWEST_CLIENT)
e2e-newest:
	$(GO) test -count=1 -timeout 45m -parallel $(E2E_PARALLEL) ./e2e/... -skip '^(TestOracle|TestOracleProbe)$$'

release-check:
	$(GORELEASER) check
	$(GORELEASER) build --snapshot --single-target --clean
	rm -rf dist .release

## man: write the man pages (one per command) into man/.
man:
	$(GO) run ./cmd/cfix man man

vet:
	$(GO) vet ./...
	@files=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$files" ]; then echo "gofmt would change these files (run gofmt -w):"; echo "$$files"; exit 1; fi

## fuzz: run the reader's fuzz target for a while.
fuzz:
	$(GO) test ./session -run '^$$' -fuzz FuzzReader -fuzztime 60s

## bench: time cfix validate against cat and jq on a generated 500 MB store (bench/run.sh).
bench:
	bench/run.sh

## claude-versions: install the Claude Code versions the end-to-end tests run (e2e/versions.txt) into .cache/claude/.
.PHONY: claude-versions
claude-versions:
	scripts/install-claude.sh

clean:
	rm -rf bin .cache bench/out dist .release man
