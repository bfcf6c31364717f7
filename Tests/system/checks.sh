# The checks of Tests/system/run, run in order inside one booted container. Sourced, not
# run. Each prints PASS/FAIL with what it saw; none stops the others.
# Over 500 lines because it is one list of checks, each with the few probes it needs beside
# it and none calling another; the Qt app's check, with its own helpers, is checks-qt.sh.

SOCKET=/run/reachd/io.reachd.Reachability
SHARE=/var/tmp/reachd-test
GATEWAY=10.77.0.1

# --- Small probes -----------------------------------------------------------------------

# The "Status:" word of a non-root `reachctl status` (satisfied, unsatisfied, …).
path_status() { as_nobody reachctl status --timeout 5 | awk '$1 == "Status:" { print $2 }'; }
status_is() { [ "$(path_status)" = "$1" ]; }
# The IGNORED column (yes/no) of eth0 in a non-root `reachctl interfaces`.
eth0_ignored() { as_nobody reachctl interfaces --timeout 5 | awk '$2 == "eth0" { print $7 }'; }
main_pid() { cx systemctl show -P MainPID reachd.service; }
service_state() { cx systemctl is-active reachd.service || true; }
service_is_active() { [ "$(service_state)" = active ]; }
# restarted_from PID: reachd runs again, under another MainPID.
restarted_from() { local p; p=$(main_pid); [ "$p" != 0 ] && [ "$p" != "$1" ] && service_is_active; }
status_text_lacks() { ! cx systemctl show -P StatusText reachd.service | grep -q "$1"; }
# replies_at_least N FILE: FILE holds at least N Varlink replies (one JSON per line).
replies_at_least() { [ "$(grep -c '"sequence"' "$2")" -ge "$1" ]; }
# Journal lines by field match (FIELD=VALUE…), message only. --sync first: journald has
# then read what the writers (stderr streams, syslog datagrams) queued before the call.
journal() { cx journalctl --sync || true; cx journalctl --no-pager -o short "$@"; }
# complaints FIELD=VALUE…: the matching lines that report a failure.
complaints() { journal "$@" | grep -Ei 'fail|error|errno|denied' || true; }
# expect_journal WHAT REGEX FIELD=VALUE…: PASS once a matching line is there (within 5 s).
journal_has() { local regex=$1; shift; journal "$@" | grep -Eq -- "$regex"; }
expect_journal() {
  local what=$1 regex=$2; shift 2
  if wait_until 5 journal_has "$regex" "$@"; then
    pass "$what" "$(journal "$@" | grep -E -- "$regex")"
  else
    fail "$what" "wanted /$regex/ in: $(journal "$@")"
  fi
}

# The container's network: eth0 (a veth) in the container's own namespace, its peer in
# a nested namespace "gw" holding the gateway address. Traffic never leaves namespaces
# this test made. eth0 is not "veth*", which reachd's default configuration ignores.
setup_network() {
  cx ip netns add gw &&
    cx ip link add eth0 type veth peer name gw0 netns gw &&
    cx ip -n gw addr add "$GATEWAY/24" dev gw0 &&
    cx ip -n gw link set gw0 up &&
    cx ip -n gw link set lo up &&
    cx ip addr add 10.77.0.2/24 dev eth0 &&
    cx ip link set eth0 up &&
    cx ip route add default via "$GATEWAY" dev eth0
}

# --- The checks ---------------------------------------------------------------------------

# apt-get install ./reachd_*.deb on the bare container: the Depends come along and the
# postinst leaves reachd.socket listening, reachd itself not started.
check_install() {
  local deb
  deb=$(basename "$DEB")
  capture cx bash -c "cd $SHARE && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./$deb"
  if [ "$RC" -eq 0 ]; then pass "apt-get install ./$deb" "$(grep -v 'Reading database' <<<"$OUT" | tail -4)"; else fail "apt-get install ./$deb" "exit $RC: $OUT"; fi
  # Its own system user (sysusers.d, created by the postinst): dbus-daemon can name it.
  expect_match "the postinst created reachd's system user" '^reachd:x:[0-9]+:[0-9]+:.*:/usr/sbin/nologin$' cx getent passwd reachd
  expect_match "reachd.socket is enabled after install" '^enabled$' cx systemctl is-enabled reachd.socket
  expect_match "reachd.socket is listening after install" '^active$' cx systemctl is-active reachd.socket
  expect_match "reachd.socket listens on $SOCKET" "$SOCKET" cx systemctl show -P Listen reachd.socket
  # Read from the host through the container's root: minbase has no binutils.
  capture readelf -d "/proc/$LEADER/root/usr/bin/reachd"
  echo "---- readelf -d /usr/bin/reachd (as installed in the $SUITE container) ----"
  echo "$OUT"
  echo "----"
  if [ "$RC" -eq 0 ] && ! grep 'NEEDED' <<<"$OUT" | grep -Eqi 'swift|foundation|dispatch|icu'; then
    pass "the installed reachd needs no shared Swift runtime (stdlib and Foundation static)" "$(grep NEEDED <<<"$OUT" | sed 's/.*Shared library: //' | tr '\n' ' ')"
  else
    fail "the installed reachd needs no shared Swift runtime (stdlib and Foundation static)" "exit $RC: $(grep NEEDED <<<"$OUT")"
  fi
  # The loader refuses a binary with packed relocations (DT_RELR) on glibc < 2.36: the
  # package must not install where reachd would not start.
  local depends
  depends=$(dpkg-deb -f "$DEB" Depends)
  if [[ $(readelf -V "/proc/$LEADER/root/usr/bin/reachd" 2>&1) != *GLIBC_ABI_DT_RELR* ]] || grep -q 'libc6 (>= 2\.\(3[6-9]\|[4-9][0-9]\))' <<<"$depends"; then
    pass "the package's libc6 floor admits only a glibc that loads reachd" "$depends"
  else
    fail "the package's libc6 floor admits only a glibc that loads reachd" "DT_RELR needs glibc 2.36; Depends: $depends"
  fi
  # FoundationEssentials only: Foundation proper brings ICU's data and doubles the binary.
  # A stripped binary still names the Swift modules its metadata refers to ("10Foundation"
  # in mangled names) and ICU's data ("icudt").
  local binary="/proc/$LEADER/root/usr/bin/reachd" size
  size=$(stat -c %s "$binary" 2>/dev/null || echo 0)
  if [ -f "$binary" ] && ! grep -aqE '10Foundation|icudt' "$binary"; then
    pass "the installed reachd links neither Foundation nor ICU" "$((size / 1000000)) MB"
  else
    fail "the installed reachd links neither Foundation nor ICU" "$((size / 1000000)) MB: $(grep -aoE '10Foundation|icudt[0-9a-z]*' "$binary" | sort | uniq -c | head -3)"
  fi
  check_hardening "$binary"
}

# The installed binary is hardened as Debian builds daemons: full RELRO (a GNU_RELRO
# segment and BIND_NOW: the GOT too is read-only once loaded), still with DT_RELR's packed
# relocations; reachctl is a link to it (one multi-call binary).
check_hardening() {
  local binary=$1 program dynamic
  program=$(readelf -lW "$binary" 2>&1)
  dynamic=$(readelf -dW "$binary" 2>&1)
  if grep -q 'GNU_RELRO' <<<"$program" && grep -Eq '\(FLAGS\).*BIND_NOW' <<<"$dynamic" \
    && grep -Eq '\(FLAGS_1\).*NOW' <<<"$dynamic" && grep -q '(RELR)' <<<"$dynamic"; then
    pass "the installed reachd has full RELRO (GNU_RELRO, BIND_NOW) and DT_RELR" \
      "$(grep GNU_RELRO <<<"$program"; grep -E '\((FLAGS|FLAGS_1|RELR)\)' <<<"$dynamic")"
  else
    fail "the installed reachd has full RELRO (GNU_RELRO, BIND_NOW) and DT_RELR" \
      "$(grep -E 'LOAD|RELRO' <<<"$program"; grep -E 'FLAGS|RELR' <<<"$dynamic")"
  fi
  # Nothing writable and executable, and .rodata read-only (the cause of the lost RELRO).
  if ! grep -E '^ +LOAD' <<<"$program" | grep -q 'W.E\|RWE' && readelf -SW "$binary" | grep -E ' \.rodata ' | grep -qv ' WA '; then
    pass "no writable and executable segment, .rodata read-only" "$(readelf -SW "$binary" | grep -E ' \.rodata |data\.rel\.ro')"
  else
    fail "no writable and executable segment, .rodata read-only" "$(grep -E 'LOAD' <<<"$program"; readelf -SW "$binary" | grep -E ' \.rodata ')"
  fi
  expect_match "/usr/bin/reachctl is a link to reachd (one multi-call binary)" '^reachd$' cx readlink /usr/bin/reachctl
}

# The package as Debian's own checker sees it, on the host, once (the .deb is the same for
# every suite): any error or warning fails; an override in the package says why for any
# tag that stays.
check_lintian() {
  capture lintian --fail-on error,warning --show-overrides "$1"
  OUT=$(grep -v 'running with root privileges' <<<"$OUT" || true)
  echo "---- lintian $(basename "$1") ($(lintian --version)) ----"
  echo "${OUT:-(no output)}"
  echo "----"
  local what
  what="lintian $(dpkg-deb -f "$1" Package): no errors, no warnings"
  if [ "$RC" -eq 0 ] && ! grep -Eq '^[EW]: ' <<<"$OUT"; then
    pass "$what" "$(grep -c '^[IO]: ' <<<"$OUT" || true) info or overridden lines"
  else
    fail "$what" "exit $RC: $(grep -E '^[EW]: ' <<<"$OUT")"
  fi
}

# 1. Socket activation by a non-root client, and every later non-root call (the
# RuntimeDirectory= regression: after the first start /run/reachd became a symlink into
# the root-only /run/private and every non-root client got "Permission denied").
check_activation() {
  local state
  state=$(service_state)
  if [ "$state" = inactive ]; then pass "reachd.service is inactive before any client"; else fail "reachd.service is inactive before any client" "is-active: $state"; fi
  expect_match "1st non-root reachctl status socket-activates reachd and answers" '^Status:' \
    as_nobody reachctl status --timeout 20
  if wait_until 5 service_is_active; then
    pass "reachd.service became active" "MainPID $(main_pid)"
  else
    fail "reachd.service became active" "is-active: $(service_state)"
  fi
  expect_match "2nd non-root reachctl status (service running) answers" '^Status:' as_nobody reachctl status
  expect_match "3rd non-root reachctl status answers" '^Status:' as_nobody reachctl status
  check_runtime_directory
  expect_ok "systemctl restart reachd" cx systemctl restart reachd.service
  expect_match "non-root reachctl status after the restart answers" '^Status:' as_nobody reachctl status
  expect_match "non-root reachctl interfaces after the restart answers" '^INDEX' as_nobody reachctl interfaces
  check_runtime_directory
}

check_runtime_directory() {
  capture cx ls -ld /run/reachd "$SOCKET"
  if cx test -d /run/reachd -a ! -L /run/reachd && cx test -S "$SOCKET"; then
    pass "/run/reachd is a real directory holding the socket" "$OUT"
  else
    fail "/run/reachd is a real directory holding the socket" "$OUT"
  fi
}

