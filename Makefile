# UVNetworking. `make demo` and `make test` install what is missing (idempotently), then build.
SHELL := /bin/bash
SWIFT ?= swift
# Where llhttp is built when the system has no libllhttp (never inside this repository).
LLHTTP_PREFIX ?= $(if $(filter 0,$(shell id -u)),/usr/local,$(HOME)/.local/uvnetworking)
export LLHTTP_PREFIX
export PKG_CONFIG_PATH := $(LLHTTP_PREFIX)/lib/pkgconfig:$(PKG_CONFIG_PATH)
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 45

.PHONY: all deps build release test unit fuzz fuzz-smoke demo bench clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product uvfetch

# Every test: the state machines, the end-to-end suites against nginx, httpbin and the scripted
# server (the tests start them on loopback), then a short fuzz smoke of the response decoder.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --no-parallel
	$(MAKE) fuzz-smoke

fuzz-smoke: deps
	bash Fuzz/run.sh $(FUZZ_SMOKE_SECONDS)

fuzz: deps
	bash Fuzz/run.sh $(FUZZ_SECONDS)

# 100,000 GETs through the library from the server embedded in uvfetch (no nginx, no network).
demo: release
	"$$($(SWIFT) build -c release --show-bin-path)/uvfetch" demo

bench: deps
	bash Benchmarks/run.sh

clean:
	rm -rf .build Fuzz/.out Benchmarks/.build
