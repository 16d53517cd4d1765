# cfix: build, install, test, benchmark.
GO      ?= go
PREFIX  ?= $(HOME)/.local
BINDIR  ?= $(PREFIX)/bin
GOBIN   := $(shell $(GO) env GOPATH)/bin

.PHONY: all build install test unit bench fuzz vet clean

all: build

build:
	$(GO) build -o bin/cfix ./cmd/cfix

## install: build cfix and install it into $(GOBIN) (go install).
install:
	$(GO) install ./cmd/cfix
	@echo "cfix installed to $(GOBIN)/cfix"

## test: every test: vet, unit and CLI script tests, a short fuzz run, end-to-end tests.
test: vet
	$(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

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
	rm -rf bin .cache bench/out