# The journal event trail (after check_route_change): each published change is one
# structured entry with reachd's MESSAGE_ID and REACHD_* fields, not also a plain line, and
# the catalog the package installs explains it (journalctl -x).
check_journal_trail() {
  local id=3864895a11494312937013b5eb910ceb
  capture cx journalctl -u reachd.service "MESSAGE_ID=$id" -o json --no-pager
  if grep -q '"REACHD_STATUS":"unsatisfied"' <<<"$OUT" && grep -q '"REACHD_REASON":"noRoute"' <<<"$OUT" \
    && grep -q '"REACHD_STATUS":"satisfied"' <<<"$OUT" && grep -q '"REACHD_SEQUENCE":"' <<<"$OUT"; then
    pass "journalctl MESSAGE_ID=$id: the route change's entries, with REACHD_* fields" \
      "$(grep -o '"REACHD_[A-Z_]*":"[^"]*"' <<<"$OUT" | tr '\n' ' ' | head -c 400)"
  else
    fail "journalctl MESSAGE_ID=$id: the route change's entries, with REACHD_* fields" "exit $RC: $(head -c 2000 <<<"$OUT")"
  fi
  capture cx journalctl -u reachd.service -o json --no-pager
  local plain structured
  plain=$(grep -c '"MESSAGE":"path changed' <<<"$OUT" || true)
  structured=$(grep '"MESSAGE":"path changed' <<<"$OUT" | grep -c "\"MESSAGE_ID\":\"$id\"" || true)
  if [ "$plain" -gt 0 ] && [ "$plain" -eq "$structured" ]; then
    pass "each change is logged once, as the structured entry" "$structured entries"
  else
    fail "each change is logged once, as the structured entry" "$plain 'path changed' entries, $structured with the MESSAGE_ID"
  fi
  capture cx journalctl -x -u reachd.service "MESSAGE_ID=$id" -n 1 --no-pager
  if grep -q 'Subject: Network path changed' <<<"$OUT"; then
    pass "journalctl -x explains the entry (the installed catalog)" "$(grep 'Subject:' <<<"$OUT")"
  else
    fail "journalctl -x explains the entry (the installed catalog)" "exit $RC: $OUT"
  fi
}

# 2. systemctl status: active (running) and reachd's STATUS= line.
check_systemctl_status() {
  capture cx systemctl status reachd.service --no-pager --lines=5
  echo "---- systemctl status reachd (inside the $SUITE container) ----"
  echo "$OUT"
  echo "----"
  if grep -q 'Active: active (running)' <<<"$OUT"; then pass "systemctl status shows active (running)" "$(grep 'Active:' <<<"$OUT")"; else fail "systemctl status shows active (running)" "$OUT"; fi
  if grep -Eq '^ *Status: "reachable via eth0' <<<"$OUT"; then pass "systemctl status shows reachd's STATUS= line" "$(grep 'Status:' <<<"$OUT")"; else fail "systemctl status shows reachd's STATUS= line" "$OUT"; fi
  capture as_nobody reachctl status
  echo "---- reachctl status as nobody (uid $(cx id -u nobody)) inside the $SUITE container ----"
  echo "$OUT"
  echo "----"
}

# On the packaged configuration (no probe endpoint) `reachctl probe` says why nothing was
# checked and what to change where, exit code 69 as before; with reachd.socket stopped,
# a call says to start it.
check_error_advice() {
  capture as_nobody reachctl probe
  echo "---- reachctl probe as nobody on the packaged configuration ($SUITE), exit $RC ----"
  echo "$OUT"
  echo "----"
  if [ "$RC" -eq 69 ] && grep -q '^reachctl: nothing was checked: probing is not configured: the \[probe\] table of /etc/reachd/reachd.toml sets no url or https-url$' <<<"$OUT" \
    && grep -q '^reachctl: hint: set url = .*systemctl restart reachd' <<<"$OUT"; then
    pass "reachctl probe on the packaged configuration: why, what to set, exit 69" "$OUT"
  else
    fail "reachctl probe on the packaged configuration: why, what to set, exit 69" "exit $RC: $OUT"
  fi
  step cx systemctl stop reachd.socket reachd.service
  capture as_nobody reachctl status
  if [ "$RC" -eq 2 ] && grep -q '^reachctl: hint: start .*systemctl start reachd.socket' <<<"$OUT"; then
    pass "reachctl status with reachd.socket stopped: exit 2, says to start it" "$OUT"
  else
    fail "reachctl status with reachd.socket stopped: exit 2, says to start it" "exit $RC: $OUT"
  fi
  step cx systemctl start reachd.socket
}

# --- The GIO module (package reachd-gio) ---

GIO_MODULE_DIR=""
# A GLib app as nobody: GIO's default network monitor, its network-available, and how
# long g_network_monitor_get_default() took.
GIO_PROBE='import gi, time
gi.require_version("Gio", "2.0")
from gi.repository import Gio
t = time.monotonic()
m = Gio.NetworkMonitor.get_default()
print(m.__gtype__.name, m.get_network_available(), "%d ms" % ((time.monotonic() - t) * 1000))'
gio_cache_lists_module() { cx grep -qs '^libgioreachd\.so: .*gio-network-monitor' "$GIO_MODULE_DIR/giomodule.cache"; }

# apt-get install ./reachd-gio_*.deb (with python3-gi, a GLib app for check_gio): GLib
# and json-glib come along; the module is in the multiarch GIO module directory, 0644,
# and libglib2.0's gio-querymodules (its postinst here, as GLib comes along; its dpkg
# trigger on the directory otherwise; no maintainer script of ours) put it in that
# directory's cache. check_gio_purge sees the trigger alone at work.
check_gio_install() {
  local deb module
  deb=$(basename "$GIO_DEB")
  capture cx bash -c "cd $SHARE && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ./$deb python3-gi"
  if [ "$RC" -eq 0 ]; then
    pass "apt-get install ./$deb python3-gi (brings GLib and json-glib)" "$(grep -E '^(Unpacking|Setting up|Processing triggers for) .*(reachd-gio|libglib|libjson-glib)' <<<"$OUT")"
  else
    fail "apt-get install ./$deb python3-gi" "exit $RC: $OUT"
  fi
  module=$(cx dpkg -L reachd-gio | grep '/libgioreachd\.so$')
  GIO_MODULE_DIR=$(dirname "${module:-/nonexistent/x}")
  expect_match "the module is in the multiarch GIO module directory, root's, 0644" \
    '^/usr/lib/[a-z0-9_]+-linux-gnu[a-z0-9_]*/gio/modules/libgioreachd\.so 644 root$' cx stat -c '%n %a %U' "${module:-/nonexistent}"
  if gio_cache_lists_module; then
    pass "gio-querymodules listed it in $GIO_MODULE_DIR/giomodule.cache" "$(cx cat "$GIO_MODULE_DIR/giomodule.cache")"
  else
    fail "gio-querymodules listed it in $GIO_MODULE_DIR/giomodule.cache" "$(cx cat "$GIO_MODULE_DIR/giomodule.cache" 2>&1)"
  fi
}

# A GLib app as nobody gets ReachdNetworkMonitor, network-available as reachctl says; with
# reachd.socket stopped GIO takes another monitor at once.
check_gio() {
  local status want
  status=$(path_status)
  if [ "$status" = satisfied ]; then want=True; else want=False; fi
  expect_match "GLib app (nobody): the default GNetworkMonitor is reachd's, network-available $want (reachctl: $status)" \
    "^ReachdNetworkMonitor $want [0-9]+ ms$" as_nobody python3 -c "$GIO_PROBE"
  step cx systemctl stop reachd.socket reachd.service
  capture as_nobody python3 -c "$GIO_PROBE"
  if [ "$RC" -eq 0 ] && grep -Eq '^[A-Za-z]+ (True|False) [0-9]+ ms$' <<<"$OUT" && ! grep -q '^ReachdNetworkMonitor' <<<"$OUT" \
    && [ "$(awk '{ print $3 }' <<<"$OUT")" -lt 1000 ]; then
    pass "reachd.socket stopped: GIO takes another monitor, in under 1 s" "$OUT"
  else
    fail "reachd.socket stopped: GIO takes another monitor, in under 1 s" "exit $RC: $OUT"
  fi
  step cx systemctl start reachd.socket
}

# apt-get purge reachd-gio: the module leaves the directory and, by libglib2.0's trigger,
# the cache (gio-querymodules removes a cache that would list nothing).
check_gio_purge() {
  capture cx env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q reachd-gio
  if [ "$RC" -eq 0 ]; then pass "apt-get purge reachd-gio" "$(grep -E '^(Removing|Purging|Processing triggers)' <<<"$OUT")"; else fail "apt-get purge reachd-gio" "exit $RC: $OUT"; fi
  if ! cx test -e "$GIO_MODULE_DIR/libgioreachd.so" && ! gio_cache_lists_module; then
    pass "the module is gone from $GIO_MODULE_DIR and its giomodule.cache" "$(cx cat "$GIO_MODULE_DIR/giomodule.cache" 2>&1)"
  else
    fail "the module is gone from $GIO_MODULE_DIR and its giomodule.cache" "$(cx ls "$GIO_MODULE_DIR"; cx cat "$GIO_MODULE_DIR/giomodule.cache" 2>&1)"
  fi
}

# --- The module's real consumers: PackageKit, xdg-desktop-portal, NetworkManager ---

# GIO's default monitor in one line, as a GLib app sees it; GIO_USE_NETWORK_MONITOR in the
# environment picks another backend, for the side-by-side views below.
GIO_STATE='import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio
m = Gio.NetworkMonitor.get_default()
print(m.__gtype__.name, "available=%s metered=%s connectivity=%s" % (m.get_network_available(), m.get_network_metered(), m.get_connectivity().value_nick))'

# apt_install PACKAGE…: archive packages from the root's apt cache (run fetched them),
# without Recommends. PASS with how many packages came along; the status is apt-get's.
apt_install() {
  capture cx env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
  if [ "$RC" -eq 0 ]; then
    pass "apt-get install --no-install-recommends $*" "$(grep -c '^Setting up ' <<<"$OUT") packages set up, e.g. $(grep -E "^Setting up ($(IFS='|'; echo "$*")) " <<<"$OUT" | tr '\n' ' ')"
  else
    fail "apt-get install --no-install-recommends $*" "exit $RC: $(tail -20 <<<"$OUT")"
  fi
  return "$RC"
}

# maps_module PID: reachd's GIO module is loaded in that process of the container.
maps_module() { [ -n "$1" ] && [ "$1" != 0 ] && cx grep -q 'libgioreachd\.so' "/proc/$1/maps"; }

# eth0_expensive / eth0_not_expensive: a reload adds or removes an [[interfaces.override]]
# (config/reachd.toml) making eth0 expensive; the packaged file is kept aside meanwhile.
eth0_expensive() {
  step cx cp /etc/reachd/reachd.toml /var/tmp/reachd.toml.expensive
  step cx sh -c "printf '\n[[interfaces.override]]\nmatch = \"eth0\"\nexpensive = true\n' >>/etc/reachd/reachd.toml"
  step cx systemctl reload reachd.service
}
eth0_not_expensive() {
  step cx cp /var/tmp/reachd.toml.expensive /etc/reachd/reachd.toml
  step cx systemctl reload reachd.service
}

# PackageKit's NetworkState (PkNetworkEnum: 1 offline, 2 online, 5 mobile), read as
# nobody; the first read D-Bus activates packagekitd. packagekitd computes it from
# g_network_monitor_get_default() at start (available, else offline; metered: mobile) and
# again only on the monitor's network-changed (pk_engine_network_state_changed_cb, the
# same in 1.2.6 and 1.3.1), caching it in between: it follows reachd without a restart
# only if the module emits network-changed.
pk_network_state() {
  as_nobody busctl get-property org.freedesktop.PackageKit /org/freedesktop/PackageKit \
    org.freedesktop.PackageKit NetworkState | awk '$1 == "u" { print $2 }'
}
pk_network_state_is() { [ "$(pk_network_state)" = "$1" ]; }
pk_pid() { cx systemctl show -P MainPID packagekit.service; }
reachd_status_lines() { as_nobody reachctl status --timeout 5 | grep -E '^(Status|Expensive|Connectivity):' | tr -s ' ' | tr '\n' ' '; }

check_packagekit() {
  local pid
  apt_install packagekit || return
  if wait_until 20 pk_network_state_is 2; then
    pass "PackageKit's NetworkState: 2 (online), reachd satisfied" "reachctl: $(reachd_status_lines)"
  else
    fail "PackageKit's NetworkState: 2 (online), reachd satisfied" "NetworkState: $(pk_network_state 2>&1); $(journal -u packagekit.service | tail -5)"
  fi
  pid=$(pk_pid)
  if maps_module "$pid"; then pass "packagekitd (pid $pid) loaded reachd's module" "$(cx grep -m1 libgioreachd "/proc/$pid/maps")"; else fail "packagekitd (pid $pid) loaded reachd's module" "$(cx systemctl status packagekit.service --no-pager 2>&1 | head -5)"; fi
  # Unsatisfied where GLib's own netlink backend says available: the default route only in
  # table 100, which no `ip rule` looks up. reachd asks the FIB; netlink counts a default
  # route in any table. (A blackhole default does not show it: netlink skips a route
  # without a gateway or device, so it says unavailable there too.)
  step cx ip route del default via "$GATEWAY" dev eth0
  step cx ip route add default via "$GATEWAY" dev eth0 table 100
  if wait_until 10 pk_network_state_is 1; then
    pass "default route only in an unused table → NetworkState 1 (offline)" "reachctl: $(reachd_status_lines)"
  else
    fail "default route only in an unused table → NetworkState 1 (offline)" "NetworkState: $(pk_network_state 2>&1); reachctl: $(reachd_status_lines)"
  fi
  capture as_nobody env GIO_USE_NETWORK_MONITOR=netlink python3 -c "$GIO_STATE"
  if [ "$RC" -eq 0 ] && grep -q '^GNetworkMonitorNetlink available=True ' <<<"$OUT" && status_is unsatisfied && pk_network_state_is 1; then
    pass "same state side by side: reachd unsatisfied, PackageKit offline; GLib's netlink backend: available" \
      "GIO_USE_NETWORK_MONITOR=netlink: $OUT; $(cx ip route show table all | grep '^default')"
  else
    fail "same state side by side: reachd unsatisfied, PackageKit offline; GLib's netlink backend: available" \
      "netlink: exit $RC: $OUT; reachctl: $(path_status); NetworkState: $(pk_network_state)"
  fi
  step cx ip route del default via "$GATEWAY" dev eth0 table 100
  step cx ip route add default via "$GATEWAY" dev eth0
  if wait_until 10 pk_network_state_is 2; then pass "default route back in main → NetworkState 2 (online)" "reachctl: $(reachd_status_lines)"; else fail "default route back in main → NetworkState 2 (online)" "NetworkState: $(pk_network_state 2>&1); reachctl: $(reachd_status_lines)"; fi
  eth0_expensive
  if wait_until 10 pk_network_state_is 5; then pass "eth0 expensive (override, reload) → NetworkState 5 (mobile)" "reachctl: $(reachd_status_lines)"; else fail "eth0 expensive (override, reload) → NetworkState 5 (mobile)" "NetworkState: $(pk_network_state 2>&1); reachctl: $(reachd_status_lines)"; fi
  eth0_not_expensive
  if wait_until 10 pk_network_state_is 2; then pass "override gone (reload) → NetworkState 2 (online)" "reachctl: $(reachd_status_lines)"; else fail "override gone (reload) → NetworkState 2 (online)" "NetworkState: $(pk_network_state 2>&1); reachctl: $(reachd_status_lines)"; fi
  if [ "$(pk_pid)" = "$pid" ]; then pass "packagekitd followed each change on network-changed, never restarted" "MainPID $pid throughout"; else fail "packagekitd followed each change on network-changed, never restarted" "MainPID $pid, now $(pk_pid)"; fi
  step cx systemctl stop packagekit.service
}

# xdg-desktop-portal's NetworkMonitor on a session bus of nobody's: a dbus-daemon of its
# own at a fixed address (dbus-run-session's bus lives as long as one command; each call
# below is a command of its own), the portal started on it by hand. No backend is needed:
# the portal exports NetworkMonitor itself, answered from its GNetworkMonitor at each call,
# and answers an unsandboxed (host) caller, whose app info always has network access.
# With HOME=/nonexistent the document portal it activates warns and gives up; harmless.
PORTAL_RUN=/run/reachd-portal
as_session() { cx runuser -u nobody -- env DBUS_SESSION_BUS_ADDRESS="unix:path=$PORTAL_RUN/bus" XDG_RUNTIME_DIR="$PORTAL_RUN" "$@"; }
portal_call() {
  as_session busctl --user call org.freedesktop.portal.Desktop /org/freedesktop/portal/desktop \
    org.freedesktop.portal.NetworkMonitor "$@"
}
# The NetworkMonitor's "changed" signal, followed as an app does: a line at start and one
# per signal, each with GetStatus's answer then.
PORTAL_WATCH='import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SESSION)
def status():
    s = bus.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                      "org.freedesktop.portal.NetworkMonitor", "GetStatus", None,
                      GLib.VariantType("(a{sv})"), 0, 5000, None).unpack()[0]
    return "available=%s metered=%s connectivity=%d" % (s["available"], s["metered"], s["connectivity"])
