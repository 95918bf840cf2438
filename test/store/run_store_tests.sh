#!/bin/bash
# run_store_tests.sh: the versioned store's promises (issue 20, BRIEF "A
# store people can trust"), one case per finding or more.  Each case makes
# the situation for real (kill -9 crashes, another user via setpriv, a
# 4 MiB tmpfs, ulimit -n, lock holders) and checks the contract the store
# must keep: which store is applied to which file and by whom, recovery at
# every open, bounded disk and memory, errors instead of silent loss.
#
# Usage: run_store_tests.sh [--list] [--keep] [--np N] [CASE ...]
#   CASE       run only these cases (default: all); --list prints them
#   --keep     keep the test directory (printed at the end)
#   --np N     ranks of the multi-rank cases (default 2; bound-disk uses 4)
#
# Output: one line per case, "ok CASE: what" or "ok CASE # skip: why" (a
# missing prerequisite: no setpriv, mount not permitted; counted as passed,
# and listed again at the end) or "FAIL CASE: why"; then exactly
# "N passed, M failed" as the last line; exit status 1 when a case failed.
#
# Environment: T_STORE (t_store), STORE_UTIL (store_util), SFIO_STORE_TOOL
# (the admin tool; default ../../tools/sfio-store from the current
# directory, i.e. the build tree's when run from build/test/store, else
# sfio-store in PATH),
# SFIO_COMPONENT_PATH (the build tree's components, see
# ../sfio_component_path.sh), SFIO_TEST_DIR (default /tmp; the cases that
# plant stores need a directory every user can traverse), STORE_STALE_GAP
# (seconds between a crash and the change that makes its store stale,
# default 2: larger than the store's allowance for a write in flight),
# STORE_TESTS_NO_PRIV (set: skip the cases that need another user or a
# mount, as an unprivileged run would).
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../sfio_component_path.sh"
sfio_use_build_components

np=2
keep=0
list=0
only=()
while [ $# -gt 0 ]; do
    case "$1" in
    --np) np=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --list) list=1; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    -*) echo "run_store_tests.sh: unknown option $1" >&2; exit 2 ;;
    *) only+=("$1"); shift ;;
    esac
done

find_bin() { # name, env value: first executable of env, ./name, $here/name
    local b
    for b in "$2" "./$1" "$here/$1"; do
        [ -n "$b" ] && [ -x "$b" ] && { (cd "$(dirname "$b")" && echo "$PWD/$(basename "$b")"); return 0; }
    done
    return 1
}
T_STORE=$(find_bin t_store "${T_STORE:-}") || { echo "run_store_tests.sh: t_store not found (make check builds it)" >&2; exit 2; }
STORE_UTIL=$(find_bin store_util "${STORE_UTIL:-}") || { echo "run_store_tests.sh: store_util not found" >&2; exit 2; }
TOOL=${SFIO_STORE_TOOL:-}
if [ -z "$TOOL" ]; then   # the build tree's tools/ (run from build/test/store), else PATH
    for t in "$PWD/../../tools/sfio-store" "$here/../../tools/sfio-store" "$(command -v sfio-store 2>/dev/null)"; do
        [ -n "$t" ] && [ -x "$t" ] && { TOOL=$t; break; }
    done
    TOOL=${TOOL:-$PWD/../../tools/sfio-store}
