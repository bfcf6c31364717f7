# reachd — build, run, test, install.
SWIFT       ?= swift
CONFIG      ?= debug
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR       = $(shell $(SWIFT) build -c $(CONFIG) --show-bin-path 2>/dev/null)

.PHONY: all build run test clean

all: build

build:
	@scripts/bootstrap
	$(SWIFT) build -c $(CONFIG)

## Run the daemon in the foreground on built-in defaults; it logs every change.
run: build
	$(BINDIR)/reachd

## Every test: unit tables and real-kernel integration tests (root: network namespaces).
test:
	@scripts/bootstrap --test
	$(SWIFT) build --build-tests
	$(SWIFT) test

clean:
	rm -rf .build
