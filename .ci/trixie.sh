#!/usr/bin/env bash
# .ci/trixie.sh - Debian trixie (Open MPI 5.0.x) chroot for building and
# testing the OMPIO components against the Open MPI 5 series.
#
# Usage:
#   .ci/trixie.sh setup              build (or reuse) the cached trixie root
#   .ci/trixie.sh run -- CMD ARGS..  run CMD inside the root, checkout at /src
#   .ci/trixie.sh shell              interactive shell inside the root
#   .ci/trixie.sh selftest           mpicc/ompi_info/mpirun + MPI-IO smoke test
#   .ci/trixie.sh test [-- ARGS]     the README's test command (./quickstart.sh test)
#                                    on a copy of the checkout, fresh build dir
#   .ci/trixie.sh build              build the suite in the root (incremental)
#   .ci/trixie.sh intree [-- MODES]  .ci/intree.sh on a copy of the checkout: Open
#                                    MPI 5.0 built with the suite in it (shared,
#                                    static), tested; cached in the root
#   .ci/trixie.sh bench -- ARGS      build, then bench/sfio-bench ARGS against
#                                    Open MPI 5.0 with the suite's components
#   .ci/trixie.sh clean              remove the cached root
#
# Environment:
#   SFIO_TRIXIE_ROOT    root path        (default /var/cache/sfio/trixie-root)
#   SFIO_TRIXIE_MIRROR  Debian mirror    (default http://deb.debian.org/debian)
#   SFIO_SRC            dir bound to /src (default: the checkout holding this script)
#   SFIO_TRIXIE_SHM     size of /dev/shm tmpfs inside the root (default 2g)
#   SFIO_TRIXIE_PASSENV names of extra host variables to pass into the root
#   SFIO_TRIXIE_WORK    work dir inside the root for test/build/bench
#                       (default /root/sfio-work/<hash of SFIO_SRC>): src/ is a
#                       copy of the checkout, build/ (bench, build) and
#                       ci-build/ (test, emptied first) the build trees
#
# Needs root (debootstrap, chroot, mount).  No TTY needed.  Idempotent: a root
# is complete only when its stamp file matches the package set below; a
# root that only lacks packages added to the set gets them installed in
# place; any other incomplete/stale root is deleted and rebuilt (built in
# "$ROOT.partial", renamed into place only when finished).  "run" performs all mounts in a
# private mount namespace (unshare -m) when available, and also unmounts them
# from an EXIT trap, so nothing leaks onto the host even on failure.
set -euo pipefail