fi
gap=${STORE_STALE_GAP:-2}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# versioned named: auto takes range locks, and makes no store, on one
# node over a local file system
STACK="--mca fs versioned --mca fbtl versioned --mca fbtl_versioned_atomic_mode versioned"
base=$(mktemp -d "${SFIO_TEST_DIR:-/tmp}/st-cases.XXXXXX") || exit 2
chmod 755 "$base"
mounts=()
bgpids=()
cleanup() {
    local p m
    for p in "${bgpids[@]}"; do kill -9 "$p" 2>/dev/null; done
    for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null; done
    if [ $keep = 1 ]; then :
    elif [ "${failed:-0}" -gt 0 ] 2>/dev/null; then   # the failed cases' logs stay
        for m in "$base"/*; do [ -e "$m/FAILED" ] || rm -rf "$m"; done
    else rm -rf "$base"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The build tree may sit where user nobody cannot go (CI builds under
# /root in the trixie root): the programs and the components it runs are
# then copied into the case directory, which it can reach.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null &&
   ! setpriv --reuid=nobody --regid="$(id -gn nobody 2>/dev/null || echo nogroup)" --clear-groups test -x "$T_STORE"; then
    mkdir -p "$base/bin/components" && chmod -R 755 "$base/bin"
    cp "$T_STORE" "$STORE_UTIL" "$base/bin/" && T_STORE=$base/bin/t_store && STORE_UTIL=$base/bin/store_util
    if [ -x "$TOOL" ]; then cp "$TOOL" "$base/bin/" && TOOL=$base/bin/sfio-store; fi
    help=$here/../../ompi/mca/common/sfio/help-mca-common-sfio.txt
    if [ -r "$help" ]; then cp "$help" "$base/bin/" && export SFIO_HELP_DIR=$base/bin; fi
    if [ -n "${SFIO_COMPONENT_PATH:-}" ] && [ -d "$SFIO_COMPONENT_PATH" ]; then
        # the components and the engine library beside them (libmca_common_sfio.so.0)
        cp -L "$SFIO_COMPONENT_PATH"/*.so "$SFIO_COMPONENT_PATH"/*.so.* "$base/bin/components/" 2>/dev/null
        SFIO_COMPONENT_PATH=$base/bin/components
        sfio_use_build_components
    fi
    chmod -R a+rX "$base/bin"
fi

# ---------------------------------------------------------------- helpers
# mpi NP ARGS...: t_store on NP ranks as $AS (empty: the caller) with
# $STACK $MCA, output to $out (stdout) and $err (stderr); $TMO seconds.
AS=
MCA=
TMO=60
out=/dev/null
err=/dev/null
mpi() {
    local n=$1; shift
    local pre=()
    [ -n "$AS" ] && pre=(setpriv --reuid="$AS" --regid="$(id -gn "$AS" 2>/dev/null || echo nogroup)" --clear-groups env HOME="$base")
    # from a directory the user can reach (Open MPI 5.0's launcher crashes
    # in one it cannot, e.g. a build tree under /root)
    # shellcheck disable=SC2086
    (cd "$base" && timeout -s TERM -k 5 "$TMO" "${pre[@]}" mpirun --allow-run-as-root --oversubscribe -np "$n" --mca mpi_yield_when_idle 1 \
        $STACK $MCA "$T_STORE" "$@" >>"$out" 2>>"$err")
}
# bg_lock USER FILE READY: a lock holder (store_util lockhold on bytes 0..64)
# in the background as USER (empty: the caller); its pid (the holder
# itself, setpriv execs) goes to bgpids, killed after the case
bg_lock() {
    local u=$1 f=$2 r=$3
    if [ -n "$u" ]; then
        setpriv --reuid="$u" --regid="$(id -gn "$u" 2>/dev/null || echo nogroup)" --clear-groups \
            "$STORE_UTIL" lockhold "$f" 0 64 "$r" </dev/null >/dev/null 2>&1 &
    else
        "$STORE_UTIL" lockhold "$f" 0 64 "$r" </dev/null >/dev/null 2>&1 &
    fi
    bgpids+=($!)
    local i
    for i in $(seq 1 100); do [ -e "$r" ] && return 0; sleep 0.02; done
    why="lock holder on $f did not start"; return 1
}
run_as() { # user cmd...: run as user (or as is when user is empty)
    local u=$1; shift
    if [ -n "$u" ]; then setpriv --reuid="$u" --regid="$(id -gn "$u" 2>/dev/null || echo nogroup)" --clear-groups env HOME="$base" "$@"
    else "$@"; fi
}
# stores DIR: store directories in DIR, by the contract's name and by the
# name the code before issue 20 used (.<base>.sfio.<id>, sfio-<hash>.<base>.<id>)
stores() { ls -1Ad "$1"/.sfio-store.* "$1"/.*.sfio.* "$1"/sfio-[0-9a-f]*.* 2>/dev/null; }
nstores() { stores "$1" | wc -l; }
ihex() { printf '%x' "$(stat -c %i "$1")"; }
rand32() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }
# the default-verbosity line about a store: stderr, "sfio" and "store"
store_msg() { grep -v '^t_store:' "$1" 2>/dev/null | grep -i 'sfio' | grep -i 'store' | head -1; }
has_store_msg() { [ -n "$(store_msg "$1")" ]; }
tail_of() { tr '\n' ' ' <"$1" | cut -c1-300; }
# vwhy: t_store's verdict reason, else the first lines of stderr
vwhy() {
    local v; v=$(sed -n 's/^t_store: verdict FAIL: //p' "$out")
    echo "${v:-$(grep -v '^-*$' "$err" | head -3 | tr '\n' ' ' | cut -c1-300)}"
}
# open_class: the class t_store's last open reported
# (Open MPI 5.0 may put a byte of its own before a rank's first line)
open_class() { sed -n 's/^.*t_store: open class=\([A-Z_a-z0-9]*\).*/\1/p' "$out" | tail -1; }
open_time() { sed -n 's/^.*t_store: open class=[^ ]* time=\([0-9.]*\).*/\1/p' "$out" | tail -1; }

# crash NP FILE TAG LEN [extra t_store args]: t_store writes [0, NP*LEN) of
# FILE with TAG atomically (rank r its LEN bytes), then every rank kills
# itself (kill -9): the store keeps versions the flat file does not have.
# Makes REF=FILE.ref (outside the file's directory: $cd/ref.TAG) and checks
# that a store exists and that the flat file lacks the data (else the case
# would prove nothing).
crash() {
    local n=$1 f=$2 t=$3 l=$4; shift 4
    ref=$cd/ref.$t
    "$STORE_UTIL" gen "$ref" $((n * l)) "$t:0:$((n * l))" || { why="store_util gen failed"; return 1; }
    mpi "$n" --file "$f" --write-tag "$t" --len "$l" --crash "$@"
    grep -q '^t_store: written, crashing' "$out" || { why="crash workload did not run: $(tail_of "$out") $(tail_of "$err")"; return 1; }
    local d
    d=$(dirname "$(readlink -f "$f")")
    if [ -z "$(stores "$d")$(stores "$(dirname "$f")")" ] && [ -z "${CRASH_STORE_DIR:-}" ]; then
        why="no store after the crash"; return 1
    fi
    if cmp -s "$f" "$ref"; then why="the flat file already holds the data after the crash (no store to recover)"; return 1; fi
    return 0
}
sum() { md5sum <"$1" | cut -d' ' -f1; }

have_setpriv() {
    [ -z "${STORE_TESTS_NO_PRIV:-}" ] || { why="STORE_TESTS_NO_PRIV set"; return 1; }
    command -v setpriv >/dev/null || { why="setpriv not installed"; return 1; }
    [ "$(id -u)" = 0 ] || { why="not root: cannot act as another user"; return 1; }
    id nobody >/dev/null 2>&1 || { why="no user nobody"; return 1; }
    run_as nobody test -x "$T_STORE" || { why="user nobody cannot run $T_STORE"; return 1; }
    run_as nobody test -w "$base" -o -x "$base" || { why="user nobody cannot reach $base"; return 1; }
    return 0
}
mount_tmpfs() { # dir size
    mkdir -p "$1"
    [ -z "${STORE_TESTS_NO_PRIV:-}" ] || { why="STORE_TESTS_NO_PRIV set"; return 1; }
    [ "$(id -u)" = 0 ] || { why="not root: cannot mount a tmpfs"; return 1; }
    mount -t tmpfs -o size="$2",mode=0755 tmpfs "$1" 2>/dev/null || { why="mount -t tmpfs not permitted here"; return 1; }
    mounts+=("$1")
    return 0
}
umount_tmpfs() { umount "$1" 2>/dev/null || umount -l "$1" 2>/dev/null; }

# a crashed store made by user nobody in $cd/att (its own file), for planting
att_store() {
    att=$cd/att
    mkdir -p "$att" && chown nobody "$att"
    local sv_as=$AS
    AS=nobody
    crash 2 "$att/data" 66 65536; local rc=$?
    AS=$sv_as
    [ $rc = 0 ] || { why="as nobody: $why"; return 1; }
    astore=$(stores "$att" | head -1)
    [ -n "$astore" ] || { why="nobody's crash left no store beside its file"; return 1; }
    return 0
}
# plant STORE VICTIM DESTDIR [old-name-dir]: as nobody, put copies of STORE
# where the store of VICTIM is looked for: DESTDIR/.sfio-store.<victim inode
# hex>.<random> (the contract's name) and .<base>.sfio.<id> beside the
# victim (the old name), with the identity (device, inode, birth time) in
# coord rewritten from nobody's file to the victim's.
plant() {
    local s=$1 v=$2 dest=$3 oldname=$4 p
    local ad ai ab vd vi vb
    read -r ad ai ab <<<"$(stat -c '%d %i %W' "$att/data")"
    read -r vd vi vb <<<"$(stat -c '%d %i %W' "$v")"
    for p in "$dest/.sfio-store.$(printf %x "$vi").$(rand32)" "$oldname"; do
        [ -n "$p" ] || continue
        run_as nobody cp -a "$s" "$p" || return 1
        if [ -f "$p/coord" ] && [ ! -L "$p/coord" ]; then
            run_as nobody "$STORE_UTIL" patch "$p/coord" "$ad" "$vd" "$ai" "$vi" >/dev/null
            [ "$ab" -gt 0 ] 2>/dev/null && run_as nobody "$STORE_UTIL" patch "$p/coord" "$ab" "$vb" >/dev/null
        fi
        planted+=("$p")
    done
    return 0
}
# victim: root's 0600 file in a sticky 1777 directory, known content (tag 40)
victim() {
    vdir=$cd/sticky
    mkdir -p "$vdir" && chmod 1777 "$vdir"
    victim_f=$vdir/data
    "$STORE_UTIL" gen "$victim_f" 131072 40:0:131072 && chmod 600 "$victim_f"
    victim_sum=$(sum "$victim_f")
}

# ------------------------------------------------------------------ cases
cases=()
desc=()
def() { cases+=("$1"); desc+=("$2"); }

def layout-lazy "no store directory while a file is only opened and written non-atomically (finding 10)"
case_layout_lazy() {
    mpi "$np" --mode layout --check lazy --file "$cd/data" --len 4096
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def layout-name "atomic use makes one store .sfio-store.<inode hex>.<32 hex> beside the real path, 0700, entries 0600, the user's"
case_layout_name() {
    mpi "$np" --mode layout --check name --file "$cd/data" --len 4096
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def layout-storedir "with fs_versioned_store_dir DIR the store is DIR/sfio-store-<euid>/.sfio-store.<inode hex>.<32 hex>, both 0700"
case_layout_storedir() {
    mkdir -p "$cd/sd"; chmod 1777 "$cd/sd"
    MCA="--mca fs_versioned_store_dir $cd/sd"
    mpi "$np" --mode layout --check name --file "$cd/data" --len 4096 --store-dir "$cd/sd"
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def layout-cleanup "a clean close removes the store (regression guard)"
case_layout_cleanup() {
    mpi "$np" --mode layout --check cleanup --file "$cd/data" --len 4096
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def recover-rdwr "a crashed store is recovered by the next read-write open (regression guard)"
case_recover_rdwr() {
    crash "$np" "$cd/data" 30 65536 || return 1
    mpi "$np" --file "$cd/data" --amode rdwr --ref "$ref"
    [ "$(open_class)" = MPI_SUCCESS ] || { why="open: $(open_class) $(tail_of "$err")"; return 1; }
    grep -q 'mismatches=[1-9]' "$out" && { why="not recovered: $(grep -m1 'mismatches=[1-9]' "$out" | sed 's/^t_store: //')"; return 1; }
    cmp -s "$cd/data" "$ref" || { why="flat file differs after the recovering open: $(grep -m1 ' read ' "$out")"; return 1; }
    [ "$(nstores "$cd")" = 0 ] || { why="store left after recovery and a clean close"; return 1; }
    return 0
}

def recover-carried "on network storage, versions of 1 KiB carry their bytes in their records (data logs empty): a kill -9 crash is recovered from the records"
case_recover_carried() {
    MCA="--mca fbtl_versioned_storage network"   # records carry small versions there
    # ... but never for a store in memory (the CI's trixie root has /tmp on tmpfs)
    [ "$(stat -f -c %T "$cd")" != tmpfs ] || { why="$cd is on tmpfs: a store in memory never carries"; return 77; }
    crash "$np" "$cd/data" 35 65536 --pieces 64 || return 1
    local st logged
    st=$(stores "$cd" | head -1)
    logged=$(cat "$st"/log.* 2>/dev/null | wc -c)
    [ "$logged" = 0 ] || { why="the data logs hold $logged bytes: the versions did not carry them"; return 1; }
    mpi "$np" --file "$cd/data" --amode rdwr --ref "$ref"
    [ "$(open_class)" = MPI_SUCCESS ] || { why="open: $(open_class) $(tail_of "$err")"; return 1; }
    cmp -s "$cd/data" "$ref" || { why="flat file differs after the recovering open: $(grep -m1 ' read ' "$out")"; return 1; }
    [ "$(nstores "$cd")" = 0 ] || { why="store left after recovery and a clean close"; return 1; }
    return 0
}

def ro-recover "finding 4: a read-only open recovers the crashed store before any rank reads"
case_ro_recover() {
    crash "$np" "$cd/data" 31 65536 || return 1
    mpi "$np" --file "$cd/data" --amode rdonly --ref "$ref"
    [ "$(open_class)" = MPI_SUCCESS ] || { why="read-only open: $(open_class) $(store_msg "$err")"; return 1; }
    if grep -q 'mismatches=[1-9]' "$out"; then why="read-only open read what the crash left: $(grep -m1 'mismatches=[1-9]' "$out" | sed 's/^t_store: //')"; return 1; fi
    cmp -s "$cd/data" "$ref" || { why="flat file not recovered by the read-only open"; return 1; }
    return 0
}

def ro-noaccess "finding 4: a read-only open that cannot write the file fails (MPI_ERR_ACCESS) naming the store and the tool"
case_ro_noaccess() {
    have_setpriv || return 77
    mkdir -p "$cd/u" && chown nobody "$cd/u"
    AS=nobody
    crash "$np" "$cd/u/data" 32 65536 || return 1
    run_as nobody chmod 0444 "$cd/u/data"
    local s; s=$(stores "$cd/u" | head -1)
    mpi "$np" --file "$cd/u/data" --amode rdonly --ref "$ref"
    AS=
    local c; c=$(open_class)
    if [ "$c" = MPI_SUCCESS ]; then
        why="read-only open succeeded with an unrecoverable store ($(grep -m1 ' read ' "$out" | sed 's/^t_store: //'))"; return 1
    fi
    [ "$c" = MPI_ERR_ACCESS ] || { why="open failed with $c, want MPI_ERR_ACCESS"; return 1; }
    local m; m=$(store_msg "$err")
    [ -n "$m" ] || { why="no default-verbosity message about the store"; return 1; }
    local sb; sb=$(basename "$s")
    case "$m" in *"$sb"*) ;; *) why="message does not name the store $sb: $m"; return 1 ;; esac
    local rest=${m//$sb/}
    case "$rest" in *sfio-store*) ;; *) why="message does not name the sfio-store tool: $m"; return 1 ;; esac
    return 0
}

def stale-jobB "finding 3a: job A killed after job B wrote and closed the file: the next open keeps B's data"
case_stale_jobB() {
    local refA=$cd/refA refB=$cd/refB
    "$STORE_UTIL" gen "$refB" $((np * 65536)) "61:0:$((np * 65536))"
    ( out=$cd/outA; err=$cd/errA; mpi "$np" --file "$cd/data" --write-tag 60 --len 65536 --hold --ready "$cd/readyA" --pidfile "$cd/pidA" ) &
    local ja=$!
    bgpids+=("$ja")
    local i
    for i in $(seq 1 200); do [ -e "$cd/readyA" ] && break; sleep 0.05; done
    [ -e "$cd/readyA" ] || { kill -9 "$ja" 2>/dev/null; why="job A never wrote: $(tail_of "$cd/errA")"; return 1; }
    sleep "$gap"
    mpi "$np" --file "$cd/data" --amode rdwr --write-tag 61 --len 65536
    local brc=$?
    for i in "$cd"/pidA.*; do kill -9 "$(cat "$i")" 2>/dev/null; done
    wait "$ja" 2>/dev/null
    [ $brc = 0 ] || { why="job B failed (exit $brc) while job A was alive: $(tail_of "$out")"; return 1; }
    cmp -s "$cd/data" "$refB" || { why="job B's closed file is not B's data before the kill"; return 1; }
    : >"$out"; : >"$err"
    mpi "$np" --file "$cd/data" --amode rdwr --ref "$refB"
    if ! cmp -s "$cd/data" "$refB"; then why="the next open replaced job B's closed data with job A's versions"; return 1; fi
    has_store_msg "$err" || { why="B's data kept but no default-verbosity line refusing A's stale store"; return 1; }
    return 0
}

def stale-rewritten "finding 3b: after a crash the file is rewritten by another program (cp): the next open keeps the new data"
case_stale_rewritten() {
    crash "$np" "$cd/data" 62 65536 || return 1
    sleep "$gap"
    "$STORE_UTIL" gen "$cd/new" $((np * 65536)) "63:0:$((np * 65536))"
    cp "$cd/new" "$cd/data"
    mpi "$np" --file "$cd/data" --amode rdwr --ref "$cd/new"
    cmp -s "$cd/data" "$cd/new" || { why="the rewritten file was reverted to the crashed job's versions ($(cmp "$cd/data" "$cd/new" 2>&1 | head -1))"; return 1; }
    has_store_msg "$err" || { why="new data kept but no default-verbosity line refusing the stale store"; return 1; }
    [ "$(nstores "$cd")" -ge 1 ] || { why="the refused store was not left for the tool"; return 1; }
    return 0
}

def stale-rm "finding 3c: after rm and re-creating the file (2000 bytes) the next open does not resurrect the deleted file"
case_stale_rm() {
    crash "$np" "$cd/data" 64 65536 || return 1
    rm -f "$cd/data"
    "$STORE_UTIL" gen "$cd/data" 2000 65:0:2000; cp "$cd/data" "$cd/new"
    mpi "$np" --file "$cd/data" --amode rdwr --ref "$cd/new"
    cmp -s "$cd/data" "$cd/new" || { why="re-created 2000-byte file is now $(stat -c %s "$cd/data") bytes with the deleted file's data"; return 1; }
    return 0
}

def stale-delete "finding 3c: MPI_File_delete discards the file's dead stores; a re-created file is not resurrected"
case_stale_delete() {
    crash "$np" "$cd/data" 66 65536 || return 1
    mpi 1 --mode delete --file "$cd/data"
    grep -q 'delete class=MPI_SUCCESS' "$out" || { why="MPI_File_delete failed: $(tail_of "$out")"; return 1; }
    local left; left=$(nstores "$cd")
    "$STORE_UTIL" gen "$cd/data" 2000 67:0:2000; cp "$cd/data" "$cd/new"
    mpi "$np" --file "$cd/data" --amode rdwr --ref "$cd/new"
    cmp -s "$cd/data" "$cd/new" || { why="re-created file resurrected ($(stat -c %s "$cd/data") bytes); $left store(s) were left by MPI_File_delete"; return 1; }
    [ "$left" = 0 ] || { why="$left store(s) left by MPI_File_delete"; return 1; }
    return 0
}

def stale-create "finding 3c: rm, then MPI_MODE_CREATE makes a new file: no old data, no store naming its inode left"
case_stale_create() {
    crash "$np" "$cd/data" 68 65536 || return 1
    local oldino; oldino=$(ihex "$cd/data")
    rm -f "$cd/data"
    "$STORE_UTIL" gen "$cd/new" $((np * 1000)) "69:0:$((np * 1000))"
    mpi "$np" --file "$cd/data" --amode create --write-tag 69 --atomic 0 --len 1000
    cmp -s "$cd/data" "$cd/new" || { why="new file (MPI_MODE_CREATE) is $(stat -c %s "$cd/data") bytes, not the $((np * 1000)) it was written with: the deleted file's store was applied"; return 1; }
    local newino; newino=$(ihex "$cd/data")
    if [ "$newino" = "$oldino" ] && ls -d "$cd"/.sfio-store."$newino".* >/dev/null 2>&1; then
        why="the new file reused inode $newino and a stale store naming it was left"; return 1
    fi
    mpi "$np" --file "$cd/data" --amode rdwr --ref "$cd/new"
    cmp -s "$cd/data" "$cd/new" || { why="a later open changed the new file"; return 1; }
    return 0
}

def alias-symlink "finding 3d: crash through a symlink (other dir): the store is beside the real path; opening the real name recovers"
case_alias_symlink() {
    mkdir -p "$cd/real" "$cd/links"
    : >"$cd/real/data"
    ln -s ../real/data "$cd/links/data"
    crash "$np" "$cd/links/data" 70 65536 || return 1
    local beside; beside=$(nstores "$cd/links")
    mpi "$np" --file "$cd/real/data" --amode rdwr --ref "$ref"
    cmp -s "$cd/real/data" "$ref" || { why="open of the real name did not recover ($beside store(s) beside the symlink, $(nstores "$cd/real") beside the real file)"; return 1; }
    [ "$(nstores "$cd/links")" = 0 ] || { why="a store is left beside the symlink"; return 1; }
    return 0
}

def alias-hardlink "finding 3d: crash through one name, an open through a hard link in the same directory recovers (found by inode)"
case_alias_hardlink() {
    crash "$np" "$cd/data" 71 65536 || return 1
    ln "$cd/data" "$cd/other"
    mpi "$np" --file "$cd/other" --amode rdwr --ref "$ref"
    cmp -s "$cd/other" "$ref" || { why="open through the hard link did not recover"; return 1; }
    return 0
}

def alias-rename "finding 3d: crash, rename within the directory: an open of the new name recovers"
case_alias_rename() {
    crash "$np" "$cd/data" 72 65536 || return 1
    mv "$cd/data" "$cd/renamed"
    mpi "$np" --file "$cd/renamed" --amode rdwr --ref "$ref"
    cmp -s "$cd/renamed" "$ref" || { why="open of the renamed file did not recover"; return 1; }
    [ "$(nstores "$cd")" = 0 ] || { why="store left after the recovering open of the renamed file"; return 1; }
    return 0
}

# refused own stores: the store stays, the file is unchanged, one line at
# default verbosity; $1 = how to spoil the store (a function of $s)
refused_own() {
    crash "$np" "$cd/data" 73 65536 || return 1
    s=$(stores "$cd" | head -1)
    # the contract's name for this file too, so that both codes look there
    local sn="$cd/.sfio-store.$(ihex "$cd/data").$(rand32)"
    case "$s" in */.sfio-store.*) sn=$s ;; *) cp -a "$s" "$sn" ;; esac
    "$1" "$s" "$sn" || { why="could not spoil the store"; return 1; }
    local before; before=$(sum "$cd/data")
    mpi "$np" --file "$cd/data" --amode rdwr
    [ "$(open_class)" = MPI_SUCCESS ] || { why="open failed ($(open_class)) instead of refusing the store: $(store_msg "$err")"; return 1; }
    [ "$(sum "$cd/data")" = "$before" ] || { why="the refused store was applied to the file"; return 1; }
    has_store_msg "$err" || { why="file unchanged but no default-verbosity line refusing the store"; return 1; }
    [ -e "$sn" ] || [ -L "$sn" ] || { why="the refused store was removed (it must stay for the tool)"; return 1; }
    return 0
}
spoil_mode() { chmod 0755 "$1" "$2"; }
spoil_entry_symlink() { # rec.0 and log.0 are symlinks to copies
    local d f
    for d in "$1" "$2"; do
        for f in rec.0 log.0; do
            [ -f "$d/$f" ] && [ ! -L "$d/$f" ] || continue
            cp "$d/$f" "$cd/copy.$f.$(basename "$d")" && rm -f "$d/$f" && ln -s "$cd/copy.$f.$(basename "$d")" "$d/$f"
        done
    done
}
spoil_dir_symlink() { # the store name is a symlink to the store moved away
    local d i=0
    for d in "$1" "$2"; do
        i=$((i + 1))
        [ -e "$d" ] && [ ! -L "$d" ] || continue
        mv "$d" "$cd/moved.$i" && ln -s "$cd/moved.$i" "$d"
    done
}