bus.signal_subscribe("org.freedesktop.portal.Desktop", "org.freedesktop.portal.NetworkMonitor", "changed",
                     "/org/freedesktop/portal/desktop", None, 0, lambda *a: print("changed", status(), flush=True))
print("start", status(), flush=True)
GLib.MainLoop().run()'
portal_answers() { portal_call "$1" | grep -Eq -- "$2"; }
# The container's processes running as nobody ("PID COMM" a line).
nobody_processes() { cx sh -c 'for p in /proc/[0-9]*; do [ "$(stat -c %u "$p" 2>/dev/null)" = 65534 ] && echo "${p#/proc/} $(cat "$p/comm")"; done; true'; }
no_nobody_processes() { [ -z "$(nobody_processes)" ]; }
portal_watch_has() { cx grep -q -- "$1" "$PORTAL_RUN/watch.out"; }
portal_watched() { cx cat "$PORTAL_RUN/watch.out" | tr '\n' ';'; }
check_portal() {
  local pid
  apt_install xdg-desktop-portal || return
  step cx install -d -o nobody -m 0700 "$PORTAL_RUN" || return
  step cx sh -c "runuser -u nobody -- dbus-daemon --session --fork --address=unix:path=$PORTAL_RUN/bus --print-pid >$PORTAL_RUN/bus.pid" || return
  step cx sh -c "runuser -u nobody -- env DBUS_SESSION_BUS_ADDRESS=unix:path=$PORTAL_RUN/bus XDG_RUNTIME_DIR=$PORTAL_RUN \
    /usr/libexec/xdg-desktop-portal >$PORTAL_RUN/portal.log 2>&1 &"
  # GLib's GConnectivity: 1 local, 4 full; reachd's unprobed "unknown" on a satisfied path is full.
  if wait_until 10 portal_call GetStatus; then
    expect_match "portal NetworkMonitor.GetStatus (nobody's session bus): available, not metered, connectivity 4 (full), as reachd says" \
      '"available" b true "metered" b false "connectivity" u 4$' portal_call GetStatus
  else
    fail "portal NetworkMonitor.GetStatus answers on nobody's session bus" "$(cx cat "$PORTAL_RUN/portal.log" | tail -5)"
  fi
  pid=$(as_session busctl --user call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
    GetConnectionUnixProcessID s org.freedesktop.portal.Desktop | awk '$1 == "u" { print $2 }')
  if maps_module "$pid"; then pass "xdg-desktop-portal (pid $pid) loaded reachd's module" "$(cx grep -m1 libgioreachd "/proc/$pid/maps")"; else fail "xdg-desktop-portal (pid $pid) loaded reachd's module" "$(cx cat "$PORTAL_RUN/portal.log" | tail -5)"; fi
  # Its stderr goes to watch.out; the subshell's is dropped: the client ends by a signal,
  # which bash would report there ("Terminated").
  (cx bash -c "echo \$\$ >$PORTAL_RUN/watch.pid; exec runuser -u nobody -- env DBUS_SESSION_BUS_ADDRESS=unix:path=$PORTAL_RUN/bus \
    timeout 60 python3 -c \"\$1\" >$PORTAL_RUN/watch.out 2>&1" _ "$PORTAL_WATCH") 2>/dev/null &
  local watcher=$!
  wait_until 5 portal_watch_has '^start' || fail "a portal client follows NetworkMonitor's changed signal" "$(portal_watched)"
  step cx ip route del default via "$GATEWAY" dev eth0
  if wait_until 5 portal_watch_has '^changed available=False metered=False connectivity=1$'; then
    pass "default route deleted → the portal signals changed: available false, connectivity 1 (local)" "$(portal_watched) reachctl: $(reachd_status_lines)"
  else
    fail "default route deleted → the portal signals changed: available false, connectivity 1 (local)" "$(portal_watched) reachctl: $(reachd_status_lines)"
  fi
  expect_match "…and GetAvailable says false" '^b false$' portal_call GetAvailable
  step cx ip route add default via "$GATEWAY" dev eth0
  if wait_until 5 portal_watch_has '^changed available=True metered=False connectivity=4$'; then pass "default route back → changed: available true again" "$(portal_watched)"; else fail "default route back → changed: available true again" "$(portal_watched)"; fi
  eth0_expensive
  if wait_until 5 portal_watch_has '^changed available=True metered=True connectivity=4$'; then pass "eth0 expensive (override, reload) → changed: metered true" "$(portal_watched) reachctl: $(reachd_status_lines)"; else fail "eth0 expensive (override, reload) → changed: metered true" "$(portal_watched) reachctl: $(reachd_status_lines)"; fi
  expect_match "…and GetMetered says true" '^b true$' portal_call GetMetered
  eth0_not_expensive
  if wait_until 5 portal_answers GetMetered '^b false$'; then pass "override gone (reload) → GetMetered false"; else fail "override gone (reload) → GetMetered false" "$(portal_call GetMetered 2>&1)"; fi
  expect_match "…and GetConnectivity says 4 (full)" '^u 4$' portal_call GetConnectivity
  # The client, the portal and the bus; what the bus activated leaves with it.
  cx sh -c "kill \$(cat $PORTAL_RUN/watch.pid) $pid \$(cat $PORTAL_RUN/bus.pid)" || true
  wait "$watcher" 2>/dev/null || true
  if wait_until 5 no_nobody_processes; then pass "the session's processes are gone"; else fail "the session's processes are gone" "$(nobody_processes)"; fi
}

# A real NetworkManager in the container manages nm0, a veth whose peer gwnm0 is in gw
# (10.88.0.1): its connection is metered and NM's connectivity check meets a captive portal
# there (Tests/Fixtures/probe_server.py answering 302 to a login page). eth0 stays
# unmanaged, and loses its default route meanwhile so that nm0 is the path's primary. NM
# runs without udev here: it takes a new link from the kernel as it is. reachd ran long
# before NetworkManager was installed: it has to notice NM appear on the bus.
# Both suites: NetworkManager 1.42 (bookworm) and 1.52 (trixie), whose D-Bus API reachd
# reads, for a few seconds each (install 3 s; the check about 5 s once reachd answers,
# else the 15 s its waits for reachd and the module allow).
NM_GATEWAY=10.88.0.1
NM_CONF=/etc/NetworkManager/conf.d/90-reachd-test.conf
nm_connectivity_is() { [ "$(cx nmcli -t -f CONNECTIVITY general)" = "$1" ]; }
nm_knows_nm0() { cx nmcli -t -f DEVICE device | grep -qx nm0; }
reachd_line_matches() { as_nobody reachctl status --timeout 5 | grep -Eq -- "$1"; }
module_state_matches() { as_nobody python3 -c "$GIO_STATE" | grep -Eq -- "$1"; }
check_networkmanager() {
  local want
  # Written before the install, whose postinst starts NetworkManager: no automatic
  # "Wired connection" on a new device, the suite's eth0 left alone, and the connectivity
  # check against gw's portal (NM's own format: uri, expected body, seconds between checks).
  step cx mkdir -p "$(dirname "$NM_CONF")" || return
  step cx sh -c "cat >$NM_CONF" <<CONF || return
[main]
no-auto-default=*

[keyfile]
unmanaged-devices=interface-name:eth0

[connectivity]
uri=http://$NM_GATEWAY/check
response=NetworkManager is online
interval=5
CONF
  apt_install network-manager || return
  expect_match "NetworkManager runs (its postinst started it)" '^active$' cx systemctl is-active NetworkManager.service
  step cx sh -c 'echo "{\"http\": \"redirect\"}" >/run/reachd-captive.json'
  step cx sh -c "ip netns exec gw python3 $SHARE/probe_server.py /run/reachd-captive.json >/run/reachd-captive.out 2>&1 & echo \$! >/run/reachd-captive.pid"
  wait_until 5 cx grep -q ready /run/reachd-captive.out || fail "the captive portal listens in gw" "$(cx cat /run/reachd-captive.out)"
  step cx ip link add nm0 type veth peer name gwnm0 netns gw
  step cx ip -n gw addr add "$NM_GATEWAY/24" dev gwnm0
  step cx ip -n gw link set gwnm0 up
  wait_until 10 nm_knows_nm0 || fail "NetworkManager sees nm0" "$(cx nmcli device 2>&1)"
  step cx nmcli connection add type ethernet ifname nm0 con-name reachd-test connection.metered yes \
    ipv4.method manual ipv4.addresses 10.88.0.2/24 ipv4.gateway "$NM_GATEWAY" ipv6.method disabled
  step cx ip route del default via "$GATEWAY" dev eth0
  expect_ok "nmcli connection up reachd-test (nm0, connection.metered yes)" cx nmcli --wait 20 connection up reachd-test
  # NetworkManager's own view first.
  if wait_until 20 nm_connectivity_is portal; then
    pass "NetworkManager: connectivity portal (its check met gw's 302)" \
      "$(cx nmcli -t -f STATE,CONNECTIVITY general); gw's portal saw: $(cx cat /run/reachd-captive.json.log | head -2 | tr '\n' ';')"
  else
    fail "NetworkManager: connectivity portal (its check met gw's 302)" "$(cx nmcli general 2>&1; cx journalctl -u NetworkManager.service --no-pager -n 15)"
  fi
  expect_match "NetworkManager: nm0 is metered (connection.metered yes)" '^GENERAL\.METERED:yes$' cx nmcli -t -f GENERAL.METERED device show nm0
  # GLib's own NetworkManager backend, which the module outranks (35 > 30), on the same
  # network: it sees the portal, but drops Metered unless NM's state is connected-global.
  expect_match "side by side: GLib's NetworkManager backend says portal" '^GNetworkMonitorNM available=True metered=(True|False) connectivity=portal$' \
    as_nobody env GIO_USE_NETWORK_MONITOR=networkmanager python3 -c "$GIO_STATE"
  expect_match "reachd's path goes over nm0 (eth0 without its default route)" '^Primary: +nm0 ' as_nobody reachctl status --timeout 5
  # reachd reads NetworkManager over D-Bus: its connectivity, and each device's Metered.
  want='^Connectivity:.*portal.*NetworkManager'
  if wait_until 10 reachd_line_matches "$want"; then
    pass "reachctl status: connectivity portal, from NetworkManager" "$(as_nobody reachctl status | grep '^Connectivity:')"
  else
    fail "reachctl status: connectivity portal, from NetworkManager" "wanted /$want/ in: $(as_nobody reachctl status 2>&1)"
  fi
  want='^Expensive:.*yes.*NetworkManager'
  if reachd_line_matches "$want"; then
    pass "reachctl status: expensive, from NetworkManager (nm0 metered)" "$(as_nobody reachctl status | grep '^Expensive:')"
  else
    fail "reachctl status: expensive, from NetworkManager (nm0 metered)" "wanted /$want/ in: $(as_nobody reachctl status 2>&1 | grep -E '^(Status|Primary|Expensive|Connectivity):')"
  fi
  want='^ReachdNetworkMonitor available=True metered=True connectivity=portal$'
  if wait_until 5 module_state_matches "$want"; then
    pass "GLib app (nobody): ReachdNetworkMonitor, network-metered True, connectivity PORTAL" "$(as_nobody python3 -c "$GIO_STATE")"
  else
    fail "GLib app (nobody): ReachdNetworkMonitor, network-metered True, connectivity PORTAL" "wanted /$want/, got: $(as_nobody python3 -c "$GIO_STATE" 2>&1)"
  fi
  # Back to the suite's network: NetworkManager stopped, nm0 gone, eth0's default route back.
  step cx nmcli connection delete reachd-test
  step cx systemctl stop NetworkManager.service
  cx sh -c 'kill "$(cat /run/reachd-captive.pid)"' || true
  step cx ip link del nm0
  step cx ip route add default via "$GATEWAY" dev eth0
  if wait_until 5 status_is satisfied; then
    pass "NetworkManager stopped, nm0 gone: satisfied over eth0 again" "$(as_nobody reachctl status | grep -E '^(Status|Primary):' | tr -s ' ' | tr '\n' ' ')"
  else
    fail "NetworkManager stopped, nm0 gone: satisfied over eth0 again" "$(as_nobody reachctl status 2>&1)"
  fi
}

