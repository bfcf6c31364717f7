# The Qt app's check of Tests/system/run (check_qt), after checks.sh, whose helpers it uses
# (cx, as_nobody, apt_install, eth0_expensive, maps_module, GIO_STATE …). Sourced, not run.
#
# Tests/Fixtures/qt_network.py (PyQt6, QCoreApplication) beside Tests/Fixtures/gio_monitor.py
# (PyGObject), both as nobody, both running through the whole check: each prints a line at
# start and one per change, with the state then, so an app's last line is its state now.
# Qt's glib backend reads g_network_monitor_get_default(), which is reachd's module here:
# GLib's LOCAL → Disconnected, LIMITED and PORTAL → Site (PORTAL also behind a captive
# portal), FULL → Online; network-available is not read; metered in Qt 6.8
# (notify::network-metered; Qt 6.4's libqglib.so has no Metered feature). bookworm's Qt
# 6.4 loads the backend by name (its loadDefaultBackend() knows only NetworkManager's);
# trixie's Qt 6.8 picks it itself (loadDefaultBackend(): NetworkManager's backend is not
# valid without NM running, so the one with the most features that has Reachability).
# Run before check_networkmanager: no NetworkManager yet.
QT_RUN=/run/reachd-qt
QT_PROBE_DROPIN=/etc/systemd/system/reachd.service.d/test-qt-probe.conf
# app_last qt|gio: the app's last line; app_is qt|gio REGEX: it matches.
app_last() { cx tail -n 1 "$QT_RUN/$1.out"; }
app_is() { app_last "$1" | grep -Eq -- "$2"; }
app_lines() { cx cat "$QT_RUN/$1.out" | wc -l; }
# apps_mark: both apps' line counts now; since_mark qt|gio: what the app printed since;
# none_since qt|gio REGEX: none of that matches.
apps_mark() { QT_MARK=$(app_lines qt) GIO_MARK=$(app_lines gio) MARK_MS=$(now_ms); }
since_mark() { local n; if [ "$1" = qt ]; then n=$QT_MARK; else n=$GIO_MARK; fi; cx tail -n "+$((n + 1))" "$QT_RUN/$1.out"; }
none_since() { ! since_mark "$1" | grep -Eq -- "$2"; }
both_lines() { echo "Qt: $(app_last qt | cut -d' ' -f1-5); GLib: $(app_last gio | cut -c1-140)"; }
# The GLib app's line for a state: its event, then available, connectivity, metered.
gio_state() { echo "\"event\": \"$1\", \"type\": \"ReachdNetworkMonitor\", \"available\": $2, \"connectivity\": \"$3\", \"metered\": $4,"; }
# app_heard qt|gio REGEX: the app printed a line since the mark, and its last line matches.
app_heard() { since_mark "$1" | tail -n 1 | grep -Eq -- "$2"; }
# apps_hear WHAT QT_REGEX GIO_REGEX [SECONDS]: since the mark, each app printed a line and
# its last one matches (within SECONDS, 5 by default); PASS says after how many ms each.
# QT_REGEX "-": the Qt app prints nothing meanwhile.
apps_hear() {
  local what=$1 limit=${4:-5} qt_ms="" gio_ms="" deadline
  deadline=$(($(now_ms) + limit * 1000))
  while :; do
    [ "$2" = - ] || [ -n "$qt_ms" ] || { app_heard qt "$2" && qt_ms=$(($(now_ms) - MARK_MS)); }
    [ -n "$gio_ms" ] || { app_heard gio "$3" && gio_ms=$(($(now_ms) - MARK_MS)); }
    { [ "$2" = - ] || [ -n "$qt_ms" ]; } && [ -n "$gio_ms" ] && break
    [ "$(now_ms)" -lt "$deadline" ] || break
    sleep 0.05
  done
  if [ "$2" = - ] && none_since qt .; then qt_ms="nothing printed"; elif [ -n "$qt_ms" ]; then qt_ms="after $qt_ms ms"; fi
  if [ -n "$qt_ms" ] && [ -n "$gio_ms" ]; then
    pass "$what (Qt $qt_ms, GLib after $gio_ms ms)" "$(both_lines)"
  else
    fail "$what (within $limit s)" "Qt printed: $(since_mark qt | cut -d' ' -f1-5 | tr '\n' ';'); GLib printed: $(since_mark gio | cut -c1-120 | tr '\n' ';'); reachctl: $(reachd_status_lines 2>&1); $(cx ip route show table all | grep '^default' | tr '\n' ';')"
  fi
}
# apps_quiet WHAT: since the mark, neither app printed a Disconnected or unavailable line.
apps_quiet() {
  if none_since qt 'reachability=(Disconnected|Local|Unknown)' && none_since gio '"available": false'; then
    pass "$1" "Qt printed: $(since_mark qt | cut -d' ' -f1-5 | tr '\n' ';'); GLib printed: $(since_mark gio | cut -c1-100 | tr '\n' ';')"
  else
    fail "$1" "Qt printed: $(since_mark qt | tr '\n' ';'); GLib printed: $(since_mark gio | tr '\n' ';')"
  fi
}
# default_in_table_100 / default_in_main: the default route moved to table 100, which no
# ip rule looks up (reachd: unsatisfied; a new GLib netlink monitor: available), added
# there before it leaves main so that the kernel always has one; and back.
default_in_table_100() {
  step cx ip route add default via "$GATEWAY" dev eth0 table 100
  step cx ip route del default via "$GATEWAY" dev eth0
}
default_in_main() {
  step cx ip route add default via "$GATEWAY" dev eth0
  step cx ip route del default via "$GATEWAY" dev eth0 table 100
}
socket_gone() { ! cx test -e "$SOCKET"; }
check_qt() {
  local t0 how qt_version metered_feature
  t0=$(now_ms)
  apt_install python3-pyqt6 || return
  note "$SUITE: apt-get install python3-pyqt6 took $((($(now_ms) - t0) / 1000)) s"
  expect_match "libqt6network6 ships Qt's glib backend (plugins/networkinformation/libqglib.so)" '^libqt6network6(:[a-z0-9]+)?: .*/plugins/networkinformation/libqglib\.so$' \
    cx dpkg -S 'plugins/networkinformation/libqglib.so'
  step cx install -d -m 0755 "$QT_RUN" || return
  step cx mkfifo -m 0600 "$QT_RUN/gio.in" || return
  if [ "$SUITE" = bookworm ]; then how="--backend glib"; else how=--default; fi
  # Stderr too in the .out files' neighbours; the subshells' own stderr is dropped: the
  # apps end by a signal, which bash would report there. The GLib app reads commands from
  # the FIFO, opened read-write: it never sees end of input.
  (CX_TIMEOUT=400 cx bash -c "echo \$\$ >$QT_RUN/qt.pid; exec runuser -u nobody -- timeout 300 \
    python3 $SHARE/qt_network.py $how >$QT_RUN/qt.out 2>$QT_RUN/qt.err") 2>/dev/null &
  local qt_app=$!
  (CX_TIMEOUT=400 cx bash -c "echo \$\$ >$QT_RUN/gio.pid; exec runuser -u nobody -- timeout 300 \
    python3 $SHARE/gio_monitor.py <>$QT_RUN/gio.in >$QT_RUN/gio.out 2>$QT_RUN/gio.err") 2>/dev/null &
  local gio_app=$!
  wait_until 10 app_is qt '^(start|load-failed) ' || true
  wait_until 10 app_is gio '"event": "start"' || true
  qt_version=$(cx head -n 1 "$QT_RUN/qt.out" | sed -n 's/.* qt=\([0-9.]*\) .*/\1/p')
  expect_match "Qt app (nobody, Qt ${qt_version:-?}, qt_network.py $how): backend glib, Online, not behind a portal, not metered" \
    '^start reachability=Online portal=False metered=False backend=glib ' cx head -n 1 "$QT_RUN/qt.out"
  local pid
  pid=$(cx head -n 1 "$QT_RUN/qt.out" | sed -n 's/.* pid=\([0-9]*\).*/\1/p')
  if maps_module "$pid" && cx grep -q 'networkinformation/libqglib\.so' "/proc/$pid/maps"; then
    pass "the Qt app (pid $pid) has libqglib.so and reachd's GIO module loaded" "$(cx grep -m1 -o '/[^ ]*libqglib\.so' "/proc/$pid/maps") $(cx grep -m1 -o '/[^ ]*libgioreachd\.so' "/proc/$pid/maps")"
  else
    fail "the Qt app (pid $pid) has libqglib.so and reachd's GIO module loaded" "$(app_last qt); $(cx cat "$QT_RUN/qt.err" | tail -5)"
  fi
  expect_match "GLib app (nobody, gio_monitor.py) beside it: ReachdNetworkMonitor, available, full" "$(gio_state start true full false)" app_last gio
  # Why bookworm's app names the backend: Qt 6.4's loadDefaultBackend() tries only
  # NetworkManager's (6.7 added the fallback to the backend with the most features).
  if [ "$SUITE" = bookworm ]; then
    capture as_nobody timeout 10 python3 "$SHARE/qt_network.py" --default
    if [ "$RC" -eq 1 ] && grep -Eq '^load-failed qt=6\.4\.[0-9]+ loaded-by=default backends=[a-z,]*glib' <<<"$OUT"; then
      pass "Qt ${qt_version:-?}: loadDefaultBackend() without NetworkManager loads nothing, glib listed (so the app names it)" "$OUT"
    else
      fail "Qt ${qt_version:-?}: loadDefaultBackend() without NetworkManager loads nothing, glib listed (so the app names it)" "exit $RC: $OUT"
    fi
  fi
  # Reachability follows reachd.
  apps_mark
  step cx ip route del default via "$GATEWAY" dev eth0
  apps_hear "default route deleted → Qt Disconnected (GLib LOCAL), GLib app available false" \
    '^reachability reachability=Disconnected portal=False ' "$(gio_state changed false local false)"
  apps_mark
  step cx ip route add default via "$GATEWAY" dev eth0
  apps_hear "default route back → Qt Online, GLib app available true" '^reachability reachability=Online ' "$(gio_state changed true full false)"
  # Metered: as the loaded backend says it supports it (Qt 6.4's glib backend does not).
  if cx head -n 1 "$QT_RUN/qt.out" | grep -q ' features=[A-Za-z,]*Metered'; then metered_feature=yes; else metered_feature=no; fi
  apps_mark
  eth0_expensive
  if [ "$metered_feature" = yes ]; then
    apps_hear "eth0 expensive (override, reload) → Qt isMetered true, GLib app metered true" '^metered .*metered=True ' "$(gio_state changed true full true)"
  else
    apps_hear "eth0 expensive (override, reload) → GLib app metered true (Qt ${qt_version:-?}'s glib backend has no Metered feature: isMetered stays false)" \
      - "$(gio_state changed true full true)"
  fi
  apps_mark
  eth0_not_expensive
  if [ "$metered_feature" = yes ]; then
    apps_hear "override gone (reload) → Qt isMetered false, GLib app metered false" '^metered .*metered=False ' "$(gio_state changed true full false)"
  else
    apps_hear "override gone (reload) → GLib app metered false" - "$(gio_state changed true full false)"
  fi
  check_qt_captive_portal
  check_qt_restart
  check_qt_stop
  echo "---- what the Qt app printed ($SUITE, qt_network.py $how) ----"
  cx cat "$QT_RUN/qt.out" "$QT_RUN/qt.err"
  echo "---- what the GLib app printed ($SUITE, gio_monitor.py) ----"
  cx cat "$QT_RUN/gio.out" "$QT_RUN/gio.err"
  echo "----"
  cx sh -c "kill \$(cat $QT_RUN/qt.pid) \$(cat $QT_RUN/gio.pid)" || true
  wait "$qt_app" "$gio_app" 2>/dev/null || true
  if wait_until 5 no_nobody_processes; then pass "the Qt and GLib apps are gone"; else fail "the Qt and GLib apps are gone" "$(nobody_processes)"; fi
  step cx rm -rf "$QT_RUN"
}

