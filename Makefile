# Cairn — durable deployment orchestrator.
SHELL := /usr/bin/env bash
GO ?= go
BIN := $(CURDIR)/bin
TEMPORAL := $(BIN)/temporal
TEMPORAL_VERSION := v1.5.1
DATA := $(CURDIR)/.data
TEST_TIMEOUT ?= 25m

.PHONY: all build test test-short bench lint run fmt clean

all: build

# The Temporal CLI (dev server + UI) is built from the Go module proxy and
# reused once present.
$(TEMPORAL):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_VERSION)

build: $(TEMPORAL)
	$(GO) build -o $(BIN)/cairn ./cmd/cairn

# Unit tests, workflow tests and end-to-end tests against a real Temporal dev
# server and a throwaway PostgreSQL (started and stopped by the script).
test: $(TEMPORAL)
	CAIRN_TEMPORAL_BIN=$(TEMPORAL) ./scripts/with-postgres.sh \
		$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

test-short:
	$(GO) test -short -count=1 ./...

# Benchmarks with their figures: the document pipeline, the DAG, the
# providers and the store (SQLite and PostgreSQL), the API's read path, a
# 1,000-step graph execution, then the end-to-end apply of 100 to 100,000
# files (create, noop re-apply, dry-run) against a bare activity loop.
bench: $(TEMPORAL)
	CAIRN_TEMPORAL_BIN=$(TEMPORAL) ./scripts/with-postgres.sh $(GO) test -run '^$$' -bench . -benchmem -benchtime 1x \
		./dag ./expr ./kinds ./graphs ./providers ./store
	CAIRN_TEMPORAL_BIN=$(TEMPORAL) $(GO) test -run '^$$' -bench 'Graph1000Steps' -benchtime 1x ./internal/graphe2e
	$(GO) test -run '^$$' -bench 'GetStack' -benchtime 20000x ./api
	CAIRN_TEMPORAL_BIN=$(TEMPORAL) $(GO) run ./cmd/cairn-bench

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

run: build
	@mkdir -p $(DATA)
	./scripts/run.sh

clean:
	rm -rf $(BIN)/cairn