def refuse-mode "finding 1: the user's own store of the file with mode 0755 is refused (file unchanged, store kept, one line)"
case_refuse_mode() { refused_own spoil_mode; }

def refuse-entry-symlink "finding 1: a store whose rec.0/log.0 are symlinks is refused, never followed"
case_refuse_entry_symlink() { refused_own spoil_entry_symlink; }

def refuse-dir-symlink "finding 1: a store name that is a symlink to a store directory is refused"
case_refuse_dir_symlink() { refused_own spoil_dir_symlink; }

def refuse-other-file "finding 1/3: a store made for another file (device/inode differ), renamed to this file's store name, is refused"
case_refuse_other_file() {
    crash "$np" "$cd/a" 74 65536 || return 1
    local s; s=$(stores "$cd" | head -1)
    "$STORE_UTIL" gen "$cd/b" 131072 75:0:131072
    local before; before=$(sum "$cd/b")
    local sn="$cd/.sfio-store.$(ihex "$cd/b").$(rand32)"
    cp -a "$s" "$sn"
    [ -n "${s##*/.sfio-store.*}" ] && mv "$s" "$cd/.b.sfio.planted"
    mpi "$np" --file "$cd/b" --amode rdwr
    [ "$(sum "$cd/b")" = "$before" ] || { why="the store of another file was applied"; return 1; }
    [ "$(open_class)" = MPI_SUCCESS ] || { why="open failed ($(open_class)) instead of refusing the store"; return 1; }
    has_store_msg "$err" || { why="no default-verbosity line refusing the store"; return 1; }
    [ -d "$sn" ] || { why="the refused store was removed"; return 1; }
    return 0
}

