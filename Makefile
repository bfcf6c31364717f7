# reachd — build, run, test, install.
SWIFT       ?= swift
CONFIG      ?= debug
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR       = $(shell $(SWIFT) build -c $(CONFIG) --show-bin-path 2>/dev/null)

# Install layout. Units go below PREFIX (systemd searches /usr/local/lib/systemd/system
# too); packagers installing to /usr set UNITDIR=/usr/lib/systemd/system or take it from
# `pkg-config --variable=systemdsystemunitdir systemd`. The configuration is always
# /etc/reachd/reachd.toml, the path reachd reads (below DESTDIR when staging).
UNITDIR     ?= $(PREFIX)/lib/systemd/system
CONFDIR     ?= /etc/reachd
COMPLETIONDIR_BASH ?= $(PREFIX)/share/bash-completion/completions
COMPLETIONDIR_ZSH  ?= $(PREFIX)/share/zsh/site-functions
COMPLETIONDIR_FISH ?= $(PREFIX)/share/fish/vendor_completions.d
UNITS        = reachd.service reachd.socket reachd-wait-online.service
# `make install` builds release binaries unless CONFIG is given (`make install CONFIG=debug`),
# or takes already-built ones from INSTALL_BIN (a directory holding reachd and reachctl).
INSTALL_CONFIG = $(if $(filter file,$(origin CONFIG)),release,$(CONFIG))
INSTALL_BIN ?=
SWIFT_BUILD_FLAGS ?=

.PHONY: all build run test clean install uninstall

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

## Install reachd, reachctl, the systemd units, the default configuration (never
## overwriting one already there) and reachctl's shell completions.
install:
	@set -e; \
	bin="$(INSTALL_BIN)"; \
	if [ -z "$$bin" ]; then \
	  scripts/bootstrap; \
	  $(SWIFT) build -c $(INSTALL_CONFIG) $(SWIFT_BUILD_FLAGS); \
	  bin=$$($(SWIFT) build -c $(INSTALL_CONFIG) $(SWIFT_BUILD_FLAGS) --show-bin-path); \
	fi; \
	for tool in reachd reachctl; do \
	  [ -x "$$bin/$$tool" ] || { echo "install: $$bin/$$tool is missing; build it first" >&2; exit 1; }; \
	done; \
	echo "install: binaries from $$bin"; \
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(UNITDIR)" "$(DESTDIR)$(CONFDIR)" \
	  "$(DESTDIR)$(COMPLETIONDIR_BASH)" "$(DESTDIR)$(COMPLETIONDIR_ZSH)" "$(DESTDIR)$(COMPLETIONDIR_FISH)"; \
	install -m 0755 "$$bin/reachd" "$$bin/reachctl" "$(DESTDIR)$(PREFIX)/bin/"; \
	for unit in $(UNITS); do \
	  sed 's|/usr/local/bin/|$(PREFIX)/bin/|g' "systemd/$$unit" > "$(DESTDIR)$(UNITDIR)/$$unit.tmp"; \
	  chmod 0644 "$(DESTDIR)$(UNITDIR)/$$unit.tmp"; \
	  mv -f "$(DESTDIR)$(UNITDIR)/$$unit.tmp" "$(DESTDIR)$(UNITDIR)/$$unit"; \
	done; \
	if [ -e "$(DESTDIR)$(CONFDIR)/reachd.toml" ]; then \
	  echo "install: keeping the existing $(DESTDIR)$(CONFDIR)/reachd.toml"; \
	else \
	  install -m 0644 config/reachd.toml "$(DESTDIR)$(CONFDIR)/reachd.toml"; \
	fi; \
	"$$bin/reachctl" --generate-completion-script bash > "$(DESTDIR)$(COMPLETIONDIR_BASH)/reachctl"; \
	"$$bin/reachctl" --generate-completion-script zsh > "$(DESTDIR)$(COMPLETIONDIR_ZSH)/_reachctl"; \
	"$$bin/reachctl" --generate-completion-script fish > "$(DESTDIR)$(COMPLETIONDIR_FISH)/reachctl.fish"; \
	chmod 0644 "$(DESTDIR)$(COMPLETIONDIR_BASH)/reachctl" "$(DESTDIR)$(COMPLETIONDIR_ZSH)/_reachctl" \
	  "$(DESTDIR)$(COMPLETIONDIR_FISH)/reachctl.fish"; \
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi; \
	echo "install: done; enable with: systemctl enable --now reachd.service"

## Remove what `make install` put in place; a configuration that was changed stays.
uninstall:
	@set -e; \
	rm -f "$(DESTDIR)$(PREFIX)/bin/reachd" "$(DESTDIR)$(PREFIX)/bin/reachctl"; \
	for unit in $(UNITS); do rm -f "$(DESTDIR)$(UNITDIR)/$$unit"; done; \
	rm -f "$(DESTDIR)$(COMPLETIONDIR_BASH)/reachctl" "$(DESTDIR)$(COMPLETIONDIR_ZSH)/_reachctl" \
	  "$(DESTDIR)$(COMPLETIONDIR_FISH)/reachctl.fish"; \
	if [ -f "$(DESTDIR)$(CONFDIR)/reachd.toml" ]; then \
	  if cmp -s config/reachd.toml "$(DESTDIR)$(CONFDIR)/reachd.toml"; then \
	    rm -f "$(DESTDIR)$(CONFDIR)/reachd.toml"; \
	  else \
	    echo "uninstall: keeping the modified $(DESTDIR)$(CONFDIR)/reachd.toml"; \
	  fi; \
	fi; \
	rmdir "$(DESTDIR)$(CONFDIR)" 2>/dev/null || true; \
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
