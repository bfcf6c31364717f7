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
MANDIR      ?= $(PREFIX)/share/man
# reachd-dispatcher.service is installed, never enabled: hooks are opt-in.
UNITS        = reachd.service reachd.socket reachd-wait-online.service reachd-dispatcher.service reachd-nm.service
# journald reads catalogs from /usr/lib/systemd/catalog only: below /usr/local the file is
# installed but `journalctl -x` will not explain reachd's MESSAGE_IDs.
CATALOGDIR  ?= $(PREFIX)/lib/systemd/catalog
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
# polkitd reads rules from /usr/share/polkit-1/rules.d and /etc/polkit-1/rules.d only.
POLKITRULESDIR ?= $(PREFIX)/share/polkit-1/rules.d
# dbus-daemon reads system bus policies from /usr/share/dbus-1/system.d and /etc/dbus-1/system.d only.
DBUSPOLICYDIR ?= /usr/share/dbus-1/system.d
# dhcpcd reads hooks from its own directory only (Debian's /usr/lib/dhcpcd/dhcpcd-hooks); the
# hook is installed there when staging (DESTDIR) or when that directory exists.
DHCPCDHOOKDIR ?= /usr/lib/dhcpcd/dhcpcd-hooks
# `make install` and `make deb` take release binaries with the Swift runtime and
# FoundationEssentials linked in statically (in .build-static): they run on any host with
# glibc 2.36 or later, libstdc++, libnl and libsystemd, without the Swift toolchain.
# CONFIG=debug installs a debug build instead (dynamically linked: for this machine only);
# INSTALL_BIN takes binaries already built (a directory holding reachd and reachctl).
# No RUNPATH either ($ORIGIN is SwiftPM's default): nothing is loaded from beside the binary.
# Linked by GNU ld rather than gold, with DT_RELR (`-z pack-relative-relocs`, glibc 2.36):
# the relocations the loader reads and applies at each start shrink a hundredfold, and
# less of the binary stays resident (docs/performance.md, "Building and packaging").
# Full RELRO (`-z relro -z now`, with packaging/static-relro.ld: without it ld silently
# drops the RELRO segment of a static Swift link) and no exported symbols
# (packaging/static-exports.map): each file says why.
STATIC_BUILD = $(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath \
  -Xswiftc -use-ld=bfd -Xlinker -z -Xlinker pack-relative-relocs --scratch-path .build-static \
  -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now -Xlinker -T -Xlinker $(CURDIR)/packaging/static-relro.ld \
  -Xlinker --version-script=$(CURDIR)/packaging/static-exports.map
INSTALL_BIN ?=
SWIFT_BUILD_FLAGS ?=
# swift-argument-parser's manual generator (what its generate-manual plugin runs), built
# once from the resolved checkout; it turns each command's own help into a man page.
MANUAL_TOOL  = .build-tools/debug/generate-manual
MAN_DATE    ?= $(shell date -u -d @$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || date +%s)} +%Y-%m-%d)

.PHONY: all build run test docs clean install uninstall static man deb gio gio-test gio-fuzz

all: build

build:
	@scripts/bootstrap
	$(SWIFT) build -c $(CONFIG)

## Run the daemon in the foreground on built-in defaults; it logs every change.
run: build
	$(BINDIR)/reachd

## Every test: unit tables and real-kernel integration tests (root: network namespaces) in
## parallel lanes, the client's documentation (a broken link or symbol fails), and beside
## them the real-systemd suite (the .deb in bookworm and trixie containers; Tests/system).
test:
	@scripts/bootstrap --test
	$(MAKE) --no-print-directory gio
	SWIFT="$(SWIFT)" scripts/test

