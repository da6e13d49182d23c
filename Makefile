# Cairn — durable deployment orchestrator.
SHELL := /usr/bin/env bash
GO ?= go
BIN := $(CURDIR)/bin
TEMPORAL := $(BIN)/temporal
TEMPORAL_VERSION := v1.5.1
# Temporal's server (and its SQL tool) at the dev server's version, for the
# production topology; scripts/temporal-cluster.sh names the version.
TEMPORAL_SERVER := $(BIN)/temporal-server
DATA := $(CURDIR)/.data
TEST_TIMEOUT ?= 25m

.PHONY: all build test test-short fuzz bench lint run fmt clean packages cluster temporal-server

all: build

# The Temporal CLI (dev server + UI) is built from the Go module proxy and
# reused once present.
$(TEMPORAL):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_VERSION)

# nfpm, the packager of the .deb and .rpm, built from the Go module proxy
# like the Temporal CLI and reused once present.
NFPM := $(BIN)/nfpm
NFPM_VERSION := v2.45.2
$(NFPM):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION)

# The .deb and .rpm of cairn in DIST (deploy/packaging/nfpm.yaml): a static
# binary for GOARCH (built as bin/cairn-package, where the config finds it), the systemd units of deploy/systemd and the default
# settings. PKG_VERSION defaults to the last v* tag without its "v" (0.0.0
# without a tag), and "+git<commits>.<hash>" after it for a later commit, so
# that it sorts after the release in dpkg and rpm.
DIST ?= $(CURDIR)/dist
GOARCH_PKG ?= $(shell $(GO) env GOARCH)
PKG_VERSION ?= $(shell (git describe --tags --match 'v[0-9]*' 2>/dev/null || echo v0.0.0) | sed -E 's/^v//; s/-([0-9]+)-g([0-9a-f]+)$$/+git\1.\2/')
# PKG_BINARY packages a cairn already built instead (the packages' test
# passes the one its package built, saving a build with other flags).
PKG_BINARY ?=
packages: $(NFPM)
	@mkdir -p $(DIST)
	if [ -n "$(PKG_BINARY)" ]; then [ "$(PKG_BINARY)" -ef $(BIN)/cairn-package ] || cp "$(PKG_BINARY)" $(BIN)/cairn-package; \
	else CGO_ENABLED=0 GOARCH=$(GOARCH_PKG) $(GO) build -trimpath -ldflags '-s -w' -o $(BIN)/cairn-package ./cmd/cairn; fi
	for p in deb rpm; do \
		CAIRN_PKG_ARCH=$(GOARCH_PKG) CAIRN_PKG_VERSION=$(PKG_VERSION) \
			$(NFPM) package --config deploy/packaging/nfpm.yaml --packager $$p --target $(DIST)/ || exit 1; \
	done

$(TEMPORAL_SERVER):
	BIN=$(BIN) GO=$(GO) ./scripts/temporal-cluster.sh build

temporal-server: $(TEMPORAL_SERVER)

build: $(TEMPORAL)
	$(GO) build -o $(BIN)/cairn ./cmd/cairn

# Temporal's production topology on this machine (docs/operating.md):
# frontend, two history hosts, matching and worker as processes on
# loopback, on a throwaway PostgreSQL unless TEMPORAL_CLUSTER_DB_URL names
# one; the frontend on 127.0.0.1:7233 (TEMPORAL_CLUSTER_PORT); Ctrl-C stops it.
cluster: $(TEMPORAL) $(TEMPORAL_SERVER)
	@export BIN=$(BIN) TEMPORAL_CLI=$(TEMPORAL); \
	if [ -n "$${TEMPORAL_CLUSTER_DB_URL:-}" ]; then ./scripts/temporal-cluster.sh up; \
	else ./scripts/with-postgres.sh ./scripts/temporal-cluster.sh up; fi

# Unit tests, workflow tests and end-to-end tests against a real Temporal dev
# server, Temporal's production topology (internal/clustere2e) and a
# throwaway PostgreSQL (started and stopped by the script).
test: $(TEMPORAL) $(TEMPORAL_SERVER)
	CAIRN_TEMPORAL_BIN=$(TEMPORAL) CAIRN_TEMPORAL_SERVER_BIN=$(TEMPORAL_SERVER) ./scripts/with-postgres.sh \
		$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) fuzz

# Every fuzz target of the repository (func FuzzX in a _test.go file) runs
# for FUZZTIME, one target per invocation as go test requires: the document
# parsers (graphs, kinds), the API's request decoders and the expression
# language among them. A crash fails the run and leaves its input under the
# package's testdata/fuzz/, to be committed with the fix as a seed.
# scripts/fuzz-one.sh runs one target and tries again, once, a run that
# only hit Go 1.26's end-of-fuzztime race (no failing input).
FUZZTIME ?= 5s
fuzz:
	@set -e; \
	grep -rlE --include='*_test.go' --exclude-dir=.git --exclude-dir=.data '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | sort | while read -r file; do \
		pkg=./$$(dirname "$${file#./}"); \
		for name in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(f \*testing\.F\).*/\1/p' "$$file"); do \
			echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
			GO=$(GO) ./scripts/fuzz-one.sh "$$pkg" "$$name" $(FUZZTIME); \
		done; \
	done

test-short:
	$(GO) test -short -count=1 ./...

# Benchmarks with their figures: the document pipeline, the DAG, the
# providers and the store (SQLite and PostgreSQL) and the API's read path,
# then the end-to-end measurement of the user's path (cmd/cairn-bench, see
# docs/performance.md): bin/cairn server with its defaults on its own
# Temporal dev server, driven through the HTTP API, for flat, grouped and
# chained files, a pkger-like package, a Fuel graph on 20 nodes and an
# exec chain, at 1,000 and 10,000 resources, next to `puppet apply` when
# puppet is installed. The Markdown table goes to .data/bench.md.
# BENCH_FLAGS passes flags to cairn-bench (BENCH_FLAGS=-large adds 100,000).
BENCH_FLAGS ?=
# The end-to-end run goes first: the package benchmarks create and remove
# tens of thousands of files, and ext4 makes new files slower for minutes
# after that (see cmd/cairn-bench).
bench: build
	@mkdir -p $(DATA)
	$(GO) run ./cmd/cairn-bench -cairn $(BIN)/cairn -temporal $(TEMPORAL) -markdown $(DATA)/bench.md \
		-revision "$$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$$(git diff --quiet HEAD -- . 2>/dev/null || echo ' with uncommitted changes')" \
		$(BENCH_FLAGS)
	CAIRN_TEMPORAL_BIN=$(TEMPORAL) ./scripts/with-postgres.sh $(GO) test -run '^$$' -bench . -benchmem -benchtime 1x \
		./dag ./expr ./kinds ./graphs ./providers ./store ./internal/devserver
	$(GO) test -run '^$$' -bench 'GetStack' -benchtime 20000x ./api

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

run: build
	@mkdir -p $(DATA)
	./scripts/run.sh

clean:
	rm -rf $(BIN)/cairn $(CURDIR)/dist