# reachd's own probe meets a captive portal: Tests/Fixtures/probe_server.py in gw answering
# 302, [probe] url at it (and IPAddressAllow= the gateway in a drop-in, past the shipped
# IPAddressDeny=any), reachd restarted → connectivity portal: Qt Site and behind a captive
# portal, the GLib app PORTAL. The portal answers 204 and `reachctl probe` checks now → full.
check_qt_captive_portal() {
  local conf=/etc/reachd/reachd.toml
  step cx sh -c "echo '{\"http\": \"redirect\"}' >$QT_RUN/captive.json" || return
  step cx sh -c "ip netns exec gw python3 $SHARE/probe_server.py $QT_RUN/captive.json >$QT_RUN/captive.out 2>&1 & echo \$! >$QT_RUN/captive.pid"
  wait_until 5 cx grep -q ready "$QT_RUN/captive.out" || fail "the captive portal listens in gw" "$(cx cat "$QT_RUN/captive.out")"
  step cx cp "$conf" /var/tmp/reachd.toml.qt
  step cx sed -i "s|^\\[probe\\]\$|[probe]\\nurl = \"http://$GATEWAY/generate_204\"\\nfamilies = [\"ipv4\"]\\nmaximum-delay = 2|" "$conf"
  step cx mkdir -p "$(dirname "$QT_PROBE_DROPIN")"
  step cx sh -c "printf '[Service]\\nIPAddressAllow=$GATEWAY\\n' >$QT_PROBE_DROPIN"
  step cx systemctl daemon-reload
  apps_mark
  step cx systemctl restart reachd.service
  apps_hear "reachd's probe ([probe] url = http://$GATEWAY/generate_204) meets gw's 302 → Qt Site, behind a captive portal; GLib app PORTAL" \
    '^(reachability|portal) reachability=Site portal=True ' "$(gio_state changed true portal false)" 15
  expect_match "…reachctl status says portal" '^Connectivity: +portal' as_nobody reachctl status --timeout 5
  step cx sh -c "echo '{\"http\": \"204\"}' >$QT_RUN/captive.json"
  apps_mark
  step as_nobody reachctl probe --timeout 10
  apps_hear "the portal answers 204, reachctl probe → Qt Online, not behind a portal; GLib app FULL" \
    '^(reachability|portal) reachability=Online portal=False ' "$(gio_state changed true full false)" 10
  # Gone before check_networkmanager's portal takes port 80 in gw.
  cx sh -c "p=\$(cat $QT_RUN/captive.pid); kill \$p; while kill -0 \$p 2>/dev/null; do sleep 0.1; done" || true
  step cx cp /var/tmp/reachd.toml.qt "$conf"
  step cx rm -f "$QT_PROBE_DROPIN"
  step cx systemctl daemon-reload
  step cx systemctl restart reachd.service
}