## The GIO network monitor module (docs/gio-module.md): .build-gio/libgioreachd.so, for
## GIO_EXTRA_MODULES or GIO's module directory. C, because it runs inside other programs.
## Hardened as Debian builds shared libraries (the reachd-gio package ships it); only
## g_io_module_* is exported; GLib's API is held to 2.74 (bookworm's), the oldest supported.
## Warnings fail the project's own builds, not a packager's (scripts/deb: GIO_WERROR=).
GIO_SOURCES = gio/reachd-network-monitor.c gio/reachd-can-reach.c gio/reachd-socket.c gio/reachd-watch.c \
  gio/reachd-link.c gio/reachd-framing.c gio/reachd-reply.c
GIO_PURE    = gio/reachd-link.c gio/reachd-framing.c gio/reachd-reply.c
GIO_HEADERS = $(wildcard gio/*.h)
GIO_WERROR ?= -Werror
GIO_CFLAGS  = -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra $(GIO_WERROR) -O2 -fPIC -fvisibility=hidden \
  -DG_LOG_DOMAIN='"reachd-gio"' -DGLIB_VERSION_MIN_REQUIRED=GLIB_VERSION_2_74 -DGLIB_VERSION_MAX_ALLOWED=GLIB_VERSION_2_74 \
  -D_FORTIFY_SOURCE=2 -fstack-protector-strong
GIO_LIBS    = $$(pkg-config --cflags --libs gio-2.0 gio-unix-2.0 json-glib-1.0)
gio: .build-gio/libgioreachd.so .build-gio/test-gio
.build-gio/libgioreachd.so: $(GIO_SOURCES) $(GIO_HEADERS)
	@mkdir -p .build-gio
	$(CC) $(GIO_CFLAGS) -shared -o $@.tmp $(GIO_SOURCES) -Wl,-z,relro,-z,now $(GIO_LIBS)
	@exported=$$(nm -D --defined-only $@.tmp | awk '$$2 ~ /^[TDB]$$/ { print $$3 }' | sort | tr '\n' ' '); \
	  [ "$$exported" = "g_io_module_load g_io_module_query g_io_module_unload " ] \
	  || { echo "gio: the module exports $$exported; only g_io_module_* may be" >&2; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

## The module's pure parts under GLib's test framework (gio/test-gio.c; TAP with --tap):
## the framing, the GLib pairs, the link's state machine. `make gio-test` runs it.
.build-gio/test-gio: gio/test-gio.c $(GIO_PURE) $(GIO_HEADERS)
	@mkdir -p .build-gio
	$(CC) $(GIO_CFLAGS) -o $@ gio/test-gio.c $(GIO_PURE) $(GIO_LIBS)
gio-test: .build-gio/test-gio
	.build-gio/test-gio

## The module's reply decoder under libFuzzer for SECONDS (default 60): scripts/fuzz gio.
SECONDS ?= 60
gio-fuzz:
	scripts/fuzz gio $(SECONDS)

## ReachClient's DocC catalogue (articles and API) as a .doccarchive in .build/plugins/Swift-DocC/outputs;
## a warning (an unresolved symbol or article link) fails it.
docs:
	$(SWIFT) package --disable-sandbox generate-documentation --target ReachClient --warnings-as-errors

clean:
	rm -rf .build .build-static .build-tools .build-man .build-deb .build-gio

## Release binaries with the Swift runtime linked in (.build-static/release).
static:
	@scripts/bootstrap
	$(STATIC_BUILD) --product reachd $(SWIFT_BUILD_FLAGS)
	$(STATIC_BUILD) --product reachctl $(SWIFT_BUILD_FLAGS)

## Man pages in .build-man: reachd(8) and reachctl(1) from the binaries' own help (of
## MAN_BIN, default the static build), reachd.toml(5) from man/.
MAN_BIN ?= .build-static/release
man:
	@set -e; \
	if [ ! -x $(MANUAL_TOOL) ]; then \
	  [ -d .build/checkouts/swift-argument-parser ] || $(SWIFT) package resolve >/dev/null; \
	  $(SWIFT) build --package-path .build/checkouts/swift-argument-parser --scratch-path .build-tools --product generate-manual; \
	fi; \
	[ -x "$(MAN_BIN)/reachd" ] || $(MAKE) --no-print-directory static; \
	rm -rf .build-man; mkdir -p .build-man; \
	$(MANUAL_TOOL) "$(MAN_BIN)/reachd" --section 8 --date $(MAN_DATE) --output-directory .build-man; \
	$(MANUAL_TOOL) "$(MAN_BIN)/reachctl" --section 1 --date $(MAN_DATE) --output-directory .build-man; \
	ln -sf "$$(realpath "$(MAN_BIN)/reachd")" .build-man/reachd-nm; \
	$(MANUAL_TOOL) .build-man/reachd-nm --section 8 --date $(MAN_DATE) --output-directory .build-man; \
	rm -f .build-man/reachd-nm; \
	cp man/reachd.toml.5 .build-man/

## Debian packages: .build-deb/reachd_<version>_<arch>.deb (the static build) and
## .build-deb/reachd-gio_<version>_<arch>.deb (the GIO module, `make gio`).
deb:
	@scripts/deb

## Install reachd, reachctl, the systemd units, the dhcpcd hook, the default configuration (never
## overwriting one already there), the man pages and reachctl's shell completions.
install:
	@set -e; \
	bin="$(INSTALL_BIN)"; \
	if [ -z "$$bin" ] && [ "$(origin CONFIG)" = file ]; then \
	  $(MAKE) --no-print-directory static; \
	  bin=.build-static/release; \
	elif [ -z "$$bin" ]; then \
	  scripts/bootstrap; \
	  $(SWIFT) build -c $(CONFIG) $(SWIFT_BUILD_FLAGS); \
	  bin=$$($(SWIFT) build -c $(CONFIG) $(SWIFT_BUILD_FLAGS) --show-bin-path); \
	fi; \
	for tool in reachd reachctl; do \
	  [ -x "$$bin/$$tool" ] || { echo "install: $$bin/$$tool is missing; build it first" >&2; exit 1; }; \
	done; \
	echo "install: binaries from $$bin"; \
	$(MAKE) --no-print-directory man MAN_BIN="$$bin"; \
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(UNITDIR)" "$(DESTDIR)$(CONFDIR)" \
	  "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(MANDIR)/man5" "$(DESTDIR)$(MANDIR)/man8" \
	  "$(DESTDIR)$(COMPLETIONDIR_BASH)" "$(DESTDIR)$(COMPLETIONDIR_ZSH)" "$(DESTDIR)$(COMPLETIONDIR_FISH)" \
	  "$(DESTDIR)$(CATALOGDIR)" "$(DESTDIR)$(SYSUSERSDIR)" "$(DESTDIR)$(POLKITRULESDIR)" "$(DESTDIR)$(DBUSPOLICYDIR)"; \
	install -d -m 0755 "$(DESTDIR)$(CONFDIR)/dispatcher.d"; \
	install -m 0644 systemd/reachd.catalog "$(DESTDIR)$(CATALOGDIR)/reachd.catalog"; \
	install -m 0644 systemd/reachd.sysusers "$(DESTDIR)$(SYSUSERSDIR)/reachd.conf"; \
	install -m 0644 systemd/reachd.polkit.rules "$(DESTDIR)$(POLKITRULESDIR)/50-reachd.rules"; \
	install -m 0644 systemd/reachd-nm.sysusers "$(DESTDIR)$(SYSUSERSDIR)/reachd-nm.conf"; \
	install -m 0644 systemd/reachd-nm.dbus.conf "$(DESTDIR)$(DBUSPOLICYDIR)/reachd-nm.conf"; \
	install -D -m 0644 systemd/reachd-nm.networkmanager.conf "$(DESTDIR)$(UNITDIR)/NetworkManager.service.d/reachd-nm.conf"; \
	if [ -n "$(DESTDIR)" ] || [ -d "$(DHCPCDHOOKDIR)" ]; then \
	  install -D -m 0644 packaging/dhcpcd-hook "$(DESTDIR)$(DHCPCDHOOKDIR)/90-reachd"; \
	fi; \
	install -m 0755 "$$bin/reachd" "$$bin/reachctl" "$(DESTDIR)$(PREFIX)/bin/"; \
	ln -sf reachd "$(DESTDIR)$(PREFIX)/bin/reachd-nm"; \
	install -m 0644 .build-man/reachctl.1 "$(DESTDIR)$(MANDIR)/man1/"; \
	install -m 0644 .build-man/reachd.toml.5 "$(DESTDIR)$(MANDIR)/man5/"; \
	install -m 0644 .build-man/reachd.8 .build-man/reachd-nm.8 "$(DESTDIR)$(MANDIR)/man8/"; \
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
	if [ -z "$(DESTDIR)" ]; then \
	  systemd-sysusers "$(SYSUSERSDIR)/reachd.conf" || echo "install: create reachd.service's user with: systemd-sysusers $(SYSUSERSDIR)/reachd.conf" >&2; \
	fi; \
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi; \
	if [ -z "$(DESTDIR)" ]; then journalctl --update-catalog 2>/dev/null || true; fi; \
	echo "install: done; enable with: systemctl enable --now reachd.service"

## Remove what `make install` put in place; a configuration that was changed stays.
uninstall:
	@set -e; \
	rm -f "$(DESTDIR)$(PREFIX)/bin/reachd" "$(DESTDIR)$(PREFIX)/bin/reachctl" "$(DESTDIR)$(PREFIX)/bin/reachd-nm"; \
	rm -f "$(DESTDIR)$(MANDIR)/man1/reachctl.1" "$(DESTDIR)$(MANDIR)/man5/reachd.toml.5" "$(DESTDIR)$(MANDIR)/man8/reachd.8" \
	  "$(DESTDIR)$(MANDIR)/man8/reachd-nm.8"; \
	for unit in $(UNITS); do rm -f "$(DESTDIR)$(UNITDIR)/$$unit"; done; \
	rm -f "$(DESTDIR)$(CATALOGDIR)/reachd.catalog" "$(DESTDIR)$(SYSUSERSDIR)/reachd.conf" \
	  "$(DESTDIR)$(POLKITRULESDIR)/50-reachd.rules" "$(DESTDIR)$(SYSUSERSDIR)/reachd-nm.conf" \
	  "$(DESTDIR)$(DBUSPOLICYDIR)/reachd-nm.conf" "$(DESTDIR)$(UNITDIR)/NetworkManager.service.d/reachd-nm.conf"; \
	rmdir "$(DESTDIR)$(UNITDIR)/NetworkManager.service.d" 2>/dev/null || true; \
	rm -f "$(DESTDIR)$(DHCPCDHOOKDIR)/90-reachd"; \
	rm -f "$(DESTDIR)$(COMPLETIONDIR_BASH)/reachctl" "$(DESTDIR)$(COMPLETIONDIR_ZSH)/_reachctl" \
	  "$(DESTDIR)$(COMPLETIONDIR_FISH)/reachctl.fish"; \
	if [ -f "$(DESTDIR)$(CONFDIR)/reachd.toml" ]; then \
	  if cmp -s config/reachd.toml "$(DESTDIR)$(CONFDIR)/reachd.toml"; then \
	    rm -f "$(DESTDIR)$(CONFDIR)/reachd.toml"; \
	  else \
	    echo "uninstall: keeping the modified $(DESTDIR)$(CONFDIR)/reachd.toml"; \
	  fi; \
	fi; \
	rmdir "$(DESTDIR)$(CONFDIR)/dispatcher.d" "$(DESTDIR)$(CONFDIR)" 2>/dev/null || true; \
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
