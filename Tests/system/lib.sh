# Helpers of Tests/system/run: reporting, container roots, booting and entering a
# container, teardown. Sourced, not run. Globals: REPO, BUILD_DIR, SUITE, LEADER.

# --- Reporting ------------------------------------------------------------------------

PASSES=0
FAILURES=()

note() { printf '==> %s\n' "$*"; }
indent() { [ -z "${1:-}" ] || sed 's/^/        /' <<<"$1"; }
pass() { printf 'PASS  [%s] %s\n' "$SUITE" "$1"; indent "${2:-}"; PASSES=$((PASSES + 1)); }
fail() { printf 'FAIL  [%s] %s\n' "$SUITE" "$1"; indent "${2:-}"; FAILURES+=("[$SUITE] $1"); }

# Runs a command without letting set -e end the script: output in OUT, status in RC.
capture() { OUT=$("$@" 2>&1) && RC=0 || RC=$?; }

# expect_ok WHAT CMD…: PASS when CMD exits 0 (shows its output either way).
expect_ok() {
  local what=$1; shift
  capture "$@"
  if [ "$RC" -eq 0 ]; then pass "$what" "$OUT"; else fail "$what" "exit $RC: $OUT"; fi
}

# expect_match WHAT REGEX CMD…: PASS when CMD exits 0 and its output matches REGEX
# (grep -E); shows the matching lines, or everything on failure.
expect_match() {
  local what=$1 regex=$2; shift 2
  capture "$@"
  if [ "$RC" -eq 0 ] && grep -Eq -- "$regex" <<<"$OUT"; then
    pass "$what" "$(grep -E -- "$regex" <<<"$OUT")"
  else
    fail "$what" "exit $RC, wanted /$regex/ in: $OUT"
  fi
}

# step CMD…: a command a check needs done (setup, not an assertion): reported as a FAIL
# when it fails, and its status returned.
step() {
  capture "$@"
  [ "$RC" -eq 0 ] || fail "could not run: $*" "exit $RC: $OUT"
  return "$RC"
}

# wait_until SECONDS CMD…: polls CMD every 0.1 s until it succeeds; status 1 on timeout.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# Milliseconds since the epoch, for "seen after N ms" in reports.
now_ms() { date +%s%3N; }

# timed CHECK: runs CHECK and says how long it took (what a check costs the CI budget).
timed() {
  local t0 ms
  t0=$(now_ms)
  "$@"
  ms=$(($(now_ms) - t0))
  note "$SUITE: $1 took $((ms / 1000)).$((ms % 1000 / 100)) s"
}

# --- Container roots --------------------------------------------------------------------

# What each root holds: a bare minimal Debian with systemd as init. reachd's own Depends
# (libnl …) are deliberately left out: `apt-get install ./reachd_*.deb` must bring them.
ROOT_INCLUDE="systemd,systemd-sysv,dbus,iproute2"
MIRROR="${REACHD_SYSTEM_MIRROR:-http://deb.debian.org/debian}"

# Removes a root, first unmounting what an interrupted debootstrap may have left mounted
# in it (proc, sys); rm never crosses into a mount.
remove_root() {
  local dir=$1
  [ -e "$dir" ] || return 0
  unmount_below "$dir"
  rm -rf --one-file-system "$dir"
}

# unmount_below DIR: unmounts every mount point below DIR, deepest first.
unmount_below() {
  local mnt
  findmnt -rn -o TARGET | { grep -F "$1/" || true; } | sort -r | while read -r mnt; do
    umount -l "$mnt" || true
  done
}

# kill_tree PID: SIGTERM to PID and all its descendants, children first.
kill_tree() {
  local pid=$1 child
  for child in $(pgrep -P "$pid" || true); do kill_tree "$child"; done
  kill "$pid" 2>/dev/null || true
}

# root_is_complete SUITE: the root's build finished with the current recipe.
root_is_complete() { [ -f "$BUILD_DIR/$1/complete" ] && [ "$(cat "$BUILD_DIR/$1/complete")" = "$(root_recipe "$1")" ]; }
root_recipe() { echo "debootstrap --variant=minbase --include=$ROOT_INCLUDE $1 $MIRROR"; }