# --- Expensive where it costs money: DHCP option 43, an iPhone hotspot's address plan ---

# reachctl status in full, and eth0's and IFACE's rows of reachctl interfaces with what
# follows the table about IFACE: what a reader compares side by side.
reachctl_views() {
  echo "---- reachctl status as nobody: $2 ($SUITE) ----"
  as_nobody reachctl status --timeout 5 2>&1
  echo "---- reachctl interfaces as nobody: $2 ($SUITE) ----"
  as_nobody reachctl interfaces --timeout 5 2>&1 | awk -v i="$1" 'NR == 1 || $2 == i || $2 == "eth0" || index($0, i ": ") == 1'
  echo "----"
}
# reachctl_expensive_is IFACE WORDS: `reachctl status` names IFACE the primary and says
# "Expensive: WORDS" (e.g. "yes (dhcp ANDROID_METERED)", "no"), and `reachctl interfaces`
# agrees ("IFACE: expensive (…)" after the table, or no such line).
reachctl_expensive_is() {
  local status interfaces
  status=$(as_nobody reachctl status --timeout 5) || return 1
  grep -Eq "^Primary: +$1( |\$)" <<<"$status" && grep -Fxq "Expensive: $2" <<<"$(tr -s ' ' <<<"$status")" || return 1
  interfaces=$(as_nobody reachctl interfaces --timeout 5) || return 1
  case $2 in
    no) ! grep -q "^$1: expensive" <<<"$interfaces" ;;
    yes*) grep -Fxq "$1: expensive${2#yes}" <<<"$interfaces" ;;
  esac
}
# wait_ms DEADLINE_MS CMD…: polls CMD until it succeeds or the clock (now_ms) passes
# DEADLINE_MS; prints the time of success (ms since the epoch), status 1 on timeout.
wait_ms() {
  local deadline=$1; shift
  until "$@" >/dev/null 2>&1; do
    [ "$(now_ms)" -lt "$deadline" ] || return 1
    sleep 0.05
  done
  now_ms
}

# systemd-networkd as dh0's DHCP client (a .network file, DHCP=ipv4), dnsmasq in gw as the
# server, with and without option 43 ANDROID_METERED (what Android's hotspot and USB
# tethering send): reachd reads networkd's lease (/run/systemd/netif/leases/IFINDEX) and
# says expensive (dhcp ANDROID_METERED) within 2 s of a lease with the option, not
# expensive within 2 s of one without. Each lease is a new one: `networkctl reconfigure`
# drops dh0's address and asks again (reachd reads leases when IPv4 addresses change).
# eth0 loses its default route meanwhile, so that dh0 is the path's primary. dnsmasq
# (dnsmasq-base, fetched into the root like the consumers) runs as a transient unit of the
# container's systemd in gw's network namespace, so the container's poweroff ends it
# whatever happens here. Both suites: networkd 252 and 257.
DHCP_GATEWAY=10.89.0.1
DHCP_NETWORK_FILE=/run/systemd/network/50-reachd-test-dh0.network
DNSMASQ_UNIT=reachd-test-dnsmasq
# serve_dhcp [OPTION…]: (re)starts the server on gwdh0, in the foreground of its unit, no
# DNS, no ping before an offer (it would cost 3 s); lease database in /run, log in the
# journal; status 1 unless it says it serves within 5 s.
serve_dhcp() {
  cx systemctl stop "$DNSMASQ_UNIT" >/dev/null 2>&1
  cx systemctl reset-failed "$DNSMASQ_UNIT" >/dev/null 2>&1
  step cx systemd-run --unit="$DNSMASQ_UNIT" -p NetworkNamespacePath=/run/netns/gw -q \
    dnsmasq --keep-in-foreground --conf-file=/dev/null --log-facility=- --log-dhcp --user=root \
    --port=0 --interface=gwdh0 --bind-interfaces --dhcp-authoritative --no-ping \
    --dhcp-range=10.89.0.10,10.89.0.20,255.255.255.0,10m --dhcp-leasefile=/run/reachd-test-dnsmasq.leases "$@" || return
  wait_until 5 dnsmasq_listens && return
  fail "dnsmasq ${*:-without options} serves DHCP on gwdh0 (in gw)" "$(dnsmasq_lines | tail -5)"
  return 1
}
# The unit's current run says it serves (an earlier run's lines do not count).
dnsmasq_lines() { journal "_SYSTEMD_INVOCATION_ID=$(cx systemctl show -P InvocationID "$DNSMASQ_UNIT")" -o cat; }
dnsmasq_listens() { dnsmasq_lines | grep -q 'DHCP, IP range'; }
# The lease file networkd keeps for dh0 holds an address, and VENDOR_SPECIFIC= (option
# 43) when WANT is "with 43", none when "without 43".
dh0_lease_file() { echo "/run/systemd/netif/leases/$(cx cat /sys/class/net/dh0/ifindex)"; }
dh0_lease_is() {
  local text
  text=$(cx cat "$(dh0_lease_file)" 2>/dev/null) && grep -q '^ADDRESS=10\.89\.0\.' <<<"$text" || return 1
  case $1 in
    "with 43") grep -q '^VENDOR_SPECIFIC=' <<<"$text" ;;
    "without 43") ! grep -q '^VENDOR_SPECIFIC=' <<<"$text" ;;
  esac
}
dh0_lease_lines() { cx grep -E '^(ADDRESS|ROUTER|LIFETIME|VENDOR_SPECIFIC)=' "$(dh0_lease_file)" 2>&1 | tr '\n' ' '; }
# The lease file's last write, in ms since the epoch.
dh0_lease_ms() { cx date -r "$(dh0_lease_file)" +%s%3N; }
# expect_expense_after_lease WHAT WANT WORDS [views]: once networkd's lease is WANT ("with
# 43", "without 43"; 10 s), reachctl says "Expensive: WORDS" of dh0 within 2 s of the lease
# file's last write (polled until 5 s, to show how late it came); "views" prints reachctl's
# status and interfaces then.
expect_expense_after_lease() {
  local what=$1 want=$2 words=$3 lease_ms seen_ms
  if ! wait_until 10 dh0_lease_is "$want"; then
    fail "$what: networkd's lease $want" "$(dh0_lease_lines); $(cx networkctl status dh0 --no-pager 2>&1 | tail -8)"
    return 1
  fi
  lease_ms=$(dh0_lease_ms)
  if seen_ms=$(wait_ms $((lease_ms + 5000)) reachctl_expensive_is dh0 "$words") && [ $((seen_ms - lease_ms)) -le 2000 ]; then
    pass "$what: reachctl says Expensive: $words for dh0, $((seen_ms - lease_ms)) ms after the lease file was written" \
      "lease: $(dh0_lease_lines); reachctl: $(reachd_status_lines)"
  else
    fail "$what: reachctl says Expensive: $words for dh0 within 2 s of the lease" \
      "${seen_ms:+only after $((seen_ms - lease_ms)) ms; }lease: $(dh0_lease_lines); reachctl: $(reachd_status_lines); $(as_nobody reachctl interfaces 2>&1 | grep '^dh0')"
  fi
  [ "${4:-}" != views ] || reachctl_views dh0 "$what"
}
# A renewal keeps the address and rewrites the lease: dnsmasq again without the option,
# `networkctl renew dh0` 2 s after the last address change (past any re-read that change
# scheduled). The kernel only sees the address's lifetimes refreshed (RTM_NEWADDR, the same
# address), so reachd has to notice the lease file itself.
check_lease_renewal() {
  local address settle_ms wait_ms
  address=$(cx sed -n 's/^ADDRESS=//p' "$(dh0_lease_file)")
  settle_ms=$(($(dh0_lease_ms) + 2000))
  serve_dhcp || return
  wait_ms=$((settle_ms - $(now_ms)))
  [ "$wait_ms" -le 0 ] || sleep "$((wait_ms / 1000)).$(printf '%03d' $((wait_ms % 1000)))"
  step cx networkctl renew dh0 || return
  expect_expense_after_lease "a renewal without option 43 (networkctl renew dh0, the address kept)" "without 43" "no"
  if [ "$(cx sed -n 's/^ADDRESS=//p' "$(dh0_lease_file)")" = "$address" ] && cx ip -4 addr show dev dh0 | grep -q "inet $address/"; then
    pass "the renewal kept dh0's address" "$address"
  else
    fail "the renewal kept dh0's address" "was $address; lease: $(dh0_lease_lines); $(cx ip -4 -br addr show dev dh0)"
  fi
}
# start_dh0 [OPTION…]: dh0, a veth to gw's gwdh0, with dnsmasq there serving OPTIONs and
# systemd-networkd as dh0's DHCP client ($DHCP_NETWORK_FILE); stop_dh0 takes it all down.
start_dh0() {
  step cx ip link add dh0 type veth peer name gwdh0 netns gw || return
  step cx ip -n gw addr add "$DHCP_GATEWAY/24" dev gwdh0
  step cx ip -n gw link set gwdh0 up
  serve_dhcp "$@"
  step cx mkdir -p "$(dirname "$DHCP_NETWORK_FILE")"
  step cx sh -c "printf '[Match]\nName=dh0\n\n[Network]\nDHCP=ipv4\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n' >$DHCP_NETWORK_FILE"
  expect_ok "systemctl start systemd-networkd ($DHCP_NETWORK_FILE: dh0, DHCP=ipv4)" cx systemctl start systemd-networkd.service
  return 0
}
# Its sockets too: a netlink event would start networkd again.
stop_dh0() {
  step cx systemctl stop systemd-networkd.service 'systemd-networkd*.socket'
  step cx systemctl stop "$DNSMASQ_UNIT"
  step cx ip link del dh0
  step cx rm -f "$DHCP_NETWORK_FILE"
}
check_networkd_dhcp() {
  apt_install dnsmasq-base || return
  step cx ip route del default via "$GATEWAY" dev eth0
  start_dh0 --dhcp-option-force=43,ANDROID_METERED || return
  expect_expense_after_lease "dnsmasq sends option 43 ANDROID_METERED" "with 43" "yes (dhcp ANDROID_METERED)" views
  # The same network without the option, then with it again: a new lease each time.
  serve_dhcp
  step cx networkctl reconfigure dh0
  expect_expense_after_lease "dnsmasq without option 43, networkctl reconfigure dh0" "without 43" "no" views
  serve_dhcp --dhcp-option-force=43,ANDROID_METERED
  step cx networkctl reconfigure dh0
  expect_expense_after_lease "option 43 again, networkctl reconfigure dh0" "with 43" "yes (dhcp ANDROID_METERED)"
  check_lease_renewal
  # Back to the suite's network: networkd and dnsmasq stopped, dh0 gone, eth0's default route back.
  stop_dh0
  step cx ip route add default via "$GATEWAY" dev eth0
  if wait_until 5 status_is satisfied; then
    pass "networkd stopped, dh0 gone: satisfied over eth0 again" "reachctl: $(reachd_status_lines)"
  else
    fail "networkd stopped, dh0 gone: satisfied over eth0 again" "$(as_nobody reachctl status 2>&1)"
  fi
}