def refuse-lock "finding 2: a refused store (mode 0755) whose coord bytes 0..64 another process holds locked delays the open < 2 s"
case_refuse_lock() {
    crash "$np" "$cd/data" 76 65536 || return 1
    local s; s=$(stores "$cd" | head -1)
    local sn="$cd/.sfio-store.$(ihex "$cd/data").$(rand32)"
    [ -n "${s##*/.sfio-store.*}" ] && cp -a "$s" "$sn"
    chmod 0755 "$s" "$sn" 2>/dev/null
    local c
    for c in "$s/coord" "$sn/coord"; do
        [ -f "$c" ] || continue
        bg_lock "" "$c" "$cd/held.$(basename "$(dirname "$c")")" || return 1
    done
    TMO=12
    timed_open "$cd/data"
}

# timed_open FILE: open read-write and close on $np ranks, 20 s at most; the
# open must return in < 2 s and the whole job (close included) must end
timed_open() {
    TMO=12
    local t0 t1 rc; t0=$(date +%s.%N)
    mpi "$np" --file "$1" --amode rdwr
    rc=$?
    t1=$(date +%s.%N)
    local wall; wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    local ot; ot=$(open_time)
    [ -n "$ot" ] || { why="MPI_File_open did not return within 12 s (mpirun killed after $wall s)"; return 1; }
    awk -v t="$ot" 'BEGIN { exit !(t < 2.0) }' || { why="MPI_File_open took $ot s with the lock held"; return 1; }
    [ $rc = 0 ] || { why="MPI_File_open returned in $ot s but the job did not finish (exit $rc after $wall s: close or later blocked on the lock)"; return 1; }
    return 0
}