ROOT=${SFIO_TRIXIE_ROOT:-/var/cache/sfio/trixie-root}
MIRROR=${SFIO_TRIXIE_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
SHM_SIZE=${SFIO_TRIXIE_SHM:-2g}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELF=$HERE/$(basename "${BASH_SOURCE[0]}")
SRC=${SFIO_SRC:-$(cd "$HERE/.." && pwd)}

# The same apt packages as the README's set-up (quickstart.sh is the one
# list), plus what this script itself needs inside the root.
PACKAGES="$(sed -n '/^packages="/,/"/p' "$HERE/../quickstart.sh" | sed 's/^packages=//; s/"//g' | tr -s ' \n' ' ')"
[ -n "${PACKAGES// /}" ] || { echo "[trixie] ERROR: no package list in quickstart.sh" >&2; exit 1; }
# Building Open MPI with the suite (tools/build-ompi-with-suite.sh, the
# in-tree CI lane) also needs apt-get source (dpkg-dev), autogen.pl's
# tools (perl is in the base system, flex), ccache and libevent's headers.
PACKAGES="$PACKAGES ca-certificates file dpkg-dev flex ccache libevent-dev"
# Bump STAMP_VERSION when the way the root is prepared changes.
STAMP_VERSION=5
STAMP_FILE=.sfio-trixie-complete
STAMP_HEAD="v$STAMP_VERSION suite=$SUITE"
STAMP_CONTENT="$STAMP_HEAD pkgs=$(echo $PACKAGES)"

# Environment used for every command run inside the root.  Verified with
# Open MPI 5.0.7 / PRRTE 3.0.8 (trixie):
#  - mpirun (prterun) refuses to run as root unless BOTH OMPI_ALLOW_RUN_AS_ROOT
#    and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM are set (the PRTE_ALLOW_* spellings
#    are NOT honoured by Open MPI's mpirun; --allow-run-as-root also works).
#  - oversubscription (-np 4 on 2 cores) needs --oversubscribe or
#    PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe (the 4.x
#    OMPI_MCA_rmaps_base_oversubscribe=1 is ignored by PRRTE).
#  - single node only: btl self,sm + pml ob1 (otherwise btl/tcp prints
#    "Unable to find reachable pairing between local and remote interfaces"
#    for every rank inside the chroot, and pml/ucx may be probed).
#  - mpirun hands its ranks OMPI_MCA_mca_base_component_path=<PMIx plugin
#    dir>, and PMIx reads that variable too: whoever points it at the
#    suite's components (tests, bench) makes PMIx print "bad prefix" lines
#    for them unless PMIx has its own PMIX_MCA_mca_base_component_path.
CHROOT_ENV=(
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  HOME=/root
  LANG=C.UTF-8
  TERM=dumb
  DEBIAN_FRONTEND=noninteractive
  OMPI_ALLOW_RUN_AS_ROOT=1
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
  OMPI_MCA_btl=self,sm
  OMPI_MCA_pml=ob1
  PMIX_MCA_mca_base_component_path=/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
)
# Pass through CI/MAKEFLAGS and any variables named in SFIO_TRIXIE_PASSENV.
for _v in CI MAKEFLAGS ${SFIO_TRIXIE_PASSENV:-}; do
  [ -n "${!_v+x}" ] && CHROOT_ENV+=("$_v=${!_v}")
done
unset _v

log() { printf '[trixie] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
set -E
trap 'log "command failed (status $?) at line $LINENO: $BASH_COMMAND"' ERR

[ "$(id -u)" = 0 ] || die "must run as root"

# ---------------------------------------------------------------- mounts ---
MOUNTED=()   # mount points (inside some root) in mount order

do_mount() { # do_mount TARGET mount-args...
  local target=$1; shift
  mkdir -p "$target"
  mount "$@" "$target" || return 1
  MOUNTED+=("$target")
}

umount_all() {
  local i t
  for (( i=${#MOUNTED[@]}-1; i>=0; i-- )); do
    t=${MOUNTED[$i]}
    if mountpoint -q "$t" 2>/dev/null; then
      umount "$t" 2>/dev/null || umount -l "$t" 2>/dev/null || log "warning: could not unmount $t"
    fi
  done
  MOUNTED=()
}

# Unmount anything still mounted below a root (left over by a killed run
# that had no private namespace).  Deepest first.
umount_below() {
  local r=$1 m
  [ -d "$r" ] || return 0
  r=$(cd "$r" && pwd -P)
  { awk '{print $2}' /proc/self/mounts | sed 's/\\040/ /g' | grep -E "^$r(/|$)" || true; } | sort -r |
  while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  return 0
}

mount_api() { # mount_api ROOT [with-src]
  local r=$1
  do_mount "$r/proc" -t proc proc
  do_mount "$r/sys" -t sysfs -o ro,nosuid,nodev,noexec sysfs || \
    do_mount "$r/sys" --rbind /sys
  # /dev: bind the host /dev (device nodes like null, zero, urandom), then
  # fresh devpts + a private tmpfs /dev/shm (Open MPI sm/vader backing files).
  do_mount "$r/dev" --bind /dev
  do_mount "$r/dev/pts" -t devpts -o newinstance,ptmxmode=0666,gid=5,mode=620 devpts || \
    do_mount "$r/dev/pts" --bind /dev/pts
  do_mount "$r/dev/shm" -t tmpfs -o "mode=1777,size=$SHM_SIZE" shm
  do_mount "$r/tmp" -t tmpfs -o mode=1777 tmp
  do_mount "$r/run" -t tmpfs -o mode=0755 run
  mkdir -p "$r/run/lock" && chmod 1777 "$r/run/lock"
  if [ "${2:-}" = with-src ]; then
    do_mount "$r/src" --bind "$SRC"
  fi
}

copy_resolv() {
  local r=$1
  rm -f "$r/etc/resolv.conf"
  cp -L /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
}

in_root() { # in_root ROOT cmd...  (mounts must already be in place)
  local r=$1; shift
  chroot "$r" /usr/bin/env -i "${CHROOT_ENV[@]}" "$@"
}

# ----------------------------------------------------------------- setup ---
root_complete() {
  [ -f "$ROOT/$STAMP_FILE" ] && [ "$(cat "$ROOT/$STAMP_FILE")" = "$STAMP_CONTENT" ] \
    && [ -x "$ROOT/usr/bin/mpicc" ]
}

# root_missing_packages: when the root was prepared the same way but with
# fewer packages, print the ones to add (nothing and status 0 when none
# is missing); status 1 when the root must be rebuilt.  A package added
# to the list is then installed in place instead of rebuilding the root.
root_missing_packages() {
  local stamp p missing=
  [ -f "$ROOT/$STAMP_FILE" ] && [ -x "$ROOT/usr/bin/mpicc" ] || return 1
  stamp=$(cat "$ROOT/$STAMP_FILE")
  case "$stamp" in "$STAMP_HEAD pkgs="*) ;; *) return 1 ;; esac
  for p in $PACKAGES; do
    case " ${stamp#*pkgs=} " in *" $p "*) ;; *) missing="$missing $p" ;; esac
  done
  echo $missing
}

add_packages() { # add_packages PKG...: install into the complete root, restamp
  log "adding packages to $ROOT: $*"
  trap 'umount_all' EXIT
  copy_resolv "$ROOT"
  mount_api "$ROOT"
  in_root "$ROOT" apt-get update -q
  in_root "$ROOT" apt-get install -y -q "$@"
  in_root "$ROOT" apt-get clean
  umount_all
  trap - EXIT
  echo "$STAMP_CONTENT" > "$ROOT/$STAMP_FILE"
}

ensure_debootstrap() {
  if command -v debootstrap >/dev/null 2>&1 && [ -e /usr/share/debootstrap/scripts/$SUITE ]; then
    return 0
  fi
  log "installing debootstrap on the host"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q || log "warning: apt-get update reported errors (continuing)"
  apt-get install -y -q --no-install-recommends debootstrap
  [ -e /usr/share/debootstrap/scripts/$SUITE ] || die "debootstrap has no script for $SUITE"
}

build_root() {
  local part="$ROOT.partial"
  ensure_debootstrap
  umount_below "$part"; rm -rf "$part"
  umount_below "$ROOT";  rm -rf "$ROOT"
  mkdir -p "$(dirname "$ROOT")"

  log "debootstrap --variant=minbase $SUITE -> $part ($MIRROR)"
  local keyring=()
  [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] && \
    keyring=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
  debootstrap --variant=minbase "${keyring[@]}" "$SUITE" "$part" "$MIRROR" \
    || { tail -n 30 "$part/debootstrap/debootstrap.log" >&2 2>/dev/null; die "debootstrap failed"; }

  cat > "$part/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb-src $MIRROR $SUITE main
EOF
  # No service starts inside the chroot; no docs/manpages to save time+space.
  printf '#!/bin/sh\nexit 101\n' > "$part/usr/sbin/policy-rc.d"; chmod 755 "$part/usr/sbin/policy-rc.d"
  cat > "$part/etc/dpkg/dpkg.cfg.d/01-sfio-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  echo 'APT::Install-Recommends "false";' > "$part/etc/apt/apt.conf.d/01-sfio-norecommends"
  copy_resolv "$part"

  trap 'umount_all' EXIT
  mount_api "$part"
  log "installing packages: $PACKAGES"
  in_root "$part" apt-get update -q
  # shellcheck disable=SC2086
  in_root "$part" apt-get install -y -q $PACKAGES
  fix_devel_headers "$part"
  in_root "$part" apt-get clean
  umount_all
  trap - EXIT

  echo "$STAMP_CONTENT" > "$part/$STAMP_FILE"
  mv "$part" "$ROOT"
  log "root ready at $ROOT"
}

# Debian's libopenmpi-dev 5.0.7 (--with-devel-headers, all components built
# into libmpi) misses headers that opal_config.h itself names, e.g.
#   MCA_threads_mutex_base_include_HEADER "opal/mca/threads/pthreads/threads_pthreads_mutex.h"
# so any file including ompi/mca/common/ompio/common_ompio.h fails to compile.
# Copy every header that an installed header #includes but that is not
# installed, from the matching upstream source (apt-get source openmpi),
# and list what was added in SFIO-ADDED-HEADERS.txt.
fix_devel_headers() {
  local r=$1
  log "completing Open MPI devel headers from the openmpi source package"
  in_root "$r" /bin/bash -euc '
    inc=$(dirname "$(mpicc --showme:incdirs | tr " " "\n" | grep "/openmpi$" | head -1)")/openmpi
    d=$(mktemp -d); cd "$d"
    apt-get -q -o APT::Sandbox::User=root source --only-source openmpi >/dev/null 2>&1 \
      || apt-get -q -o APT::Sandbox::User=root source --download-only --only-source openmpi >/dev/null
    if [ ! -d openmpi-*/ompi ]; then mkdir x; tar -xf openmpi_*.orig.tar.* -C x; mv x/openmpi-* .; fi
    src=$(ls -d "$d"/openmpi-*/ | head -1)
    python3 - "$inc" "$src" <<"EOF_PY"
import os, re, shutil, sys
inc, src = sys.argv[1], sys.argv[2]
pat = re.compile(r"^\s*#\s*(?:include\s*\"([^\"]+)\"|define\s+MCA_\w+_HEADER\s+\"([^\"]+)\")", re.M)
added = []
for _ in range(10):
    new = 0
    for root, _d, files in os.walk(inc):
        for f in files:
            if not f.endswith(".h"):
                continue
            fp = os.path.join(root, f)
            try:
                txt = open(fp, errors="replace").read()
            except OSError:
                continue
            for m in pat.finditer(txt):
                h = m.group(1) or m.group(2)
                # only root-relative paths ("opal/mca/..."); bare names are
                # same-directory includes that upstream installs together
                if not h or "/" not in h or h.startswith(".") or \
                   os.path.exists(os.path.join(root, h)) or os.path.exists(os.path.join(inc, h)):
                    continue
                rel = h
                s = os.path.join(src, rel)
                if os.path.isfile(s):
                    os.makedirs(os.path.dirname(os.path.join(inc, rel)), exist_ok=True)
                    shutil.copy2(s, os.path.join(inc, rel))
                    added.append(rel); new += 1
    if not new:
        break
with open(os.path.join(inc, "SFIO-ADDED-HEADERS.txt"), "w") as o:
    o.write("# headers copied from the openmpi source package by .ci/trixie.sh\n")
    o.write("".join(a + "\n" for a in sorted(set(added))))
print("added %d headers: %s" % (len(set(added)), " ".join(sorted(set(added)))))
EOF_PY
    cd /; rm -rf "$d"'
}

cmd_setup() {
  mkdir -p "$(dirname "$ROOT")"
  # Serialize concurrent setups on the same root.
  exec 9>"$ROOT.lock"
  flock 9
  local missing
  if root_complete; then
    log "reusing cached root $ROOT"
  elif missing=$(root_missing_packages); then
    add_packages $missing
  else
    [ -e "$ROOT" ] && log "root $ROOT incomplete or stale: rebuilding"
    build_root
  fi
  flock -u 9
}

# ------------------------------------------------------------------- run ---
cmd_run() {
  [ $# -gt 0 ] || die "usage: $0 run -- CMD [ARGS...]"
  cmd_setup
  [ -d "$SRC" ] || die "source dir $SRC missing"
  # Enter a private mount namespace so mounts vanish with the process even
  # if it is killed; the EXIT trap unmounts explicitly as well.
  if [ -z "${SFIO_TRIXIE_IN_NS:-}" ] && command -v unshare >/dev/null 2>&1 \
     && unshare -m --propagation private true 2>/dev/null; then
    SFIO_TRIXIE_IN_NS=1 exec unshare -m --propagation private "$BASH" "$SELF" __run_inner "$@"
  fi
  run_inner "$@"
}

CHILD=
forward_signal() { # forward_signal SIG: pass a signal on to the chrooted command
  trap - INT TERM HUP
  if [ -n "$CHILD" ] && kill -0 "$CHILD" 2>/dev/null; then
    kill -"$1" "$CHILD" 2>/dev/null || true
    wait "$CHILD" 2>/dev/null || true
    # whatever the command left behind inside the root (e.g. orphaned ranks)
    kill_root_procs
  fi
  umount_all
  exit $(( 128 + $(kill -l "$1") ))
}

kill_root_procs() { # kill any process whose root is our chroot
  local p rr
  rr=$(cd "$ROOT" && pwd -P)
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$rr" ] && kill -KILL "${p#/proc/}" 2>/dev/null
  done
  return 0
}

run_inner() {
  trap - ERR   # the user command's exit status is passed on silently
  trap 'umount_all' EXIT
  trap 'forward_signal TERM' TERM
  trap 'forward_signal INT' INT
  trap 'forward_signal HUP' HUP
  copy_resolv "$ROOT"
  mount_api "$ROOT" with-src
  local rc=0
  # Run in the background and wait, so that signals reach our traps at once
  # (bash defers traps while a foreground child runs).  Explicit <&0 keeps
  # stdin (a background job would otherwise get /dev/null).
  in_root "$ROOT" /bin/bash -c 'cd /src && exec "$@"' sfio-run "$@" <&0 &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=
  umount_all
  trap - EXIT
  return $rc
}

# ------------------------------------------------------ test/build/bench ---
WORK=${SFIO_TRIXIE_WORK:-/root/sfio-work/$(printf '%s' "$SRC" | md5sum | cut -c1-12)}

# pass_env NAME=VALUE...: set variables for the command run in the root.
# They must be exported and named in SFIO_TRIXIE_PASSENV, because "run"
# re-executes this script in a private mount namespace (CHROOT_ENV is
# rebuilt there from the environment).
pass_env() {
  local kv
  for kv in "$@"; do
    export "${kv%%=*}=${kv#*=}"
    SFIO_TRIXIE_PASSENV="${SFIO_TRIXIE_PASSENV:-} ${kv%%=*}"
    CHROOT_ENV+=("$kv")
  done
  export SFIO_TRIXIE_PASSENV
}

# stage_src: copy the checkout (tracked and untracked-but-not-ignored files
# when it is a git checkout, else everything but build trees) into
# $ROOT$WORK/src, keeping mtimes so that incremental builds stay incremental.
stage_src() {
  local dst=$ROOT$WORK/src
  mkdir -p "$dst"
  if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$SRC" && git ls-files -z -co --exclude-standard | tar --null -T - -cf - 2>/dev/null) |
      tar -xf - -C "$dst"
  else
    (cd "$SRC" && tar --exclude=./build --exclude=./.git --exclude=./autom4te.cache -cf - .) |
      tar -xf - -C "$dst"
  fi
}

# Runs inside the root: (re)generate and configure only when the build
# system changed, then make.  $1 = build dir.
BUILD_SCRIPT='
set -eu
src=$SFIO_WORK/src; b=$1
mkdir -p "$b"
sum=$(cat "$src"/configure.ac "$src"/config/*.m4 $(find "$src" -name Makefile.am) | md5sum | cut -c1-32)
if [ ! -x "$src/configure" ] || [ "$(cat "$src/.sfio-autoreconf" 2>/dev/null)" != "$sum" ]; then
  echo "== autoreconf -fi ($src)"
  (cd "$src" && autoreconf -fi >/dev/null 2>&1) || (cd "$src" && autoreconf -fi)
  echo "$sum" > "$src/.sfio-autoreconf"
  rm -f "$b/config.status"
fi
cd "$b"
[ -f config.status ] || { echo "== configure ($b)"; "$src/configure" -q; }
make -s -j"$(nproc)"
'

cmd_test() { # the README test command inside the root, on a fresh build dir
  cmd_setup
  stage_src
  rm -rf "$ROOT$WORK/ci-build" "$ROOT$WORK/prefix"
  # install into the work dir, never into the cached root's ~/.openmpi
  # (Open MPI would then load those components in every later use)
  pass_env SFIO_BUILD_DIR="$WORK/ci-build" SFIO_PREFIX="$WORK/prefix"
  cmd_run /bin/bash -c 'cd "$0" && exec ./quickstart.sh test "$@"' "$WORK/src" "$@"
}

cmd_intree() { # the in-tree lane (.ci/intree.sh) on a copy of the checkout
  local v
  cmd_setup
  stage_src
  for v in SFIO_INTREE_TEST_FLAGS SFIO_OMPI_WORK; do
    if [ -n "${!v+x}" ]; then pass_env "$v=${!v}"; fi
  done
  cmd_run /bin/bash -c 'cd "$0" && exec .ci/intree.sh "$@"' "$WORK/src" "$@"
}

cmd_build() {
  cmd_setup
  stage_src
  pass_env SFIO_WORK="$WORK"
  cmd_run /bin/bash -c "$BUILD_SCRIPT" sfio-build "$WORK/build"
}

# bench -- ARGS: build (as "build" does), then sfio-bench from the root build, the suite's components
# ahead of Open MPI 5.0's own; results land in the checkout (./sfio-results
# unless --out says otherwise) because the command runs in /src.
cmd_bench() {
  cmd_setup
  stage_src
  local b=$WORK/build
  pass_env SFIO_WORK="$WORK" \
           OMPI_MCA_mca_base_component_path="$b/components:/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi40" \
           SFIO_BENCH_BIN="$b/bench/sfio_bench" SFIO_NETSTORE_LIB="$b/bench/.libs/libnetstore.so"
  # one command in the root (cmd_run does not return: it execs)
  cmd_run /bin/bash -c "$BUILD_SCRIPT"'
shift; cd /src; exec python3 /src/bench/sfio-bench "$@"' sfio-bench "$b" "$@"
}

SELFTEST_SCRIPT='
set -eu
echo "== mpicc --showme"; mpicc --showme
echo "== ompi_info"; ompi_info --version | head -1
inc=$(mpicc --showme:incdirs | tr " " "\n" | grep "/openmpi$" | head -1)
for h in ompi/mca/common/ompio/common_ompio.h ompi/mca/fs/fs.h ompi/mca/fbtl/fbtl.h \
         ompi/mca/fcoll/fcoll.h ompi/mca/sharedfp/sharedfp.h; do
  test -f "$inc/$h" && echo "header: $inc/$h"
done
echo "== mpirun hostname"; mpirun -np 4 hostname
d=$(mktemp -d); cd "$d"
cat > io.c <<"EOF_C"
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#define N 4096
int main(int argc, char **argv) {
    int rank, size, i, bad = 0, tot = 0; MPI_File fh; MPI_Status st;
    static int wbuf[N], rbuf[N];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 0; i < N; i++) wbuf[i] = rank * N + i;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_write_at(fh, (MPI_Offset)rank * sizeof wbuf, wbuf, N, MPI_INT, &st);
    MPI_File_sync(fh); MPI_Barrier(MPI_COMM_WORLD); MPI_File_sync(fh);
    int peer = (rank + 1) % size;
    MPI_File_read_at(fh, (MPI_Offset)peer * sizeof rbuf, rbuf, N, MPI_INT, &st);
    for (i = 0; i < N; i++) if (rbuf[i] != peer * N + i) bad++;
    memset(rbuf, 0, sizeof rbuf);
    MPI_File_read_at_all(fh, (MPI_Offset)rank * sizeof rbuf, rbuf, N, MPI_INT, &st);
    for (i = 0; i < N; i++) if (rbuf[i] != rank * N + i) bad++;
    MPI_File_close(&fh);
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("mpiio write_at/read_at: %d ranks, %s\n", size, tot ? "FAILED" : "ok");
    MPI_Finalize();
    return tot != 0;
}
EOF_C
mpicc -O2 -Wall -o io io.c
echo "== MPI-IO (io=ompio) 4 ranks"; mpirun -np 4 --mca io ompio ./io "$d/data"
echo "== MPI-IO (default io) 4 ranks"; rm -f "$d/data"; mpirun -np 4 ./io "$d/data"
cd /; rm -rf "$d"
echo "trixie selftest: OK"
'

cmd=${1:-}
shift || true
case "$cmd" in
  setup) cmd_setup ;;
  run)
    [ "${1:-}" = -- ] && shift
    cmd_run "$@" ;;
  __run_inner) run_inner "$@" ;;
  shell) cmd_run /bin/bash -i ;;
  selftest) cmd_run /bin/bash -c "$SELFTEST_SCRIPT" ;;
  test)
    [ "${1:-}" = -- ] && shift
    cmd_test "$@" ;;
  build) cmd_build ;;
  intree)
    [ "${1:-}" = -- ] && shift
    cmd_intree "$@" ;;
  where) # host paths: root, work (dir inside the root), build (test's build dir)
    case "${1:-}" in
      root) echo "$ROOT" ;; work) echo "$ROOT$WORK" ;; build) echo "$ROOT$WORK/ci-build" ;;
      *) die "usage: $0 where root|work|build" ;;
    esac ;;
  bench)
    [ "${1:-}" = -- ] && shift
    cmd_bench "$@" ;;
  clean)
    umount_below "$ROOT.partial"; umount_below "$ROOT"
    rm -rf "$ROOT.partial" "$ROOT" "$ROOT.lock"; log "removed $ROOT" ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
