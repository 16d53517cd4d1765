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

clean:
	rm -rf bin .cache bench/out