# systemctl restart reachd: both apps keep answering and print no Disconnected; then, the
# default route only in table 100, both say what the new reachd says (unsatisfied), not
# what the kernel's netlink view would (a default route in some table: available).
check_qt_restart() {
  wait_until 5 status_is satisfied || fail "satisfied before the restart" "reachctl: $(reachd_status_lines)"
  apps_mark
  step cx systemctl restart reachd.service
  # Past the module's 1 s grace: a reconnect that failed would have shown by then.
  sleep 2
  step cx sh -c "echo state >$QT_RUN/gio.in"
  if wait_until 5 app_is gio "$(gio_state state true full false)"; then pass "after systemctl restart reachd the GLib app answers: available, full" "$(app_last gio)"; else fail "after systemctl restart reachd the GLib app answers: available, full" "$(app_last gio)"; fi
  apps_quiet "through systemctl restart reachd (2 s after it) neither app printed Disconnected or unavailable"
  apps_mark
  default_in_table_100
  apps_hear "after the restart, default route only in table 100 → both follow the new reachd (unsatisfied): Qt Disconnected, GLib app available false" \
    '^reachability reachability=Disconnected ' "$(gio_state changed false local false)"
  apps_mark
  default_in_main
  apps_hear "default route back in main → Qt Online, GLib app available true" '^reachability reachability=Online ' "$(gio_state changed true full false)"
}

