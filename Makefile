# UVNetworking. `make demo` and `make test` install what is missing (idempotently), then build.
SHELL := /bin/bash
SWIFT ?= swift
# Where llhttp is built when the system has no libllhttp (never inside this repository).
LLHTTP_PREFIX ?= $(if $(filter 0,$(shell id -u)),/usr/local,$(HOME)/.local/uvnetworking)
export LLHTTP_PREFIX
export PKG_CONFIG_PATH := $(LLHTTP_PREFIX)/lib/pkgconfig:$(PKG_CONFIG_PATH)
# `make fuzz`: seconds per harness; `make test`: seconds for all the harnesses' smoke together.
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 30
# The replies of curl's own test suite (docs/conformance.md). Not part of this repository: when
# the folder is there, `make test` runs them too; without it their suite skips itself, saying so.
CURL_REPLIES ?= $(abspath ../shared/conformance/curl-replies)
export UVN_CURL_REPLIES := $(CURL_REPLIES)
HAVE_CURL_REPLIES := $(wildcard $(CURL_REPLIES)/index.json)
# The web-platform-tests' HTTP cache scenarios and their replay origin (docs/conformance.md), the
# same way: run by `make test` when the folder is there, skipped otherwise.
HTTP_CACHE_SCENARIOS ?= $(abspath ../shared/conformance/http-cache)
export UVN_HTTP_CACHE_SCENARIOS := $(HTTP_CACHE_SCENARIOS)
HAVE_HTTP_CACHE_SCENARIOS := $(wildcard $(HTTP_CACHE_SCENARIOS)/serve.py)

.PHONY: all deps build release check test conformance fuzz fuzz-smoke demo bench gates gate-jsonl clean snippets snippets-check docs

all: build

deps:
	@bash scripts/install-deps.sh

# The library's package, then the programs' (Apps/: uvfetch, the example service), which
# depends on it by path.
build: deps
	$(SWIFT) build
	$(SWIFT) build --package-path Apps

release: deps
	$(SWIFT) build --package-path Apps -c release --product uvfetch

# The loop to run after each change: the documents' code blocks up to date, a build of both
# packages, then their unit and loopback tiers, side by side (scripts/run-tests.sh --check).
check: deps snippets-check
	$(SWIFT) build --build-tests
	$(SWIFT) build --package-path Apps --build-tests
	bash scripts/run-tests.sh --check

# Every test: the documents' code blocks up to date in Examples/DocSnippets (which the build
# compiles); every tier of both packages' suites (scripts/run-tests.sh: the state machines, the
# end-to-end suites against nginx, httpbin and the scripted servers, which the tests start on
# loopback, namespaces, PostgreSQL, child processes, the huge transfers), each tier a process,
# several at once; curl's replies when CURL_REPLIES is there; the DocC catalog without a warning;
# a short smoke of every fuzz harness (Fuzz/run.sh --smoke); the per-request and per-record gates
# (Benchmarks/gates.sh: allocations and instructions, a regression fails). scripts/make-test.sh
# runs the builds beside the tests, so the two cores stay busy; it says what runs when, and why.
test: deps snippets-check
	@echo "curl replies: $(if $(HAVE_CURL_REPLIES),$(CURL_REPLIES),none at $(CURL_REPLIES): their suite is skipped)"
	@echo "http-cache scenarios: $(if $(HAVE_HTTP_CACHE_SCENARIOS),$(HTTP_CACHE_SCENARIOS),none at $(HTTP_CACHE_SCENARIOS): their suite is skipped)"
	FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) SWIFT=$(SWIFT) bash scripts/make-test.sh

# Writes every ```swift block of README.md, of the DocC articles and of docs/*.md into Examples/DocSnippets
# (one function per block), so that `swift build` compiles them. Run it after changing a block.
snippets:
	python3 scripts/extract-snippets.py

# Fails when Examples/DocSnippets is not what `make snippets` would write.
snippets-check:
	python3 scripts/extract-snippets.py --check

# The DocC archives of the library and of its codec, from their doc comments and catalogs
# (Sources/<module>/<module>.docc, into .build/plugins/Swift-DocC/outputs/); any DocC warning fails it.
docs: deps
	$(SWIFT) package generate-documentation --target UVNetworking --warnings-as-errors
	$(SWIFT) package generate-documentation --target UVHTTP1 --warnings-as-errors

# Only the conformance suites: every reply of curl's test suite against the outcome decided for
# it, and every HTTP cache scenario of the web-platform-tests that applies to a private cache.
conformance: deps
	@test -n "$(HAVE_CURL_REPLIES)" || { echo "make conformance: no curl-replies corpus at $(CURL_REPLIES) (set CURL_REPLIES=...)" >&2; exit 1; }
	@test -n "$(HAVE_HTTP_CACHE_SCENARIOS)" || { echo "make conformance: no http-cache scenarios at $(HTTP_CACHE_SCENARIOS) (set HTTP_CACHE_SCENARIOS=...)" >&2; exit 1; }
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter "CurlReplies|CacheScenarios"

fuzz-smoke: deps
	bash Fuzz/run.sh --smoke $(FUZZ_SMOKE_SECONDS)

fuzz: deps
	bash Fuzz/run.sh $(FUZZ_SECONDS)

# 100,000 GETs through the library from the server embedded in uvfetch (no nginx, no network).
demo: release
	"$$($(SWIFT) build --package-path Apps -c release --show-bin-path)/uvfetch" demo

bench: deps
	bash Benchmarks/run.sh

# The per-request gates: allocations and instructions per request (task API, run-on-loop mode,
# logging and metrics, a tracer) against thresholds; fails on a regression (Benchmarks/gates.sh).
gates: deps
	bash Benchmarks/gates.sh

# What a uvfetch --jsonl record costs (callgrind: instructions and allocations per record), against
# its thresholds: fails when a change makes records dearer. Needs valgrind.
gate-jsonl: deps
	bash Benchmarks/jsonl-gate.sh

clean:
	rm -rf .build Apps/.build Fuzz/.out Benchmarks/.build
