#!/bin/bash
# crash_test.sh: kill -9 recovery test of MPI atomic mode.
#
# Usage: crash_test.sh [--np P] [--runs N] [--stock] [--bin PATH/t_crash]
#                      [--dir DIR] [--seed S] [--keep] [--quiet] [--first-write]
#                      [--store-shm] [--kill-node]
#
# Each run: start "mpirun -np P t_crash" (atomic, overlapping, non-contiguous
# tagged writes; every rank logs its pid and every returned write), sleep a
# random 0.2-2 s once all ranks are writing, kill -9 ONE random rank, wait
# for Open MPI to abort the job, check a store directory .sfio-store.<inode>.* is
# there, then run "t_crash --verify" on one rank: it opens the file with MPI
# (recovery), closes it, and checks that the flat file is the serial
# application of a prefix of the writes consistent with every rank's
# program order, that every returned write is present, and that the sidecar
# is gone.  Prints "ok crash run i ..." / "FAIL crash run i: ..." per run,
# "crash: K/N runs passed" and exits non-zero unless all passed.
#
# --first-write: every write covers the whole (32 MiB) tile and the kill
# comes 0.01-0.2 s after the ranks opened the file, i.e. during the first
# writes, when no version exists yet (the suite may write bytes that only
# one rank's view can reach in place, outside any version).
#
# --kill-node: kill -9 every rank of the node of one random rank, all in
# one kill, as a node crash: the node of a rank is its UTS namespace
# (readlink /proc/PID/ns/uts; every emulated node of test/nodes has its
# own, see SFIO_MPIRUN below).  On one node (no emulation) every rank
# shares one namespace, so --kill-node kills all ranks.  The ok line says
# how many ranks were killed.
#
# A failed run keeps its logs, the data file and, in pre-recovery/, the
# data file and the store as the crash left them (copied before the
# verify's recovery).  The store belongs to the data file's inode, so to
# replay the recovery put the old bytes back into that same file:
#   cd DIR && cp pre-recovery/data data && touch -r pre-recovery/data data &&
#   cp -a pre-recovery/.sfio-store.* . && mpirun -np 1 ... t_crash --dir DIR \
#   --verify --expect-sidecar
# (with --store-shm the store goes back to its /dev/shm directory).
#
# --store-shm: every run puts the versioned store in a directory of its
# own under /dev/shm (fs_versioned_store_dir; there atomic writes defer
# small private pieces to the store's log) and looks for the sidecar there.
#
# --stock uses --mca fs ufs --mca fbtl posix for both steps (no versioning,
# no recovery, no atomicity): expected to fail at least sometimes, which
# shows the check can fail; there the sidecar check is skipped.
#
# The verify of each run has its own limit, SFIO_CRASH_VERIFY_LIMIT
# seconds (default 120): past it that run fails ("verify timed out").
#
# SFIO_MPIRUN: the launcher, taking -np (default "mpirun --allow-run-as-root
# --oversubscribe"; e.g. "test/nodes/mpirun-nodes.sh --nodes N").
#
# Component path: "$SFIO_COMPONENT_PATH:<Open MPI pkglibdir>" when
# SFIO_COMPONENT_PATH is set (OMPI_MCA_mca_base_component_path otherwise
# as given).
set -u

np=4
runs=10
stock=0
bin=
dir=${SFIO_TEST_DIR:-/tmp}
seed=
keep=0
quiet=0
first=0
storeshm=0
killnode=0
verify_limit=${SFIO_CRASH_VERIFY_LIMIT:-120}
while [ $# -gt 0 ]; do
    case "$1" in
    --np) np=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --stock) stock=1; shift ;;
    --bin) bin=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --quiet) quiet=1; shift ;;
    --first-write) first=1; shift ;;
    --store-shm) storeshm=1; shift ;;
    --kill-node) killnode=1; shift ;;
    -h|--help) sed -n '2,/^set -u$/{/^set -u$/d;p}' "$0"; exit 0 ;;
    *) echo "crash_test.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$bin" ]; then
    for b in ${T_CRASH:-} ./t_crash "$here/t_crash"; do
        if [ -x "$b" ]; then bin=$b; break; fi
    done
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "crash_test.sh: t_crash not found (--bin PATH)" >&2
    exit 2