# An iPhone Personal Hotspot's address plan: hs0 (a veth to gw) with 172.20.10.2/28 and the
# default route via 172.20.10.1, eth0 without its default route: reachd says expensive
# (hotspot address plan) and PackageKit's NetworkState, read through the module, is 5
# (mobile), reached on network-changed from 2 (packagekitd is not restarted in between).
# The heuristic switched off (hotspot-address-plan = false, reloaded) → not expensive, 2.
# After check_packagekit, whose packagekit it reads.
HOTSPOT_GATEWAY=172.20.10.1
check_hotspot_plan() {
  local conf=/etc/reachd/reachd.toml pid
  if ! wait_until 20 pk_network_state_is 2; then
    fail "hotspot plan: PackageKit's NetworkState 2 (online) before" "NetworkState: $(pk_network_state 2>&1)"
    return
  fi
  pid=$(pk_pid)
  step cx ip link add hs0 type veth peer name gwhs0 netns gw || return
  step cx ip -n gw addr add "$HOTSPOT_GATEWAY/28" dev gwhs0
  step cx ip -n gw link set gwhs0 up
  step cx ip addr add 172.20.10.2/28 dev hs0
  step cx ip link set hs0 up
  step cx ip route del default via "$GATEWAY" dev eth0
  step cx ip route add default via "$HOTSPOT_GATEWAY" dev hs0
  if wait_until 5 reachctl_expensive_is hs0 "yes (hotspot address plan)"; then
    pass "hs0 172.20.10.2/28, default via $HOTSPOT_GATEWAY: reachctl says Expensive: yes (hotspot address plan)" "reachctl: $(reachd_status_lines)"
  else
    fail "hs0 172.20.10.2/28, default via $HOTSPOT_GATEWAY: reachctl says Expensive: yes (hotspot address plan)" \
      "reachctl: $(as_nobody reachctl status 2>&1 | grep -E '^(Status|Primary|Expensive):' | tr -s ' ' | tr '\n' ' '); $(as_nobody reachctl interfaces 2>&1 | grep '^hs0')"
  fi
  reachctl_views hs0 "iPhone hotspot address plan"
  if wait_until 10 pk_network_state_is 5; then
    pass "hotspot address plan → PackageKit's NetworkState 5 (mobile), through the module" "packagekitd MainPID $pid, now $(pk_pid)"
  else
    fail "hotspot address plan → PackageKit's NetworkState 5 (mobile), through the module" "NetworkState: $(pk_network_state 2>&1); reachctl: $(reachd_status_lines)"
  fi
  # The heuristic is switchable: off, the same network is not expensive.
  step cx cp "$conf" /var/tmp/reachd.toml.hotspot
  step cx sed -i 's/^#hotspot-address-plan = true$/hotspot-address-plan = false/' "$conf"
  expect_ok "systemctl reload reachd (hotspot-address-plan = false) exits 0" cx systemctl reload reachd.service
  if wait_until 5 reachctl_expensive_is hs0 no && wait_until 10 pk_network_state_is 2; then
    pass "hotspot-address-plan = false → Expensive: no, NetworkState 2 (online)" "reachctl: $(reachd_status_lines)"
  else
    fail "hotspot-address-plan = false → Expensive: no, NetworkState 2 (online)" "NetworkState: $(pk_network_state 2>&1); reachctl: $(reachd_status_lines)"
  fi
  step cx cp /var/tmp/reachd.toml.hotspot "$conf"
  step cx systemctl reload reachd.service
  # Back to the suite's network.
  step cx ip link del hs0
  step cx ip route add default via "$GATEWAY" dev eth0
  if wait_until 5 status_is satisfied && reachctl_expensive_is eth0 no; then
    pass "hs0 gone: satisfied over eth0, not expensive" "reachctl: $(reachd_status_lines)"
  else
    fail "hs0 gone: satisfied over eth0, not expensive" "reachctl: $(reachd_status_lines)"
  fi
  step cx systemctl stop packagekit.service
}

# 3. A route change in the container's network is seen: default route deleted →
# unsatisfied (and systemd's STATUS follows), added back → satisfied.
check_route_change() {
  if status_is satisfied; then pass "path satisfied with eth0's default route" "$(as_nobody reachctl status | grep -E '^(Status|Primary|Gateways):')"; else fail "path satisfied with eth0's default route" "$(as_nobody reachctl status 2>&1)"; fi
  local t0
  t0=$(now_ms)
  step cx ip route del default via "$GATEWAY" dev eth0
  if wait_until 5 status_is unsatisfied; then
    pass "default route deleted → unsatisfied (seen after $(($(now_ms) - t0)) ms)" "$(as_nobody reachctl status | grep -E '^(Status|Reason|Unsatisfied)')"
  else
    fail "default route deleted → unsatisfied" "$(as_nobody reachctl status 2>&1)"
  fi
  if wait_until 5 status_text_lacks "reachable via eth0"; then
    pass "systemd's STATUS follows the change" "$(cx systemctl show -P StatusText reachd.service)"
  else
    fail "systemd's STATUS follows the change" "$(cx systemctl show -P StatusText reachd.service)"
  fi
  t0=$(now_ms)
  step cx ip route add default via "$GATEWAY" dev eth0
  if wait_until 5 status_is satisfied; then
    pass "default route added back → satisfied (seen after $(($(now_ms) - t0)) ms)"
  else
    fail "default route added back → satisfied" "$(as_nobody reachctl status 2>&1)"
  fi
  # The packaged wait-online unit (reachctl wait) is done at once on a satisfied path.
  expect_ok "systemctl start reachd-wait-online.service returns (path satisfied)" \
    cx systemctl start reachd-wait-online.service
}

# 3b. reachd-dispatcher.service as shipped: installed, never enabled, verify-clean, with an
# empty root-owned hook directory; started, it runs a hook (root's, 0755) for the state at
# start and for a real deletion of the default route, under the unit's own hardening, with
# the change in the hook's environment and the kernel agreeing when the hook ran.
dispatcher_record() {
  local file
  file=$(cx sh -c "grep -l '^REACHD_STATUS=$1\$' /run/reachd-hook/[0-9]* 2>/dev/null | tail -n 1") && [ -n "$file" ] && echo "$file"
}
check_dispatcher() {
  local dir=/etc/reachd/dispatcher.d record
  # is-enabled exits 1 for a disabled unit: the word is what counts.
  capture cx systemctl is-enabled reachd-dispatcher.service
  if [ "$OUT" = disabled ]; then pass "reachd-dispatcher.service is installed, not enabled" "$OUT"; else fail "reachd-dispatcher.service is installed, not enabled" "exit $RC: $OUT"; fi
  capture cx systemd-analyze verify reachd-dispatcher.service
  if [ "$RC" -eq 0 ] && [ -z "$OUT" ]; then pass "systemd-analyze verify reachd-dispatcher.service is clean"; else fail "systemd-analyze verify reachd-dispatcher.service is clean" "exit $RC: $OUT"; fi
  expect_match "$dir is root's, mode 755, empty" '^root:root 755 0$' cx sh -c "printf '%s ' \$(stat -c '%U:%G %a' $dir); ls -A $dir | wc -l"
  step cx mkdir -p /run/reachd-hook || return
  step cx sh -c "cat > $dir/10-record && chmod 0755 $dir/10-record" <<'HOOK' || return
#!/bin/sh
{ env | LC_ALL=C sort; echo "KERNEL_DEFAULT=$(ip route show default)"; } > "/run/reachd-hook/.$REACHD_SEQUENCE"
mv "/run/reachd-hook/.$REACHD_SEQUENCE" "/run/reachd-hook/$REACHD_SEQUENCE"
HOOK
  # World-writable: never run, a warning in the journal instead.
  step cx sh -c "printf '#!/bin/sh\ntouch /run/reachd-hook/unsafe-ran\n' > $dir/20-unsafe && chmod 0777 $dir/20-unsafe" || return
  expect_ok "systemctl start reachd-dispatcher.service" cx systemctl start reachd-dispatcher.service
  if wait_until 10 dispatcher_record satisfied; then
    pass "the hook ran for the state at start" "$(cx cat "$(dispatcher_record satisfied)" | grep -E '^REACHD_(EVENT|STATUS|PRIMARY|GATEWAYS)=')"
  else
    fail "the hook ran for the state at start" "$(journal -u reachd-dispatcher.service | tail -n 20)"
  fi
  step cx ip route del default via "$GATEWAY" dev eth0
  if wait_until 10 dispatcher_record unsatisfied; then
    record=$(cx cat "$(dispatcher_record unsatisfied)")
    if grep -qx 'KERNEL_DEFAULT=' <<<"$record" && grep -qx 'REACHD_EVENT=change' <<<"$record" && ! grep -q '^INVOCATION_ID=' <<<"$record"; then
      pass "default route deleted → the hook ran with the change, the kernel agreeing" "$(grep -E '^(REACHD_|KERNEL_|PATH=)' <<<"$record")"
    else
      fail "default route deleted → the hook ran with the change, the kernel agreeing" "$record"
    fi
  else
    fail "default route deleted → the hook ran" "$(journal -u reachd-dispatcher.service | tail -n 20)"
  fi
  step cx ip route add default via "$GATEWAY" dev eth0
  if journal_has '10-record exited with status 0' -u reachd-dispatcher.service; then
    pass "the hook's runs are in the unit's journal" "$(journal -u reachd-dispatcher.service -o cat | grep 'reachctl dispatch' | tail -n 4)"
  else
    fail "the hook's runs are in the unit's journal" "$(journal -u reachd-dispatcher.service | tail -n 20)"
  fi
  if journal_has "skipping $dir/20-unsafe: writable by group or others \\(mode 0777\\)" -u reachd-dispatcher.service -p warning \
    && ! cx test -e /run/reachd-hook/unsafe-ran; then
    pass "a world-writable hook is skipped, with a warning in the journal (-p warning)" "$(journal -u reachd-dispatcher.service -p warning -o cat | grep 20-unsafe | tail -n 1)"
  else
    fail "a world-writable hook is skipped, with a warning in the journal (-p warning)" "$(journal -u reachd-dispatcher.service | tail -n 20)"
  fi
  expect_ok "systemctl stop reachd-dispatcher.service" cx systemctl stop reachd-dispatcher.service
  step cx rm -rf "$dir/10-record" "$dir/20-unsafe" /run/reachd-hook
}