def plant-beside "finding 1: nobody's crashed store planted beside root's 0600 file (1777 dir) is never applied, one line, no change"
case_plant_beside() {
    have_setpriv || return 77
    victim
    att_store || return 1
    planted=()
    plant "$astore" "$victim_f" "$vdir" "$vdir/.data.sfio.planted" || { why="planting failed"; return 1; }
    mpi "$np" --file "$victim_f" --amode rdwr
    [ "$(sum "$victim_f")" = "$victim_sum" ] || { why="root's open applied nobody's planted store: the victim file changed"; return 1; }
    [ "$(open_class)" = MPI_SUCCESS ] || { why="open failed ($(open_class)): a planted store must not block the open"; return 1; }
    has_store_msg "$err" || { why="victim unchanged but no default-verbosity line refusing the planted store"; return 1; }
    return 0
}

def plant-symlog "finding 1: a planted store whose log.N are symlinks to a root-only secret: victim unchanged, the secret copied nowhere"
case_plant_symlog() {
    have_setpriv || return 77
    victim
    att_store || return 1
    local secret=$cd/secret
    yes TOPSECRET-0123456789 | head -c 262144 >"$secret"; chmod 600 "$secret"
    local f
    for f in "$astore"/log.*; do run_as nobody rm -f "$f" && run_as nobody ln -s "$secret" "$f"; done
    planted=()
    plant "$astore" "$victim_f" "$vdir" "$vdir/.data.sfio.planted" || { why="planting failed"; return 1; }
    mpi "$np" --file "$victim_f" --amode rdwr
    local leaks; leaks=$(grep -rlsF TOPSECRET "$cd" "${SFIO_TEST_DIR:-/tmp}"/sfio-store-* 2>/dev/null | grep -v "^$secret\$" | head -3 | tr '\n' ' ')
    [ -z "$leaks" ] || { why="the secret was copied into: $leaks"; return 1; }
    [ "$(sum "$victim_f")" = "$victim_sum" ] || { why="the victim file changed"; return 1; }
    has_store_msg "$err" || { why="no default-verbosity line refusing the planted store"; return 1; }
    return 0
}