fi
. "$(dirname "$0")/../sfio_component_path.sh"
sfio_use_build_components
if [ $stock = 1 ]; then
    mca="--mca fs ufs --mca fbtl posix"
    label=stock
else
    # versioned named: the file after a crash is a prefix of the published
    # versions (auto would take range locks on one node's local storage)
    mca="--mca fs versioned --mca fbtl versioned --mca fbtl_versioned_atomic_mode versioned"
    label=suite
fi
# SFIO_MPIRUN: another launcher taking -np (test/nodes/mpirun-nodes.sh --nodes N)
mpirun_cmd="${SFIO_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}"
[ -n "$seed" ] && RANDOM=$seed

# random float in [lo, hi) with millisecond resolution; the seed stays
# below 2^31 (mawk clamps larger seeds to one value: the same delay)
rand_between() { awk -v lo="$1" -v hi="$2" -v r="$((RANDOM * 32768 + RANDOM))" 'BEGIN { srand(r); printf "%.3f", lo + (hi - lo) * rand() }'; }

passed=0
failed=0
for i in $(seq 1 "$runs"); do
    t_start=$(date +%s.%N)
    wd=$(mktemp -d "$dir/crash.XXXXXX")
    runmca=$mca
    sd=
    if [ $storeshm = 1 ]; then
        sd=$(mktemp -d /dev/shm/sfio-crash.XXXXXX)
        runmca="$mca --mca fs_versioned_store_dir $sd"
    fi
    log=$wd/run.log
    if [ $first = 1 ]; then
        wargs="--rows 32768 --cols 128 --overlap 32 --whole"
        lo=0.01 hi=0.2
    else
        wargs="--rows 256 --cols 128 --overlap 32"
        lo=0.2 hi=2.0
    fi
    $mpirun_cmd -np "$np" $runmca "$bin" --dir "$wd" --seconds 30 $wargs >"$log" 2>&1 &
    mpipid=$!
    # wait (<= 20 s) until every rank wrote its pid and rank 0 made progress
    ready=0
    for _ in $(seq 1 400); do
        n=0
        for r in $(seq 0 $((np - 1))); do [ -s "$wd/pid.$r" ] && n=$((n + 1)); done
        if [ $n = "$np" ] && { [ $first = 1 ] || [ -s "$wd/progress.0" ]; }; then ready=1; break; fi
        kill -0 $mpipid 2>/dev/null || break
        sleep 0.01
    done
    why=
    nkilled=0 kranks=
    if [ $ready = 0 ]; then
        why="job never started writing"
        kill -9 $mpipid 2>/dev/null
    else
        delay=$(rand_between $lo $hi)
        sleep "$delay"
        victim=$((RANDOM % np))
        vpid=$(cat "$wd/pid.$victim")
        if [ $killnode = 1 ]; then
            # every rank in the victim's UTS namespace (its node), one kill
            vns=$(readlink "/proc/$vpid/ns/uts" 2>/dev/null)
            if [ -z "$vns" ]; then
                why="rank $victim (pid $vpid) was already gone"
            else
                kpids= kranks=
                for r in $(seq 0 $((np - 1))); do
                    p=$(cat "$wd/pid.$r")
                    if [ "$(readlink "/proc/$p/ns/uts" 2>/dev/null)" = "$vns" ]; then
                        kpids="$kpids $p"
                        kranks="$kranks${kranks:+,}$r"
                    fi
                done
                nkilled=$(echo $kpids | wc -w)
                kill -9 $kpids 2>/dev/null || why="some of ranks $kranks (pids$kpids) were already gone"
            fi
        else
            nkilled=1
            kranks=$victim
            kill -9 "$vpid" 2>/dev/null || why="rank $victim (pid $vpid) was already gone"
        fi
    fi
    t_kill=$(date +%s.%N)
    # Open MPI aborts the job: give it 30 s
    for _ in $(seq 1 300); do kill -0 $mpipid 2>/dev/null || break; sleep 0.1; done
    if kill -0 $mpipid 2>/dev/null; then
        why="${why:+$why; }mpirun still running 30 s after the kill"
        kill -9 $mpipid 2>/dev/null
        for f in "$wd"/pid.*; do [ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
    fi
    wait $mpipid 2>/dev/null
    # rank processes of this run (by their recorded pids) must be gone
    # before the verify: one still exiting holds the store's liveness lock,
    # and recovery rightly leaves a live store alone (a loaded machine can
    # take seconds to end them)
    for _ in $(seq 1 300); do
        alive=0
        for f in "$wd"/pid.*; do
            [ -s "$f" ] || continue
            # a zombie has released its descriptors (and locks): gone
            st=$(awk '{ print $3 }' "/proc/$(cat "$f")/stat" 2>/dev/null)
            [ -n "$st" ] && [ "$st" != Z ] && alive=1
        done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    [ $alive = 0 ] || why="${why:+$why; }rank processes still alive 30 s after the abort"
    ino=$(stat -c %i "$wd/data" 2>/dev/null | awk '{ printf "%x", $1 }')
    if [ -n "$sd" ]; then
        nsc=$(ls -d "$sd"/sfio-store-"$(id -u)"/.sfio-store."$ino".* 2>/dev/null | wc -l)
    else
        nsc=$(ls -d "$wd"/.sfio-store."$ino".* 2>/dev/null | wc -l)
    fi
    writes=$(cat "$wd"/progress.* 2>/dev/null | wc -l)
    vflags=
    if [ $stock = 0 ]; then
        # the store is made at the group's first atomic write: a returned
        # write proves one was made (a kill before any write may leave none)
        [ "$nsc" -gt 0 ] && vflags=--expect-sidecar
        [ "$nsc" -gt 0 ] || [ "$writes" = 0 ] || why="${why:+$why; }no sidecar directory after the crash"
    fi
    # the state recovery starts from, kept when the run fails: recovery
    # rewrites the file and removes the store
    pre=$wd/pre-recovery
    mkdir -p "$pre"
    cp -a "$wd/data" "$pre/" 2>/dev/null
    if [ -n "$sd" ]; then
        cp -a "$sd"/sfio-store-"$(id -u)"/.sfio-store."$ino".* "$pre/" 2>/dev/null
    else
        cp -a "$wd"/.sfio-store."$ino".* "$pre/" 2>/dev/null
    fi
    t_dead=$(date +%s.%N)
    # its own limit: a recovery that hangs is this run's failure, named,
    # and the runs after it still run
    timeout -k 5 "$verify_limit" $mpirun_cmd -np 1 $runmca "$bin" --dir "$wd" --verify $vflags \
        >"$wd/verify.log" 2>&1
    vrc=$?
    if [ $vrc = 124 ] || [ $vrc = 137 ]; then
        why="${why:+$why; }verify timed out after $verify_limit s"
    fi
    t_end=$(date +%s.%N)
    times=$(awk -v a="$t_start" -v b="$t_kill" -v c="$t_dead" -v d="$t_end" 'BEGIN { printf "start+run %.1f s, abort %.1f s, verify %.1f s", b - a, c - b, d - c }')
    if [ $vrc != 0 ]; then
        detail=$(grep -m3 '^FAIL' "$wd/verify.log" | sed 's/^FAIL crash-verify: //' | paste -sd';' -)
        why="${why:+$why; }verify exit $vrc${detail:+: $detail}"
    fi
    summary=$(grep -m1 '^t_crash: .*ranks, seed' "$wd/verify.log" | sed 's/^t_crash: //')
    killed="$nkilled rank$([ "$nkilled" = 1 ] || echo s) killed"
    if [ $killnode = 1 ]; then
        what="kill node of rank ${victim:-?} after ${delay:-?} s: $killed (${kranks:-none})"
    else
        what="kill rank ${victim:-?} after ${delay:-?} s: $killed"
    fi
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        [ $quiet = 1 ] || echo "ok crash run $i ($label, $np ranks, $what, $writes returned writes, $nsc sidecar; $times)"
        [ $keep = 1 ] || rm -rf "$wd"
    else
        failed=$((failed + 1))
        echo "FAIL crash run $i ($label, $np ranks, $what): $why [$summary] (kept $wd)"
        # keep the logs, the file (its inode is the store's) and the
        # state before recovery (pre-recovery/)
    fi
    [ -n "$sd" ] && [ $keep = 0 ] && rm -rf "$sd"
done
[ $first = 1 ] && label="$label, first-write"
[ $storeshm = 1 ] && label="$label, store in /dev/shm"
[ $killnode = 1 ] && label="$label, kill node"
echo "crash: $passed/$runs runs passed ($label, $np ranks)"
[ $failed = 0 ]