# build_root SUITE: .build-system/SUITE/root, reused when a previous build with the same
# recipe completed (the marker is written last), rebuilt otherwise.
build_root() {
  local suite=$1 dir="$BUILD_DIR/$1" recipe
  recipe=$(root_recipe "$suite")
  if root_is_complete "$suite"; then
    note "$suite: reusing the root in $dir/root"
    return 0
  fi
  remove_root "$dir"
  mkdir -p "$dir"
  note "$suite: building the root with $recipe (about a minute)"
  local start=$SECONDS
  if ! debootstrap --variant=minbase --include="$ROOT_INCLUDE" "$suite" "$dir/root" "$MIRROR" \
      >"$dir/debootstrap.log" 2>&1; then
    tail -20 "$dir/debootstrap.log"
    echo "debootstrap failed; the whole log is $dir/debootstrap.log" >&2
    return 1
  fi
  echo "$recipe" >"$dir/complete"
  note "$suite: root built in $((SECONDS - start)) s ($(du -sh "$dir/root" | cut -f1))"
}

# cache_depends SUITE DEB… [-- PACKAGE…]: puts the .debs' missing Depends (and the
# archive's PACKAGEs with theirs) into the root's apt cache, through a chroot that shares
# the host's network. The booted container has no uplink (its network is private), so
# this is how `apt-get install ./reachd_*.deb` finds them there. The .debs are resolved
# together (reachd-gio depends on reachd, which is in no archive). Without Recommends:
# the checks install archive packages with --no-install-recommends, and neither .deb nor
# its Depends recommends anything. Nothing is installed in the root; a rerun finds the
# cache full and downloads nothing.
cache_depends() {
  local suite=$1 root="$BUILD_DIR/$1/root" args=()
  shift
  rm -rf "$root/var/tmp/reachd-depends"
  mkdir -p "$root/var/tmp/reachd-depends"
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    cp "$1" "$root/var/tmp/reachd-depends/"
    args+=("/var/tmp/reachd-depends/$(basename "$1")")
    shift
  done
  [ $# -eq 0 ] || { shift; args+=("$@"); }
  local apt=(chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive
    apt-get -q -y install --no-install-recommends --download-only "${args[@]}")
  # A root built long ago may have stale package lists: refresh them once and retry.
  if ! "${apt[@]}" >"$BUILD_DIR/$suite/depends.log" 2>&1; then
    chroot "$root" apt-get -q update >>"$BUILD_DIR/$suite/depends.log" 2>&1 || true
    if ! "${apt[@]}" >>"$BUILD_DIR/$suite/depends.log" 2>&1; then
      rm -rf "$root/var/tmp/reachd-depends"
      tail -20 "$BUILD_DIR/$suite/depends.log"
      return 1
    fi
  fi
  rm -rf "$root/var/tmp/reachd-depends"
}

# --- Booting and entering a container ---------------------------------------------------

NSPAWN_PID=""
LEADER=""
CGROUPS=()

# The cgroup directories nspawn runs in, one per mounted hierarchy it uses (the cgroup2
# one, and on a hybrid host also name=systemd). Our own cgroup makes cleanup exact: every
# process of the container is below it.
make_cgroups() {
  local name=$1 v2
  CGROUPS=()
  if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
    v2=/sys/fs/cgroup
  else
    v2=/sys/fs/cgroup/unified
    [ -d /sys/fs/cgroup/systemd ] && CGROUPS+=("/sys/fs/cgroup/systemd/$name")
  fi
  CGROUPS=("$v2/$name" "${CGROUPS[@]}")
  local cg
  for cg in "${CGROUPS[@]}"; do mkdir -p "$cg"; done
}

# boot SUITE SHARE: starts SUITE's root under systemd-nspawn and waits until its systemd
# is up. Writes go to a tmpfs overlay (--volatile=overlay): the root on disk stays clean,
# so every run starts from the same bare system. SHARE appears read-only at
# /var/tmp/reachd-test. --system-call-filter=bpf lets the container's systemd attach
# IPAddressDeny='s BPF programs (nspawn's own seccomp filter blocks bpf() otherwise).
boot() {
  local suite=$1 share=$2
  MACHINE="reachd-test-$suite"
  make_cgroups "reachd-system-test-$$-$suite"
  (
    for cg in "${CGROUPS[@]}"; do echo "$BASHPID" >"$cg/cgroup.procs"; done
    exec systemd-nspawn --quiet -D "$BUILD_DIR/$suite/root" --volatile=overlay -b \
      --machine="$MACHINE" --register=no --keep-unit --private-network \
      --system-call-filter=bpf --bind-ro="$share:/var/tmp/reachd-test" --console=read-only
  ) >"$BUILD_DIR/$suite/console.log" 2>&1 &
  NSPAWN_PID=$!
  # The container's init is nspawn's child once it has exec'd systemd.
  local deadline=$((SECONDS + 30)) pid
  while [ -z "$LEADER" ]; do
    for pid in $(pgrep -P "$NSPAWN_PID" || true); do
      [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd ] && LEADER=$pid
    done
    if [ -z "$LEADER" ]; then
      if ! kill -0 "$NSPAWN_PID" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
        tail -20 "$BUILD_DIR/$suite/console.log"
        return 1
      fi
      sleep 0.1
    fi
  done
  # is-system-running fails until systemd's private bus socket exists: retry.
  local state=""
  deadline=$((SECONDS + 60))
  until state=$(cx systemctl is-system-running --wait 2>/dev/null) || [ "$state" = degraded ]; do
    if [ "$SECONDS" -ge "$deadline" ] || ! kill -0 "$NSPAWN_PID" 2>/dev/null; then
      echo "the container did not finish booting (state: ${state:-none})" >&2
      tail -20 "$BUILD_DIR/$suite/console.log"
      return 1
    fi
    sleep 0.2
  done
  [ "$state" = running ] || cx systemctl --failed --no-legend || true
}

# cx CMD…: runs CMD inside the container, in all its namespaces, with a clean environment
# (host capabilities are kept). Bounded, so a hung command cannot stall the suite.
cx() {
  timeout --kill-after=5 "${CX_TIMEOUT:-60}" nsenter -t "$LEADER" -a \
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    TERM=dumb SYSTEMD_COLORS=0 SYSTEMD_PAGER=cat SYSTEMD_LOG_COLOR=0 "$@"
}

# as_nobody CMD…: CMD inside the container as the unprivileged user nobody.
as_nobody() { cx runuser -u nobody -- "$@"; }

# teardown: powers the container off (SIGRTMIN+4 to its systemd), kills whatever is left
# in our cgroups, removes them. Safe to call twice and when nothing was started.
teardown() {
  if [ -n "$NSPAWN_PID" ]; then
    if kill -0 "$NSPAWN_PID" 2>/dev/null && [ -n "$LEADER" ]; then
      kill -s SIGRTMIN+4 "$LEADER" 2>/dev/null || true
      local deadline=$((SECONDS + 20))
      while kill -0 "$NSPAWN_PID" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    fi
    if kill -0 "$NSPAWN_PID" 2>/dev/null; then
      echo "teardown: the container did not power off; killing it" >&2
      kill_cgroup "${CGROUPS[0]}"
    fi
    wait "$NSPAWN_PID" 2>/dev/null || true
  fi
  local cg
  for cg in "${CGROUPS[@]}"; do
    [ -d "$cg" ] || continue
    kill_cgroup "$cg"
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  [ -z "${MACHINE:-}" ] || rm -rf --one-file-system "/run/systemd/nspawn/propagate/$MACHINE"
  NSPAWN_PID="" LEADER="" CGROUPS=() MACHINE=""
}

# kill_cgroup DIR: SIGKILL to every process at or below DIR.
kill_cgroup() {
  local cg=$1 pid
  [ -d "$cg" ] || return 0
  if [ -e "$cg/cgroup.kill" ]; then
    echo 1 >"$cg/cgroup.kill" 2>/dev/null || true
  else
    find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r pid; do
      kill -9 "$pid" 2>/dev/null || true
    done
  fi
  local deadline=$((SECONDS + 10))
  while [ -n "$(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.1
  done
}