# planted in a shared store directory (fs_versioned_store_dir, like /dev/shm)
plant_shared() { # $1 = dir|symlink
    have_setpriv || return 77
    victim
    att_store || return 1
    local shm=$cd/shm
    mkdir -p "$shm" && chmod 1777 "$shm"
    local own=$shm/sfio-store-$(id -u)
    if [ "$1" = dir ]; then
        run_as nobody mkdir -m 0700 "$own"
        run_as nobody chmod 0777 "$own"
    else
        run_as nobody mkdir -m 0777 "$cd/att/home"
        run_as nobody ln -s "$cd/att/home" "$own"
    fi
    planted=()
    plant "$astore" "$victim_f" "$own" "$shm/sfio-$("$STORE_UTIL" fnv "$victim_f").data.planted" || { why="planting failed"; return 1; }
    MCA="--mca fs_versioned_store_dir $shm"
    mpi "$np" --file "$victim_f" --amode rdwr --write-tag 41 --len 4096
    local rc=$?
    [ "$(open_class)" = MPI_SUCCESS ] || { why="open failed ($(open_class)): a planted store must not block the open"; return 1; }
    "$STORE_UTIL" gen "$cd/want" 131072 40:0:131072 "41:0:$((np * 4096))"
    cmp -s "$victim_f" "$cd/want" || { why="the victim file is not its own data plus root's write (planted store applied?) (t_store exit $rc)"; return 1; }
    local mine; mine=$(find -L "$own" -user "$(id -u)" 2>/dev/null | head -1)
    [ -z "$mine" ] || { why="root put its store inside nobody's directory: $mine"; return 1; }
    has_store_msg "$err" || { why="no default-verbosity line about the foreign $own"; return 1; }
    return 0
}

def plant-storedir "finding 1: fs_versioned_store_dir shared (1777): nobody's sfio-store-0 directory with a planted store is refused and unused"
case_plant_storedir() { plant_shared dir; }

def plant-storedir-link "finding 1: fs_versioned_store_dir shared: sfio-store-0 a symlink to nobody's directory is refused and unused"
case_plant_storedir_link() { plant_shared symlink; }

def plant-lock "finding 2: nobody's planted store whose coord bytes 0..64 nobody holds locked delays root's open < 2 s"
case_plant_lock() {
    have_setpriv || return 77
    victim
    att_store || return 1
    planted=()
    plant "$astore" "$victim_f" "$vdir" "$vdir/.data.sfio.planted" || { why="planting failed"; return 1; }
    local p
    for p in "${planted[@]}"; do
        [ -f "$p/coord" ] || continue
        bg_lock nobody "$p/coord" "$cd/att/held.$(basename "$p")" || return 1
    done
    timed_open "$victim_f" || return 1
    [ "$(sum "$victim_f")" = "$victim_sum" ] || { why="the victim file changed"; return 1; }
    return 0
}

def bound-disk "finding 5: 4 ranks rewriting a 208 KiB file (atomic, no sync, 8 s): store du < 4 x max_log x 2, file correct"
case_bound_disk() {
    local maxlog=1048576 n=4 secs=8
    local bound=$((n * maxlog * 2 / 1024))
    MCA="--mca fs_versioned_store_max_log_bytes $maxlog"
    ( mpi "$n" --mode churn --file "$cd/data" --size 212992 --piece 16384 --seconds "$secs" --rss-max-kb 0 --ready "$cd/ready" --pidfile "$cd/pid" ) &
    local j=$! peak=0 du over=0
    bgpids+=("$j")
    while kill -0 "$j" 2>/dev/null; do
        du=$(stores "$cd" | xargs -r du -skc 2>/dev/null | tail -1 | cut -f1)
        du=${du:-0}
        [ "$du" -gt "$peak" ] && peak=$du
        if [ "$du" -ge "$bound" ]; then
            over=1
            local f; for f in "$cd"/pid.*; do kill -9 "$(cat "$f")" 2>/dev/null; done
            break
        fi
        sleep 0.2
    done
    wait "$j" 2>/dev/null
    [ $over = 0 ] || { why="store reached $peak KiB (bound $bound KiB = 4 ranks x max_log $((maxlog / 1024)) KiB x 2) during the run; killed"; return 1; }
    grep -q '^t_store: verdict ok' "$out" || { why="run failed: $(vwhy)"; return 1; }
    echo "  (peak store $peak KiB, $(sed -n 's/^t_store: churn total_writes=\([0-9]*\).*/\1/p' "$out") writes)" >>"$cd/note"
    return 0
}