# reachd stopped, socket and all (RemoveOnStop=yes: the socket file goes): the module
# follows GLib's next monitor (netlink here, no NetworkManager) after its 1 s grace, so
# the running apps hear the kernel: default route deleted → unavailable, back → available.
# Then the default route only in table 100 (netlink: available, reachd would say
# unsatisfied) and reachd.socket started: the socket's creation brings the module back to
# reachd, and both apps hear reachd's unsatisfied.
check_qt_stop() {
  apps_mark
  step cx systemctl stop reachd.socket reachd.service
  if wait_until 5 socket_gone; then pass "systemctl stop reachd.socket reachd.service: $SOCKET is gone"; else fail "systemctl stop reachd.socket reachd.service: $SOCKET is gone" "$(cx ls -l "$SOCKET" 2>&1)"; fi
  sleep 2
  apps_quiet "reachd stopped, the route still there: 2 s later neither app printed Disconnected or unavailable"
  apps_mark
  step cx ip route del default via "$GATEWAY" dev eth0
  apps_hear "reachd stopped, default route deleted → both hear the kernel (GLib's netlink monitor behind the module): Qt Disconnected, GLib app available false" \
    '^reachability reachability=Disconnected ' "$(gio_state changed false local false)"
  apps_mark
  step cx ip route add default via "$GATEWAY" dev eth0
  apps_hear "reachd stopped, default route back → Qt Online, GLib app available true" '^reachability reachability=Online ' "$(gio_state changed true full false)"
  # Where reachd and netlink differ: a default route only in table 100. Deleted from main
  # first, then added there: a running GLib netlink monitor keeps one entry per
  # destination, so the other order (add, then delete the one in main) leaves it
  # unavailable, where a new one would say available.
  apps_mark
  step cx ip route del default via "$GATEWAY" dev eth0
  apps_hear "reachd stopped, default route deleted again → Qt Disconnected, GLib app available false" \
    '^reachability reachability=Disconnected ' "$(gio_state changed false local false)"
  apps_mark
  step cx ip route add default via "$GATEWAY" dev eth0 table 100
  apps_hear "reachd stopped, a default route in table 100 (no ip rule looks it up) → the kernel's netlink view: Qt Online, GLib app available true" \
    '^reachability reachability=Online ' "$(gio_state changed true full false)"
  expect_match "…as GLib's netlink monitor in a new app says: available" '^GNetworkMonitorNetlink available=True ' \
    as_nobody env GIO_USE_NETWORK_MONITOR=netlink python3 -c "$GIO_STATE"
  apps_mark
  step cx systemctl start reachd.socket
  apps_hear "systemctl start reachd.socket → both hear reachd again (unsatisfied where netlink says available): Qt Disconnected, GLib app available false" \
    '^reachability reachability=Disconnected ' "$(gio_state changed false local false)"
  expect_match "…reachd runs again (activated by the module's connect), unsatisfied" '^Status: +unsatisfied' as_nobody reachctl status --timeout 5
  apps_mark
  default_in_main
  apps_hear "default route back in main → Qt Online, GLib app available true" '^reachability reachability=Online ' "$(gio_state changed true full false)"
}