# 4. systemctl reload: a good configuration is in force when the command returns (no
# sleep in between); a bad one makes it fail while reachd keeps running on the old one.
check_reload() {
  local conf=/etc/reachd/reachd.toml pid invocation
  step cx cp "$conf" /var/tmp/reachd.toml.orig
  pid=$(main_pid)
  invocation=$(cx systemctl show -P InvocationID reachd.service)
  # Good: ignore eth0, the only interface with a default route.
  step cx bash -c "printf '[interfaces]\nignore = [\"eth0\"]\n' >$conf"
  expect_ok "systemctl reload reachd (good config: ignore eth0) exits 0" cx systemctl reload reachd.service
  # ExecReload='s lines (this is the first reload of this run of reachd) and reachd's own.
  OUT=$(complaints "_SYSTEMD_INVOCATION_ID=$invocation")
  if [ -z "$OUT" ]; then pass "a good reload logs no failure"; else fail "a good reload logs no failure" "$OUT"; fi
  capture eth0_ignored
  if [ "$OUT" = yes ]; then pass "right after the reload returns, eth0 is ignored" "IGNORED: $OUT"; else fail "right after the reload returns, eth0 is ignored" "IGNORED: $OUT"; fi
  capture path_status
  if [ "$OUT" = unsatisfied ]; then pass "right after the reload returns, the path is unsatisfied" "Status: $OUT"; else fail "right after the reload returns, the path is unsatisfied" "Status: $OUT"; fi
  # Bad: a syntax error.
  step cx bash -c "printf '[interfaces\nignore = \n' >$conf"
  capture cx systemctl reload reachd.service
  if [ "$RC" -ne 0 ]; then pass "systemctl reload reachd (bad config) exits non-zero" "exit $RC: $OUT"; else fail "systemctl reload reachd (bad config) exits non-zero" "exit 0: $OUT"; fi
  if [ "$(service_state)" = active ] && [ "$(main_pid)" = "$pid" ]; then
    pass "reachd keeps running after the bad reload" "active, MainPID $pid"
  else
    fail "reachd keeps running after the bad reload" "is-active: $(service_state), MainPID $(main_pid) (was $pid)"
  fi
  capture eth0_ignored
  if [ "$OUT" = yes ]; then pass "reachd still answers with the old configuration (eth0 ignored)" "IGNORED: $OUT"; else fail "reachd still answers with the old configuration (eth0 ignored)" "IGNORED: $OUT"; fi
  expect_journal "the journal says why the reload was refused" 'refused|error|invalid' "_PID=$pid"
  expect_match "systemctl status shows the failed reload" 'reload failed' cx systemctl show -P StatusText reachd.service
  # Back to the packaged configuration.
  step cx cp /var/tmp/reachd.toml.orig "$conf"
  expect_ok "systemctl reload reachd (packaged config again) exits 0" cx systemctl reload reachd.service
  capture path_status
  if [ "$OUT" = satisfied ]; then pass "right after that reload, the path is satisfied again" "Status: $OUT"; else fail "right after that reload, the path is satisfied again" "Status: $OUT"; fi
}