def bound-rss "finding 5: VmRSS per rank does not grow with the number of atomic writes (5k -> 105k writes of 64 B: < 2 MiB)"
case_bound_rss() {
    MCA="--mca fs_versioned_store_max_versions 4096"
    mpi "$np" --mode churn --file "$cd/data" --size 212992 --piece 64 --writes 105000 --rss-at 5000 --rss-max-kb 2048
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def enospc-indep "finding 6: 4 MiB tmpfs, independent atomic writes + sync: MPI_ERR_NO_SPACE, every write reported successful is in the file"
case_enospc_indep() {
    mount_tmpfs "$cd/mnt" 4m || return 77
    mpi "$np" --mode enospc --file "$cd/mnt/data" --chunk 262144 --max-chunks 32
    umount_tmpfs "$cd/mnt"
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def enospc-nosync "finding 6: 4 MiB tmpfs, independent atomic writes, no sync: a write fails (MPI_ERR_NO_SPACE) or its data is in the file after close"
case_enospc_nosync() {
    mount_tmpfs "$cd/mnt" 4m || return 77
    mpi "$np" --mode enospc --sync-every 0 --file "$cd/mnt/data" --chunk 262144 --max-chunks 32
    umount_tmpfs "$cd/mnt"
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def enospc-coll "finding 6/10: 4 MiB tmpfs, collective atomic writes: every rank gets MPI_ERR_NO_SPACE, nothing reported successful is lost"
case_enospc_coll() {
    mount_tmpfs "$cd/mnt" 4m || return 77
    mpi "$np" --mode enospc --coll --file "$cd/mnt/data" --chunk 262144 --max-chunks 32
    umount_tmpfs "$cd/mnt"
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def forced-ufs "finding 7: forced versioned mode over fs/ufs (no store possible): atomic write or its sync returns an error"
case_forced_ufs() {
    STACK="--mca fs ufs --mca fbtl versioned"
    MCA="--mca fbtl_versioned_atomic_mode versioned"
    mpi "$np" --mode forced --file "$cd/data" --len 65536
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def forced-nostoredir "finding 7: forced versioned mode, no place for a store (user nobody, a file it may write in a directory it may not): atomic write or its sync returns an error"
case_forced_nostoredir() {
    have_setpriv || return 77
    mkdir -p "$cd/ro" && chmod 755 "$cd/ro" && : >"$cd/ro/data" && chown nobody "$cd/ro/data"
    MCA=   # versioned: STACK names it
    AS=nobody mpi "$np" --mode forced --file "$cd/ro/data" --len 65536
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def baddir-fallback "finding 10: a store dir that cannot be used (not a directory): one warning at default verbosity, the store goes beside the file, atomic writes succeed"
case_baddir_fallback() {
    : >"$cd/notadir"
    MCA="--mca fs_versioned_store_dir $cd/notadir/sub"
    mpi "$np" --mode forced --expect-ok --file "$cd/data" --len 65536
    grep -q 'is not used for versioned stores' "$err" || { why="no warning about the store dir"; return 1; }
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def fdcount "finding 8: at most 2 descriptors per handle per rank (file + 1 for the store) until atomic mode is used"
case_fdcount() {
    mpi "$np" --mode fdcount --file "$cd/data" --handles 16
    grep -m1 'per handle' "$out" | sed 's/^t_store: /  (/; s/$/)/' >>"$cd/note"
    grep -q '^t_store: verdict ok' "$out" && return 0
    why=$(vwhy); return 1
}

def emfile "finding 8/10: ulimit -n 128: the open that runs out fails (not MPI_ERR_IO); earlier handles write, read, close; no data lost"
case_emfile() {
    TMO=90
    ( ulimit -n 128; mpi "$np" --mode emfile --file "$cd/f" --len 4096 --max-handles 200 )
    grep -m1 '^t_store: emfile' "$out" | sed 's/^t_store: /  (/; s/$/)/' >>"$cd/note"
    grep -q '^t_store: verdict ok' "$out" && return 0
    why="$(sed -n 's/^t_store: verdict FAIL: //p' "$out") $(grep -m2 'rank .*handle\|rank .*file' "$out" | tr '\n' ' ')"
    [ -n "${why// /}" ] || why="$(tail_of "$err")"
    return 1
}

def recover-enospc "finding 9: recovery that hits ENOSPC fails the open with a default-verbosity message; after freeing space the next open recovers"
case_recover_enospc() {
    mount_tmpfs "$cd/mnt" 4m || return 77
    crash "$np" "$cd/mnt/data" 77 786432 || { umount_tmpfs "$cd/mnt"; return 1; }
    "$STORE_UTIL" fill "$cd/mnt/filler"
    local before; before=$(sum "$cd/mnt/data")
    mpi "$np" --file "$cd/mnt/data" --amode rdwr
    local c1; c1=$(open_class)
    local m; m=$(store_msg "$err")
    local after; after=$(sum "$cd/mnt/data")
    local full1=0
    [ "$c1" = MPI_SUCCESS ] && cmp -s "$cd/mnt/data" "$ref" && full1=1
    rm -f "$cd/mnt/filler"
    : >"$out"; : >"$err"
    mpi "$np" --file "$cd/mnt/data" --amode rdwr --ref "$ref"
    local c2; c2=$(open_class) ok2=0
    cmp -s "$cd/mnt/data" "$ref" && ok2=1
    umount_tmpfs "$cd/mnt"
    if [ $full1 = 1 ]; then   # the contract kept (nothing lost, nothing failed), but not tested
        why="recovery needed no new space on the full file system (space reserved before the crash?): nothing to test"; return 77
    fi
    [ "$c1" != MPI_SUCCESS ] || { why="the open succeeded although recovery could not write (file $( [ "$before" = "$after" ] && echo unchanged || echo half-recovered))"; return 1; }
    [ -n "$m" ] || { why="open failed ($c1) without a default-verbosity message"; return 1; }
    [ "$c1" = MPI_ERR_NO_SPACE ] || { why="open failed with $c1, want MPI_ERR_NO_SPACE"; return 1; }
    [ $ok2 = 1 ] && [ "$c2" = MPI_SUCCESS ] || { why="after freeing space the next open did not recover ($c2)"; return 1; }
    return 0
}

def corrupt-store "finding 9: the user's store of the file with corrupt records: never silent (message), file not half-applied, store kept"
case_corrupt_store() {
    crash "$np" "$cd/data" 78 65536 || return 1
    local s f; s=$(stores "$cd" | head -1)
    for f in "$s"/rec.*; do head -c "$(stat -c %s "$f")" /dev/zero | tr '\0' '\377' >"$f.x" && cat "$f.x" >"$f" && rm -f "$f.x"; done
    local before; before=$(sum "$cd/data")
    mpi "$np" --file "$cd/data" --amode rdwr
    has_store_msg "$err" || { why="corrupt store: open $(open_class), no default-verbosity message"; return 1; }
    [ "$(sum "$cd/data")" = "$before" ] || { why="the corrupt store was partly applied"; return 1; }
    [ -d "$s" ] || { why="the corrupt store was removed"; return 1; }
    return 0
}

tool_ok() { [ -x "$TOOL" ] || { why="admin tool not built ($TOOL)"; return 1; }; }

def tool-list "sfio-store list FILE shows a refused (stale) store, exit 0"
case_tool_list() {
    tool_ok || return 1
    crash "$np" "$cd/data" 79 65536 || return 1
    sleep "$gap"; cp "$cd/data" "$cd/x"; cat "$cd/x" >"$cd/data"; echo x >>"$cd/data"
    local s; s=$(stores "$cd" | head -1)
    "$TOOL" list "$cd/data" >"$cd/tool.out" 2>&1 || { why="sfio-store list exit $?: $(tail_of "$cd/tool.out")"; return 1; }
    grep -qF "$(basename "$s")" "$cd/tool.out" || { why="list does not show $(basename "$s"): $(tail_of "$cd/tool.out")"; return 1; }
    return 0
}

def tool-discard "sfio-store discard FILE removes the file's dead stores, exit 0"
case_tool_discard() {
    tool_ok || return 1
    crash "$np" "$cd/data" 80 65536 || return 1
    "$TOOL" discard "$cd/data" >"$cd/tool.out" 2>&1 || { why="sfio-store discard exit $?: $(tail_of "$cd/tool.out")"; return 1; }
    [ "$(nstores "$cd")" = 0 ] || { why="store still there after discard"; return 1; }
    return 0
}

def tool-apply "sfio-store apply FILE applies an unchanged store (file = recovered data, store gone), exit 0"
case_tool_apply() {
    tool_ok || return 1
    crash "$np" "$cd/data" 81 65536 || return 1
    "$TOOL" apply "$cd/data" >"$cd/tool.out" 2>&1 || { why="sfio-store apply exit $?: $(tail_of "$cd/tool.out")"; return 1; }
    cmp -s "$cd/data" "$ref" || { why="file not recovered by apply"; return 1; }
    [ "$(nstores "$cd")" = 0 ] || { why="store still there after apply"; return 1; }
    return 0
}

def tool-apply-stale "sfio-store apply FILE refuses a stale store without --force (exit 1, file unchanged); show STORE works"
case_tool_apply_stale() {
    tool_ok || return 1
    crash "$np" "$cd/data" 82 65536 || return 1
    local s; s=$(stores "$cd" | head -1)
    sleep "$gap"; "$STORE_UTIL" gen "$cd/data" 1000 83:0:1000; cp "$cd/data" "$cd/new"
    "$TOOL" show "$s" >"$cd/show.out" 2>&1 || { why="sfio-store show exit $?: $(tail_of "$cd/show.out")"; return 1; }
    "$TOOL" apply "$cd/data" >"$cd/tool.out" 2>&1
    local rc=$?
    [ $rc = 1 ] || { why="apply of a stale store exit $rc, want 1"; return 1; }
    cmp -s "$cd/data" "$cd/new" || { why="apply without --force changed the file"; return 1; }
    return 0
}

def bad-shm-dir "finding 10: a bad sharedfp_fetchadd_shm_dir does not fail opens of files that never use a shared pointer"
case_bad_shm_dir() {
    MCA="--mca sharedfp_fetchadd_shm_dir $cd/nonexistent/dir"
    mpi "$np" --file "$cd/data" --amode create --write-tag 84 --atomic 0 --len 4096
    [ "$(open_class)" = MPI_SUCCESS ] || { why="open failed: $(open_class)"; return 1; }
    "$STORE_UTIL" gen "$cd/want" $((np * 4096)) "84:0:$((np * 4096))"
    cmp -s "$cd/data" "$cd/want" || { why="data wrong"; return 1; }
    return 0
}

# ------------------------------------------------------------------- main
if [ $list = 1 ]; then
    for i in "${!cases[@]}"; do printf '%-22s %s\n' "${cases[$i]}" "${desc[$i]}"; done
    exit 0
fi
if [ ${#only[@]} -gt 0 ]; then
    for o in "${only[@]}"; do
        found=0; for c in "${cases[@]}"; do [ "$c" = "$o" ] && found=1; done
        [ $found = 1 ] || { echo "run_store_tests.sh: no case '$o' (--list)" >&2; exit 2; }
    done
fi
passed=0
failed=0
skipped=()
t_all=$(date +%s)
for i in "${!cases[@]}"; do
    name=${cases[$i]}
    if [ ${#only[@]} -gt 0 ]; then
        sel=0; for o in "${only[@]}"; do [ "$o" = "$name" ] && sel=1; done
        [ $sel = 1 ] || continue
    fi
    cd=$base/$name
    mkdir -p "$cd"; chmod 755 "$cd"
    out=$cd/out; err=$cd/err; : >"$out"; : >"$err"
    AS= MCA= TMO=60 STACK="--mca fs versioned --mca fbtl versioned --mca fbtl_versioned_atomic_mode versioned" why= ref=
    bgpids=()
    t0=$(date +%s.%N)
    "case_${name//-/_}"
    rc=$?
    for p in "${bgpids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    bgpids=()
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    case $rc in
    0) passed=$((passed + 1)); echo "ok $name: ${desc[$i]} (${secs} s)"; [ -f "$cd/note" ] && cat "$cd/note" ;;
    77) passed=$((passed + 1)); skipped+=("$name: $why"); echo "ok $name # skip: $why" ;;
    *) failed=$((failed + 1)); echo "FAIL $name: ${why:-failed} (${secs} s; logs $cd)"
       m=$(store_msg "$err"); [ -n "$m" ] && echo "  (store message: $m)"
       [ -f "$cd/note" ] && cat "$cd/note" ;;
    esac
    # the stores of a failed case are big; keep only the logs
    if [ $keep = 0 ] && [ $rc != 0 ] && [ $rc != 77 ]; then
        find "$cd" -mindepth 1 -not -name 'out*' -not -name 'err*' -delete 2>/dev/null
        : >"$cd/FAILED"
    fi
done
if [ ${#skipped[@]} -gt 0 ]; then
    echo "skipped (counted as passed, prerequisite missing):"
    printf '  %s\n' "${skipped[@]}"
fi
if [ $keep = 1 ]; then echo "kept $base"
elif [ $failed -gt 0 ]; then echo "logs of the failed cases kept in $base"; fi
echo "store tests: $(( $(date +%s) - t_all )) s"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