# 4b. [targets] watch, added by a reload: the target's answer is one structured journal
# entry with its own MESSAGE_ID (explained by the catalog), and reachctl status lists it.
watched_target_logged() {
  cx journalctl --sync || true
  cx journalctl -u reachd.service "MESSAGE_ID=$1" -o json --no-pager | grep -q '"REACHD_TARGET":"10.77.0.1"'
}
check_watched_target() {
  local conf=/etc/reachd/reachd.toml id=5b56d3b318164b7489dc12ed7d702f78
  step cx cp "$conf" /var/tmp/reachd.toml.targets
  # The packaged file's [targets] table, its watch uncommented.
  step cx sed -i "s/^#watch = \\[\\]\$/watch = [\"$GATEWAY\"]/" "$conf"
  expect_ok "systemctl reload reachd ([targets] watch = [\"$GATEWAY\"]) exits 0" cx systemctl reload reachd.service
  if wait_until 5 watched_target_logged "$id"; then
    capture cx journalctl -u reachd.service "MESSAGE_ID=$id" -o json --no-pager
    if grep -q '"REACHD_TARGET_STATUS":"satisfied"' <<<"$OUT" && grep -q '"REACHD_TARGET_INTERFACE":"eth0"' <<<"$OUT"; then
      pass "journalctl MESSAGE_ID=$id: the watched target's entry, with REACHD_TARGET_* fields" \
        "$(grep -o '"\(MESSAGE\|REACHD_TARGET[A-Z_]*\)":"[^"]*"' <<<"$OUT" | tr '\n' ' ' | head -c 400)"
    else
      fail "journalctl MESSAGE_ID=$id: the watched target's entry, with REACHD_TARGET_* fields" "$(head -c 2000 <<<"$OUT")"
    fi
  else
    fail "journalctl MESSAGE_ID=$id: the watched target's entry within 5 s" "$(journal -u reachd.service | tail -20)"
  fi
  expect_match "journalctl -x explains it (the installed catalog)" "Subject: Watched target $GATEWAY: satisfied" \
    cx journalctl -x -u reachd.service "MESSAGE_ID=$id" -n 1 --no-pager
  expect_match "reachctl status lists the watched target" "^Targets: +$GATEWAY: satisfied via eth0" as_nobody reachctl status --timeout 5
  step cx cp /var/tmp/reachd.toml.targets "$conf"
  expect_ok "systemctl reload reachd (packaged config again) exits 0" cx systemctl reload reachd.service
  capture as_nobody reachctl status --timeout 5
  if ! grep -q '^Targets:' <<<"$OUT"; then pass "after that reload, no target is listed"; else fail "after that reload, no target is listed" "$OUT"; fi
}

# 5. Watchdog: a stopped reachd is killed and restarted by systemd; a client that calls
# during the outage is answered by the next reachd (the socket stays with systemd).
check_watchdog() {
  local dropin=/etc/systemd/system/reachd.service.d/test-watchdog.conf pid restarts t0 client
  step cx mkdir -p "$(dirname "$dropin")"
  step cx bash -c "printf '[Service]\nWatchdogSec=3s\n' >$dropin"
  step cx systemctl daemon-reload
  step cx systemctl restart reachd.service
  pid=$(main_pid)
  restarts=$(cx systemctl show -P NRestarts reachd.service)
  t0=$(now_ms)
  step cx bash -c "kill -STOP $pid"
  client="$BUILD_DIR/$SUITE/watchdog-client.out"
  as_nobody reachctl status --timeout 30 >"$client" 2>&1 &
  local client_pid=$!
  if wait_until 20 restarted_from "$pid"; then
    pass "SIGSTOP'd reachd (pid $pid) was killed and restarted (WatchdogSec=3s)" "new MainPID $(main_pid) after $(($(now_ms) - t0)) ms; NRestarts $restarts → $(cx systemctl show -P NRestarts reachd.service)"
  else
    fail "SIGSTOP'd reachd (pid $pid) was killed and restarted" "MainPID $(main_pid), $(service_state)"
  fi
  if wait "$client_pid" && grep -q '^Status:' "$client"; then
    pass "a non-root call made during the outage was answered" "after $(($(now_ms) - t0)) ms: $(grep '^Status:' "$client")"
  else
    fail "a non-root call made during the outage was answered" "$(cat "$client")"
  fi
  expect_match "the journal shows the watchdog timeout" '[Ww]atchdog timeout' \
    cx journalctl -u reachd.service --no-pager -o cat -n 30
  # Back to the unit's own WatchdogSec= at reachd's next start. The failure provoked here
  # and its restarts count towards StartLimitBurst=: forget them, or the next checks'
  # starts could hit the start limit (which also fails reachd.socket).
  step cx rm -f "$dropin"
  step cx systemctl daemon-reload
  step cx systemctl reset-failed reachd.service
}

# 6. The sandbox is enforced: IPAddressDeny= (BPF, needs nspawn's --system-call-filter=bpf)
# and the system-call filter.
check_sandbox() {
  local pid cgroup deny
  pid=$(main_pid)
  deny=$(cx systemctl show -P IPAddressDeny reachd.service)
  if [ -n "$deny" ]; then pass "reachd.service has IPAddressDeny=" "$deny"; else fail "reachd.service has IPAddressDeny=" "empty"; fi
  # A UDP datagram to the gateway (inside our namespaces) goes out from a plain process…
  local probe="echo probe >/dev/udp/$GATEWAY/9"
  expect_ok "control: a plain process may send to $GATEWAY" nsenter -t "$LEADER" -n bash -c "$probe"
  # …and is refused from inside reachd's own cgroup, where its BPF firewall sits.
  cgroup=$(reachd_cgroup "$pid")
  capture nsenter -t "$LEADER" -n bash -c "echo \$\$ >$cgroup/cgroup.procs && $probe"
  if [ "$RC" -ne 0 ] && grep -q 'Operation not permitted' <<<"$OUT"; then
    pass "a process in reachd's cgroup may not send (IPAddressDeny enforced)" "$OUT"
  else
    fail "a process in reachd's cgroup may not send (IPAddressDeny enforced)" "cgroup $cgroup, exit $RC: $OUT"
  fi
  capture cx systemd-run --wait -P -q -p IPAddressDeny=any bash -c "$probe"
  if [ "$RC" -ne 0 ] && grep -q 'Operation not permitted' <<<"$OUT"; then
    pass "systemd-run -p IPAddressDeny=any: sending is refused" "$OUT"
  else
    fail "systemd-run -p IPAddressDeny=any: sending is refused" "exit $RC: $OUT"
  fi
  # Seccomp mode 2 (filter) on reachd itself.
  expect_match "reachd runs under a seccomp filter" '^Seccomp:[[:space:]]+2$' cx grep '^Seccomp:' "/proc/$pid/status"
  # reachd's own SystemCallFilter= lines, as the unit has them, on a probe run as root (so
  # only the filter can refuse it): a call from a denied group fails with EPERM, and works
  # without the filter.
  local props=() line
  while read -r line; do props+=(-p "$line"); done < <(cx systemctl cat reachd.service | grep -E '^SystemCall(Filter|ErrorNumber|Architectures)=')
  local denied probed=0
  denied=$(printf '%s\n' "${props[@]}" | sed -n 's/^SystemCallFilter=~//p')
  # "$$$$": systemd expands "$$" in a command line to "$", so bash gets "$$".
  probe_syscall @privileged 'chroot(2)' "chroot / true"
  probe_syscall @resources 'setpriority(2)' 'renice -n 5 -p $$$$'
  [ "$probed" -gt 0 ] || fail "reachd's SystemCallFilter denies @privileged or @resources" "deny list: $denied"
}

# 6b. The TCP stall check under the shipped sandbox (its own user, no capabilities,
# PrivateUsers): sock_diag answers reachd there. Connections to three of the gateway's
# networks (a stall needs three destinations), whose answers the gateway blackholes, retry
# their SYN with nothing back → eth0's connectivity is limited (dataStall); once they are
# gone it clears. Reads run only while someone listens.
eth0_stalled() { as_nobody reachctl interfaces --timeout 5 | awk '$2 == "eth0"' | grep -q dataStall; }
eth0_not_stalled() { ! eth0_stalled; }
# cx_kill_matching TEXT: kills the container's processes whose command line holds TEXT
# (minbase has no pkill).
cx_kill_matching() {
  cx bash -c "for p in /proc/[0-9]*; do tr '\\0' ' ' 2>/dev/null <\$p/cmdline | grep -qF -- '$1' && [ \${p#/proc/} != \$\$ ] && kill \${p#/proc/} 2>/dev/null; done; true"
}
check_stall_watch() {
  local conf=/etc/reachd/reachd.toml invocation t0
  step cx cp "$conf" /var/tmp/reachd.toml.stall
  step cx bash -c "printf '[stall]\npoll-interval = 1\n' >$conf"
  step cx systemctl restart reachd.service
  step cx bash -c 'runuser -u nobody -- timeout 40 reachctl watch >/dev/null 2>&1 &'
  invocation=$(cx systemctl show -P InvocationID reachd.service)
  step cx ip netns exec gw bash -c 'echo 0 >/proc/sys/net/ipv4/conf/all/rp_filter; echo 0 >/proc/sys/net/ipv4/conf/gw0/rp_filter'
  step cx ip -n gw route add blackhole 10.77.0.2/32
  step cx ip -n gw addr add 10.78.0.1/32 dev gw0
  step cx ip -n gw addr add 10.79.0.1/32 dev gw0
  t0=$(now_ms)
  step cx bash -c "for d in $GATEWAY 10.78.0.1 10.79.0.1; do timeout 30 bash -c \"exec 3<>/dev/tcp/\$d/9\" >/dev/null 2>&1 & done"
  if wait_until 20 eth0_stalled; then
    pass "under the shipped sandbox, reachd reads the TCP sockets: SYNs unanswered → dataStall (after $(($(now_ms) - t0)) ms)" \
      "$(as_nobody reachctl status | grep -E '^(Status|Connectivity):')"
  else
    fail "under the shipped sandbox, reachd reads the TCP sockets: SYNs unanswered → dataStall" \
      "$(as_nobody reachctl interfaces 2>&1; journal "_SYSTEMD_INVOCATION_ID=$invocation" | tail -5)"
  fi
  cx_kill_matching 'dev/tcp'
  step cx ip -n gw route del blackhole 10.77.0.2/32
  step cx ip -n gw addr del 10.78.0.1/32 dev gw0
  step cx ip -n gw addr del 10.79.0.1/32 dev gw0
  if wait_until 10 eth0_not_stalled; then
    pass "the connections gone, the stall clears" "$(as_nobody reachctl status | grep -E '^Connectivity:')"
  else
    fail "the connections gone, the stall clears" "$(as_nobody reachctl interfaces 2>&1)"
  fi
  OUT=$(journal "_SYSTEMD_INVOCATION_ID=$invocation" | grep -F 'cannot read the TCP sockets' || true)
  if [ -z "$OUT" ]; then pass "no refused sock_diag read in reachd's journal"; else fail "no refused sock_diag read in reachd's journal" "$OUT"; fi
  cx_kill_matching 'reachctl watch'
  step cx cp /var/tmp/reachd.toml.stall "$conf"
  step cx systemctl restart reachd.service
}

# reachd's sleep inhibitor in `systemd-inhibit --list` (who reachd, what sleep, mode delay).
reachd_inhibits() { cx systemd-inhibit --list --no-pager --no-legend | grep -E '^ *reachd .*sleep.*delay *$'; }
# 6c sleep inhibitor: logind asks polkit whether a system user may delay sleep. Without
# polkit only root may: reachd says so once, as information, and holds none (and nothing
# in its journal reads as a failure: the reload check relies on that). With polkitd
# installed, the package's 50-reachd.rules lets reachd take its delay inhibitor.
check_sleep_inhibitor() {
  local invocation
  step cx systemctl restart reachd.service
  invocation=$(cx systemctl show -P InvocationID reachd.service)
  expect_journal "without polkit: reachd says logind's policy gives it no delay inhibitor" \
    "gives reachd no delay inhibitor" "_SYSTEMD_INVOCATION_ID=$invocation"
  if reachd_inhibits >/dev/null; then fail "without polkit: reachd holds no inhibitor" "$(cx systemd-inhibit --list --no-pager)"
  else pass "without polkit: reachd holds no inhibitor" "$(cx systemd-inhibit --list --no-pager 2>&1)"; fi
  OUT=$(complaints "_SYSTEMD_INVOCATION_ID=$invocation")
  if [ -z "$OUT" ]; then pass "without polkit: no failure in reachd's journal"; else fail "without polkit: no failure in reachd's journal" "$OUT"; fi
  expect_ok "the package ships 50-reachd.rules" cx test -f /usr/share/polkit-1/rules.d/50-reachd.rules
  apt_install polkitd || return
  step cx systemctl restart reachd.service
  if wait_until 10 reachd_inhibits; then
    pass "with polkitd and 50-reachd.rules: reachd holds a delay inhibitor for sleep" "$(reachd_inhibits)"
  else
    fail "with polkitd and 50-reachd.rules: reachd holds a delay inhibitor for sleep" \
      "$(cx systemd-inhibit --list --no-pager 2>&1; journal "_SYSTEMD_UNIT=reachd.service" | tail -5)"
  fi
}

# probe_syscall GROUP CALL COMMAND: when reachd's filter denies GROUP, COMMAND (making
# CALL) fails with EPERM under it and succeeds without it. Uses props/denied/probed.
probe_syscall() {
  grep -qw -- "$1" <<<"$denied" || return 0
  probed=$((probed + 1))
  capture cx systemd-run --wait -P -q "${props[@]}" bash -c "$3"
  if [ "$RC" -ne 0 ] && grep -q 'Operation not permitted' <<<"$OUT"; then
    pass "with reachd's SystemCallFilter, $2 ($1) fails with EPERM" "$OUT"
  else
    fail "with reachd's SystemCallFilter, $2 ($1) fails with EPERM" "${props[*]}: exit $RC: $OUT"
  fi
  expect_ok "control: without the filter, $2 works" cx systemd-run --wait -P -q bash -c "$3"
}

# reachd_cgroup PID: the host path of PID's cgroup2 directory inside the container.
reachd_cgroup() {
  local path
  path=$(cx cat "/proc/$1/cgroup" | sed -n 's/^0:://p')
  echo "${CGROUPS[0]}/payload$path"
}

# 6d. reachd-nm (docs/networkmanager.md): NetworkManager's answer on a host without it, read
# by Debian's own nmcli, nm-online and libnm (NM.Client, as nobody), and as snapd and
# unattended-upgrades 2.13 read Metered (Properties.Get, no auto-start, 2 s), through a
# carrier loss, a captive portal, DHCP option 43 and a phone's hotspot on veths to gw. NetworkManager is installed but masked
# (check_networkmanager ran it); started, it takes its name back.
NA_GATEWAY=10.90.0.1
NM_METERED_READ=(busctl --system --auto-start=no --timeout=2 get-property org.freedesktop.NetworkManager
  /org/freedesktop/NetworkManager org.freedesktop.NetworkManager Metered)
NM_CLIENT_STATE='import gi
gi.require_version("NM", "1.0")
from gi.repository import NM
c = NM.Client.new(None)
p = c.get_primary_connection()
print("NM.Client running=%s state=%s connectivity=%s metered=%s primary=%s" % (c.get_nm_running(), c.get_state().value_nick,
      c.get_connectivity().value_nick, c.get_metered().value_nick, p.get_connection_type() if p else None))'
# STATE,CONNECTIVITY: bookworm's nmcli (1.42) has no METERED in `general`; the device's is read instead.
nm_general() { as_nobody nmcli -t -f STATE,CONNECTIVITY general 2>/dev/null; }
nm_general_is() { [ "$(nm_general)" = "$1" ]; }
nm_device_metered() { as_nobody nmcli -t -f GENERAL.METERED device show "${1:-na0}" 2>/dev/null; }
unit_state() { cx systemctl show -p ActiveState --value "$1"; }
metered_read_is() { [ "$(cx "${NM_METERED_READ[@]}" 2>/dev/null)" = "$1" ]; }
# reachd's probe meets a captive portal in gw (probe_server.py, 302), then the portal lets
# it through (204) and `nmcli networking connectivity check` (CheckConnectivity) asks again.
check_nm_answer_portal() {
  local conf=/etc/reachd/reachd.toml dropin=/etc/systemd/system/reachd.service.d/nm-answer-probe.conf run=/run/reachd-nm-portal
  step cx mkdir -p "$run" "$(dirname "$dropin")" || return
  step cx sh -c "echo '{\"http\": \"redirect\"}' >$run/captive.json"
  step cx sh -c "ip netns exec gw python3 $SHARE/probe_server.py $run/captive.json >$run/captive.out 2>&1 & echo \$! >$run/captive.pid"
  wait_until 5 cx grep -q ready "$run/captive.out" || fail "the captive portal listens in gw" "$(cx cat "$run/captive.out")"
  step cx cp "$conf" /var/tmp/reachd.toml.nm
  step cx sed -i "s|^\\[probe\\]\$|[probe]\\nurl = \"http://$NA_GATEWAY/generate_204\"\\nfamilies = [\"ipv4\"]\\nmaximum-delay = 2|" "$conf"
  step cx sh -c "printf '[Service]\\nIPAddressAllow=$NA_GATEWAY\\n' >$dropin"
  step cx systemctl daemon-reload
  step cx systemctl restart reachd.service
  if wait_until 20 nm_general_is "connected (site only):portal"; then
    pass "portal: nmcli says connected (site only), portal" "$(as_nobody nmcli general 2>&1)"
  else
    fail "portal: nmcli says connected (site only), portal" "$(as_nobody nmcli general 2>&1); reachctl: $(reachd_status_lines)"
  fi
  expect_match "portal: NM.Client says connected-site, portal" 'state=connected-site connectivity=portal' as_nobody python3 -c "$NM_CLIENT_STATE"
  capture as_nobody nm-online -q -t 2
  if [ "$RC" -eq 0 ]; then pass "portal: nm-online -q exits 0 (site: online as NetworkManager counts it)"; else fail "portal: nm-online -q exits 0" "exit $RC"; fi
  step cx sh -c "echo '{\"http\": \"204\"}' >$run/captive.json"
  expect_match "the portal lets it through: nmcli networking connectivity check (CheckConnectivity) says full" '^full$' \
    as_nobody nmcli networking connectivity check
  expect_match "…and nmcli general says connected, full" '^connected:full$' nm_general
  cx sh -c "p=\$(cat $run/captive.pid); kill \$p; while kill -0 \$p 2>/dev/null; do sleep 0.1; done" || true
  step cx cp /var/tmp/reachd.toml.nm "$conf"
  step cx rm -rf "$dropin" "$run"
  step cx systemctl daemon-reload
  step cx systemctl restart reachd.service
  wait_until 10 nm_general_is "connected:unknown" || fail "probes off again: nmcli connected, connectivity unknown" "$(as_nobody nmcli general 2>&1)"
}

# DHCP option 43 ANDROID_METERED (Android's hotspot and USB tethering) on dh0, networkd its
# client and dnsmasq in gw as in check_networkd_dhcp: GUESS_YES, as NetworkManager says of
# it; a lease without the option: NO.
check_nm_answer_dhcp43() {
  if ! cx dpkg -s dnsmasq-base >/dev/null 2>&1; then apt_install dnsmasq-base || return; fi
  step cx ip route del default via "$NA_GATEWAY" dev na0
  start_dh0 --dhcp-option-force=43,ANDROID_METERED || return
  if wait_until 15 metered_read_is "u 3"; then
    pass "DHCP option 43: the snapd / unattended-upgrades read says GUESS_YES (3)" "lease: $(dh0_lease_lines); reachctl: $(reachd_status_lines)"
  else
    fail "DHCP option 43: the snapd / unattended-upgrades read says GUESS_YES (3)" "$(cx "${NM_METERED_READ[@]}" 2>&1); lease: $(dh0_lease_lines); reachctl: $(reachd_status_lines)"
  fi
  expect_match "DHCP option 43: nmcli device show dh0 says metered (guessed)" '^GENERAL\.METERED:yes \(guessed\)$' nm_device_metered dh0
  if [ "$SUITE" != bookworm ]; then
    expect_match "DHCP option 43: nmcli general says metered (guessed)" '^connected:unknown:yes \(guessed\)$' as_nobody nmcli -t -f STATE,CONNECTIVITY,METERED general
  fi
  expect_match "DHCP option 43: NM.Client says guess-yes" 'metered=guess-yes' as_nobody python3 -c "$NM_CLIENT_STATE"
  serve_dhcp
  step cx networkctl reconfigure dh0
  if wait_until 15 metered_read_is "u 2"; then
    pass "a lease without option 43: Metered NO (2) again" "lease: $(dh0_lease_lines)"
  else
    fail "a lease without option 43: Metered NO (2) again" "$(cx "${NM_METERED_READ[@]}" 2>&1); lease: $(dh0_lease_lines); reachctl: $(reachd_status_lines)"
  fi
  expect_match "a lease without option 43: nmcli device show dh0 says not metered" '^GENERAL\.METERED:no$' nm_device_metered dh0
  stop_dh0
  step cx ip route add default via "$NA_GATEWAY" dev na0
  wait_until 10 nm_general_is "connected:unknown" || fail "dh0 gone: nmcli connected over na0 again" "$(as_nobody nmcli general 2>&1)"
}

check_nm_answer() {
  local deb before_read before_nmcli
  deb=$(basename "$NM_DEB")
  if ! cx dpkg -s network-manager >/dev/null 2>&1; then apt_install network-manager || return; fi
  step cx systemctl stop NetworkManager.service
  step cx systemctl mask NetworkManager.service
  step cx ip link add na0 type veth peer name gwna0 netns gw || return
  step cx ip -n gw addr add "$NA_GATEWAY/24" dev gwna0
  step cx ip -n gw link set gwna0 up
  step cx ip addr add 10.90.0.2/24 dev na0
  step cx ip link set na0 up
  step cx ip route del default via "$GATEWAY" dev eth0
  step cx ip route add default via "$NA_GATEWAY" dev na0
  # Before: nobody answers for NetworkManager.
  before_read=$(cx "${NM_METERED_READ[@]}" 2>&1)
  before_nmcli=$(as_nobody nmcli -t -f STATE,CONNECTIVITY general 2>&1)
  if ! metered_read_is "u 2" && [[ $before_nmcli == *"not running"* ]]; then
    pass "before reachd-nm: no answer" "Metered read: $before_read; nmcli general: $before_nmcli"
  else
    fail "before reachd-nm: no answer" "Metered read: $before_read; nmcli general: $before_nmcli"
  fi
  capture cx bash -c "cd $SHARE && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ./$deb gir1.2-nm-1.0 python3-gi"
  if [ "$RC" -eq 0 ]; then pass "apt-get install ./$deb gir1.2-nm-1.0 python3-gi" "$(grep -E '^Setting up (reachd-nm|gir1.2-nm)' <<<"$OUT")"; else fail "apt-get install ./$deb gir1.2-nm-1.0 python3-gi" "exit $RC: $OUT"; return; fi
  if wait_until 10 cx systemctl is-active --quiet reachd-nm.service; then
    pass "reachd-nm.service is active (its postinst started it; NetworkManager masked)" "$(cx systemctl show -p MainPID -p User reachd-nm.service | tr '\n' ' ')"
  else
    fail "reachd-nm.service is active (its postinst started it; NetworkManager masked)" "$(cx systemctl status reachd-nm.service --no-pager 2>&1 | tail -15)"
  fi
  if wait_until 10 nm_general_is "connected:unknown"; then
    pass "nmcli general (nobody): connected, connectivity unknown (no probes)" "$(as_nobody nmcli general 2>&1)"
  else
    fail "nmcli general (nobody): connected, connectivity unknown (no probes)" "$(as_nobody nmcli general 2>&1)"
  fi
  expect_match "nmcli device show na0 (nobody): not metered" '^GENERAL\.METERED:no$' nm_device_metered
  if [ "$SUITE" != bookworm ]; then
    expect_match "nmcli -t -f STATE,CONNECTIVITY,METERED general (nobody)" '^connected:unknown:no$' as_nobody nmcli -t -f STATE,CONNECTIVITY,METERED general
  fi
  expect_match "snapd / unattended-upgrades read: Metered NO (2) on a plain network" '^u 2$' cx "${NM_METERED_READ[@]}"
  expect_ok "nm-online -q (nobody) exits 0" as_nobody nm-online -q -t 5
  expect_match "libnm NM.Client (nobody) reads the same" '^NM.Client running=True state=connected-global connectivity=unknown metered=no primary=802-3-ethernet$' \
    as_nobody python3 -c "$NM_CLIENT_STATE"
  local start_ms
  start_ms=$(now_ms)
  capture as_nobody nmcli connection up x
  if [ "$RC" -ne 0 ] && [ $(($(now_ms) - start_ms)) -lt 2000 ]; then
    pass "nmcli connection up x fails at once (exit $RC, $(($(now_ms) - start_ms)) ms)" "$OUT"
  else
    fail "nmcli connection up x fails at once" "exit $RC after $(($(now_ms) - start_ms)) ms: $OUT"
  fi
  capture as_nobody nmcli networking off
  if [ "$RC" -ne 0 ]; then pass "nmcli networking off is refused" "exit $RC: $OUT"; else fail "nmcli networking off is refused" "exit $RC: $OUT"; fi
  # A carrier loss.
  step cx ip -n gw link set gwna0 down
  if wait_until 10 nm_general_is "disconnected:none"; then
    pass "carrier lost: nmcli says disconnected" "$(as_nobody nmcli general 2>&1)"
  else
    fail "carrier lost: nmcli says disconnected" "$(as_nobody nmcli general 2>&1); reachctl: $(reachd_status_lines)"
  fi
  capture as_nobody nm-online -q -t 2
  if [ "$RC" -ne 0 ]; then pass "carrier lost: nm-online -q -t 2 fails (exit $RC)"; else fail "carrier lost: nm-online -q -t 2 fails" "exit 0"; fi
  step cx ip -n gw link set gwna0 up
  wait_until 10 nm_general_is "connected:unknown" || fail "carrier back: nmcli connected again" "$(as_nobody nmcli general 2>&1)"
  check_nm_answer_portal
  check_nm_answer_dhcp43
  # A phone's hotspot (its address plan): metered, guessed.
  step cx ip route del default via "$NA_GATEWAY" dev na0
  step cx ip addr flush dev na0
  step cx ip -n gw addr flush dev gwna0
  step cx ip -n gw addr add "$HOTSPOT_GATEWAY/28" dev gwna0
  step cx ip addr add 172.20.10.2/28 dev na0
  step cx ip route add default via "$HOTSPOT_GATEWAY" dev na0
  if wait_until 10 metered_read_is "u 3"; then
    pass "hotspot: the snapd / unattended-upgrades read says GUESS_YES (3): held back" "$(cx "${NM_METERED_READ[@]}"); reachctl: $(reachd_status_lines)"
  else
    fail "hotspot: the snapd / unattended-upgrades read says GUESS_YES (3): held back" "$(cx "${NM_METERED_READ[@]}" 2>&1); reachctl: $(reachd_status_lines)"
  fi
  expect_match "hotspot: nmcli device show na0 says metered (guessed)" '^GENERAL\.METERED:yes \(guessed\)$' nm_device_metered
  if [ "$SUITE" != bookworm ]; then
    expect_match "hotspot: nmcli general says metered (guessed)" '^connected:unknown:yes \(guessed\)$' as_nobody nmcli -t -f STATE,CONNECTIVITY,METERED general
  fi
  expect_match "hotspot: NM.Client says guess-yes" 'metered=guess-yes' as_nobody python3 -c "$NM_CLIENT_STATE"
  # NetworkManager comes: it takes its name (its drop-in stops reachd-nm first), and reachd-nm will not start beside it.
  step cx systemctl unmask NetworkManager.service
  expect_ok "systemctl start NetworkManager (reachd-nm running)" cx systemctl start NetworkManager.service
  expect_match "reachd-nm stood aside" '^inactive$' unit_state reachd-nm.service
  capture cx systemctl start reachd-nm.service
  if cx systemctl is-active --quiet NetworkManager.service && ! cx systemctl is-active --quiet reachd-nm.service \
    && cx journalctl -u reachd-nm.service --no-pager -n 20 | grep -q 'NetworkManager.service is active'; then
    pass "reachd-nm does not start beside NetworkManager, and says why" "$(cx journalctl -u reachd-nm.service --no-pager -n 20 | grep 'not started')"
  else
    fail "reachd-nm does not start beside NetworkManager, and says why" "start: exit $RC $OUT; $(cx journalctl -u reachd-nm.service --no-pager -n 20)"
  fi
  # Back to the suite's network, without reachd-nm and NetworkManager.
  step cx systemctl stop NetworkManager.service
  capture cx env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q reachd-nm
  if [ "$RC" -eq 0 ] && ! cx test -e /usr/lib/systemd/system/NetworkManager.service.d/reachd-nm.conf; then
    pass "apt-get purge reachd-nm: its drop-in for NetworkManager is gone"
  else
    fail "apt-get purge reachd-nm" "exit $RC: $OUT"
  fi
  step cx ip link del na0
  step cx ip route add default via "$GATEWAY" dev eth0
}

# 7. systemctl stop: a clean exit with reachd's shutdown line; the socket stays and the
# next client activates reachd again.
check_stop() {
  local pid
  pid=$(main_pid)
  expect_ok "systemctl stop reachd" cx systemctl stop reachd.service
  capture cx systemctl show -p Result -p ExecMainCode -p ExecMainStatus reachd.service
  if grep -qx 'Result=success' <<<"$OUT" && grep -qx 'ExecMainStatus=0' <<<"$OUT"; then
    pass "clean exit: Result=success, ExecMainStatus=0" "$(tr '\n' ' ' <<<"$OUT")"
  else
    fail "clean exit: Result=success, ExecMainStatus=0" "$OUT"
  fi
  expect_journal "the journal has reachd's shutdown line" 'shut down' "_PID=$pid"
  # A clean stop complains about nothing (reachd's own lines and whatever its libraries
  # print to stderr or syslog all land in the journal).
  OUT=$(complaints "_PID=$pid")
  if [ -z "$OUT" ]; then pass "reachd (pid $pid) logged no failure, stop included"; else fail "reachd (pid $pid) logged no failure, stop included" "$OUT"; fi
  expect_match "reachd.socket still listens" '^active$' cx systemctl is-active reachd.socket
  expect_match "the next non-root call activates reachd again" '^Status:' as_nobody reachctl status
  local state
  state=$(service_state)
  if [ "$state" = active ]; then pass "reachd.service active again" "MainPID $(main_pid)"; else fail "reachd.service active again" "$state"; fi
}

# 8. apt-get purge removes binaries, units, configuration and the socket.
check_purge() {
  capture cx env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q reachd
  if [ "$RC" -eq 0 ]; then pass "apt-get purge reachd" "$(grep -v 'Reading database' <<<"$OUT" | tail -3)"; else fail "apt-get purge reachd" "exit $RC: $OUT"; fi
  local left
  left=$(cx bash -c 'ls -d /usr/bin/reachd /usr/bin/reachctl /usr/lib/systemd/system/reachd* /lib/systemd/system/reachd* \
    /etc/reachd /etc/systemd/system/*/reachd* '"$SOCKET"' 2>/dev/null' || true)
  if [ -z "$left" ]; then pass "binaries, units, /etc/reachd and the socket are gone"; else fail "binaries, units, /etc/reachd and the socket are gone" "left: $left"; fi
  local socket
  socket=$(cx systemctl is-active reachd.socket || true)
  if [ "$socket" != active ]; then pass "reachd.socket no longer listens" "is-active: $socket"; else fail "reachd.socket no longer listens" "is-active: $socket"; fi
  if cx bash -c 'grep -qx reachd /proc/[0-9]*/comm'; then fail "no reachd process left" "$(cx bash -c 'grep -lx reachd /proc/[0-9]*/comm')"; else pass "no reachd process left"; fi
}

# Trixie (systemd 257): systemd's own Varlink client against reachd, as nobody. Run in
# the container's PID namespace (cx), as the issue says systemd's tools want.
check_varlinkctl() {
  local version
  version=$(cx systemctl --version | head -1)
  capture as_nobody varlinkctl info "$SOCKET"
  if [ "$RC" -eq 0 ] && grep -q 'io\.reachd\.Reachability' <<<"$OUT"; then pass "varlinkctl info ($version)" "$OUT"; else fail "varlinkctl info ($version)" "exit $RC: $OUT"; fi
  capture as_nobody varlinkctl introspect "$SOCKET" io.reachd.Reachability
  echo "---- varlinkctl introspect $SOCKET io.reachd.Reachability (as nobody, $SUITE) ----"
  echo "$OUT"
  echo "----"
  if [ "$RC" -eq 0 ] && grep -q 'interface io.reachd.Reachability' <<<"$OUT" && grep -q 'method GetStatus' <<<"$OUT"; then
    pass "varlinkctl introspect io.reachd.Reachability" "$(grep -c '^method' <<<"$OUT") methods"
  else
    fail "varlinkctl introspect io.reachd.Reachability" "exit $RC"
  fi
  expect_match "varlinkctl call GetStatus" '"sequence"' \
    as_nobody varlinkctl call "$SOCKET" io.reachd.Reachability.GetStatus '{}'
  check_varlinkctl_subscribe
  capture cx varlinkctl validate-idl "$SHARE/io.reachd.Reachability.varlink"
  if [ "$RC" -eq 0 ]; then
    pass "varlinkctl validate-idl on the repo's IDL" "valid: $(grep -c '^method' <<<"$OUT") methods, $(grep -c '^type' <<<"$OUT") types, $(grep -c '^error' <<<"$OUT") errors"
  else
    fail "varlinkctl validate-idl on the repo's IDL" "exit $RC: $OUT"
  fi
}

# varlinkctl call --more Subscribe: the first reply at once, a second one on a change.
check_varlinkctl_subscribe() {
  local out="$BUILD_DIR/$SUITE/subscribe.out"
  # Emptied first: the background shell opens it only later, and a previous run's
  # replies must not count. The subscriber's pid is kept inside the container, to end it there.
  : >"$out"
  cx bash -c "echo \$\$ >/run/reachd-test-subscribe.pid; exec timeout 30 runuser -u nobody -- \
    varlinkctl call --more --json=short $SOCKET io.reachd.Reachability.Subscribe '{}'" >"$out" 2>&1 &
  local bg=$!
  if wait_until 5 replies_at_least 1 "$out"; then
    pass "varlinkctl call --more Subscribe: first reply at once" "$(head -c 300 "$out")…"
  else
    fail "varlinkctl call --more Subscribe: first reply at once" "$(cat "$out")"
  fi
  step cx ip route del default via "$GATEWAY" dev eth0
  if wait_until 5 replies_at_least 2 "$out"; then
    pass "varlinkctl call --more Subscribe: a second reply after the route change" "$(tail -1 "$out" | head -c 300)…"
  else
    fail "varlinkctl call --more Subscribe: a second reply after the route change" "$(cat "$out")"
  fi
  step cx ip route add default via "$GATEWAY" dev eth0
  cx bash -c 'kill "$(cat /run/reachd-test-subscribe.pid)"' || true
  wait "$bg" 2>/dev/null || true
}
