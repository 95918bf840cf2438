#!/bin/bash
# run_atomic_tests.sh: the MPI atomic-mode tests of test/atomic/ at several
# process counts, with the suite (default) or stock Open MPI components.
#
# Usage: run_atomic_tests.sh [--stock] [--np "2 4 8"] [--crash-runs N]
#                            [--no-collective] [--no-crash] [--quick]
#                            [--no-first-write] [--first-write-runs N]
#                            [--kill-node] [--no-store-shm]
#                            [--bindir DIR] [--seed S] [--keep]
#
#   (default)        --mca fs versioned --mca fbtl versioned, atomic mode
#                    versioned (auto takes range locks on one node over a
#                    local file system; its own entries, "auto", check that
#                    and its atomicity)
#   --stock          --mca fs ufs --mca fbtl posix: stock OMPIO is NOT atomic
#                    in 4.1, so failures are expected there (they show that
#                    the tests can fail); 5.0's fbtl/posix locks the extent
#                    of each fbtl call in atomic mode
#   --romio          --mca io romio321 (4.1) / romio341 (5.0): the ROMIO
#                    baseline (with --no-crash; lock modes are not run)
#   --np LIST        process counts (default "2 4 8"; lock modes "2 8")
#   --lock-modes L   lock modes also run over fs versioned and fs ufs
#                    (default "listlock rangelock filelock"; "" skips them)
#   --lock-backends L  lock backends (fbtl_versioned_lock_backend) under
#                    listlock, with t_locksvc and t_stall on the service
#                    (default "fcntl service"; "" skips them)
#   --crash-runs N   kill -9 runs per process count (default 2; each run
#                    kills at a random point, so CI runs add up)
#   --no-collective  skip the collective serializability check (t_serial
#                    --collective-only: collective atomic writes through the
#                    stock fcoll components), reported as its own entry
#   --no-adaptive    skip the fcoll/adaptive collective serializability runs
#                    (each algorithm forced, over fs ufs and fs versioned)
#   --no-crash       skip crash_test.sh
#   --no-first-write skip crash_test.sh --first-write (kill during the first
#                    32 MiB whole-tile writes, before any version exists;
#                    runs at the counts <= 4; --first-write-runs N, default 2)
#   --kill-node      also crash_test.sh --kill-node per process count
#                    (--crash-runs N runs): kill -9 every rank of one node
#                    at once, as a node crash (on one machine without
#                    emulated nodes: every rank)
#   --no-store-shm   skip the entries with the store in /dev/shm
#                    (fs_versioned_store_dir /dev/shm, crash_test.sh
#                    --store-shm, and on one node t_groups: two
#                    MPI_COMM_SELF handles of one file): across nodes (SFIO_MPIRUN=mpirun-nodes.sh)
#                    the store goes beside the file whatever store_dir says,
#                    so those entries repeat the others and the crash runs
#                    find no store in the node's /dev/shm
#   --quick          np "4", 2 crash runs, stall sleep 3 s (--np,
#                    --crash-runs, --first-write-runs given win)
#   --bindir DIR     where t_atomicity t_serial t_crash t_stall t_peek t_fresh t_groups
#                    and .libs/libpauselock.so are (default:
#                    $T_ATOMICITY etc. when set, else the current directory
#                    if it holds them, else they are built with
#                    ${MPICC:-mpicc} -O2 into a temporary directory)
#   --seed S         seed for t_serial and crash_test.sh (default: random,
#                    printed by each test)
#   --keep           keep the test directory and logs
#
# Entries per process count: t_atomicity; t_serial; t_atomicity and
# t_serial with io_ompio_cycle_buffer_size 4096 (each MPI call must still
# be one atomic unit); t_serial --collective-only; t_peek (exact reads of
# others' atomic writes before any fold); suite only, t_serial and t_peek
# with a store bounded to 4 versions (compactions); t_stall (rank 1 sleeps
# 5 s; at the middle count also rank 0 for 3 s); crash_test.sh; with
# --kill-node crash_test.sh --kill-node; at counts <= 4 crash_test.sh
# --first-write.  Every run
# has a timeout (120 s; 300 s for crash_test.sh).  Output (TAP, so that
# `make check` counts every entry): "ok - name (time)" or "not ok - name
# (time): detail" per entry, then "N passed, N failed" and the plan "1..N";
# exit status non-zero on any failure.
#
# Component path: when SFIO_COMPONENT_PATH is set, Open MPI loads
# components from "$SFIO_COMPONENT_PATH:<ompi_info pkglibdir>" (exported as
# OMPI_MCA_mca_base_component_path); otherwise the environment is used as is.
set -u

stock=0
nps="2 4 8"
lock_modes="listlock rangelock filelock"
lock_nps="2 8"
lock_backends="fcntl service"
crash_runs=2
first_runs=2
first=1
coll=1
adaptive=1
crash=1
killnode=0
storeshm=1
quick=0
bindir=
seed=
keep=0
stall_sleep=5
given_np= given_crash= given_first=
here=$(cd "$(dirname "$0")" && pwd)

while [ $# -gt 0 ]; do
    case "$1" in
    --stock) stock=1; shift ;;
    --romio) stock=2; shift ;;
    --np) nps=$2; lock_nps=$2; given_np=1; shift 2 ;;
    --lock-modes) lock_modes=$2; shift 2 ;;
    --lock-backends) lock_backends=$2; shift 2 ;;
    --crash-runs) crash_runs=$2; given_crash=1; shift 2 ;;
    --no-collective) coll=0; shift ;;
    --no-adaptive) adaptive=0; shift ;;
    --no-crash) crash=0; shift ;;
    --no-first-write) first=0; shift ;;
    --first-write-runs) first_runs=$2; given_first=1; shift 2 ;;
    --kill-node) killnode=1; shift ;;
    --no-store-shm) storeshm=0; shift ;;
    --quick) quick=1; shift ;;
    --bindir) bindir=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,/^set -u$/{/^set -u$/d;p}' "$0"; exit 0 ;;
    *) echo "run_atomic_tests.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
# --quick's counts; --np, --crash-runs, --first-write-runs given win
if [ $quick = 1 ]; then
    [ -n "$given_np" ] || { nps="4"; lock_nps="4"; }
    [ -n "$given_crash" ] || crash_runs=2
    [ -n "$given_first" ] || first_runs=2
    stall_sleep=3
fi

. "$(dirname "$0")/../sfio_component_path.sh"
sfio_use_build_components
unset SFIO_COMPONENT_PATH   # crash_test.sh inherits the path built here

if [ $stock = 1 ]; then
    stack="--mca io ompio --mca fs ufs --mca fbtl posix"
    label=stock
elif [ $stock = 2 ]; then
    # ROMIO: io/romio321 in Open MPI 4.1, io/romio341 in 5.0
    romio=$(ompi_info | sed -n 's/^ *MCA io: \(romio[0-9]*\) .*/\1/p' | head -1)
    if [ -z "$romio" ]; then
        echo "run_atomic_tests.sh: this Open MPI has no ROMIO io component" >&2
        exit 2
    fi
    stack="--mca io $romio"
    label=$romio
else
    # versioned named: auto would take range locks here (one node, local
    # file system); auto's own entries follow the first loop
    vmode="--mca fbtl_versioned_atomic_mode versioned"
    stack="--mca fs versioned --mca fbtl versioned $vmode"
    label=suite
fi
# SFIO_MPIRUN: another launcher taking -np (test/nodes/mpirun-nodes.sh --nodes N)
mpirun_cmd="${SFIO_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}"

workdir=$(mktemp -d "${SFIO_TEST_DIR:-/tmp}/sfio-atomic.XXXXXX")
export SFIO_TEST_DIR=$workdir

# Locate or build the programs.
programs="t_atomicity t_serial t_crash t_stall t_peek t_fresh t_groups t_coherence"
declare -A prog
if [ -n "$bindir" ]; then
    for p in $programs; do prog[$p]=$bindir/$p; done
else
    for p in $programs; do
        var=$(echo "$p" | tr a-z A-Z)
        if [ -n "${!var:-}" ]; then prog[$p]=${!var}
        elif [ -x "./$p" ]; then prog[$p]=$PWD/$p
        fi
    done
    missing=
    for p in $programs; do [ -n "${prog[$p]:-}" ] || missing="$missing $p"; done
    if [ -n "$missing" ]; then
        mkdir -p "$workdir/bin"
        for p in $missing; do
            if ! ${MPICC:-mpicc} -O2 -Wall -I"$here" -o "$workdir/bin/$p" "$here/$p.c"; then
                echo "run_atomic_tests.sh: cannot build $p" >&2
                exit 2
            fi
            prog[$p]=$workdir/bin/$p
        done
    fi
fi
# t_locksvc links the engine: only from the build tree ($T_LOCKSVC or
# --bindir), never built here
if [ -n "$bindir" ] && [ -x "$bindir/t_locksvc" ]; then prog[t_locksvc]=$bindir/t_locksvc
elif [ -n "${T_LOCKSVC:-}" ] && [ -x "$T_LOCKSVC" ]; then prog[t_locksvc]=$T_LOCKSVC
fi
for p in $programs; do
    if [ ! -x "${prog[$p]}" ]; then
        echo "run_atomic_tests.sh: ${prog[$p]} is not executable" >&2
        exit 2
    fi
done

passed=0
failed=0
skipped=0
t_all=$(date +%s.%N)
seedarg=${seed:+--seed $seed}
mkdir -p "$workdir/logs"

# run NAME TIMEOUT CMD...: one entry
run() {
    local name=$1 to=$2
    shift 2
    local log=$workdir/logs/$(echo "$name" | tr -c 'A-Za-z0-9_.=-' '_').log
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout -k 5 "$to" "$@" >"$log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s", b - a }')
    if [ $rc = 0 ] && ! grep -q '^FAIL' "$log"; then
        passed=$((passed + 1))
        echo "ok - $name ($secs)"
    else
        failed=$((failed + 1))
        local detail
        if [ $rc = 124 ] || [ $rc = 137 ]; then detail="timed out after $to s"; else detail="exit $rc"; fi
        local fl
        fl=$(grep -m4 '^FAIL' "$log" | cut -c1-300)
        [ -z "$fl" ] && fl=$(grep -v '^ *$' "$log" | grep -v -- '^---' | head -4 | cut -c1-300)
        echo "not ok - $name ($secs): $detail (log $log)"
        [ -n "$fl" ] && echo "$fl" | sed 's/^/    /'
    fi
    return 0
}

# skip NAME WHY: an entry that cannot run here
skip() {
    skipped=$((skipped + 1))
    echo "ok - $1 # SKIP $2"
}

mid=$(echo $nps | awk '{ print $(int((NF + 1) / 2)) }')
echo "run_atomic_tests: $label components, np {$nps}, work dir $workdir"
for np in $nps; do
    m="$mpirun_cmd -np $np $stack"
    small="--mca io_ompio_cycle_buffer_size 4096"
    run "t_atomicity np=$np $label" 120 $m "${prog[t_atomicity]}"
    run "t_serial np=$np $label" 120 $m "${prog[t_serial]}" $seedarg
    run "t_atomicity np=$np $label cycle=4096" 120 $m $small "${prog[t_atomicity]}"
    run "t_serial np=$np $label cycle=4096" 120 $m $small "${prog[t_serial]}" $seedarg
    if [ $coll = 1 ]; then
        run "t_serial --collective np=$np $label" 120 $m "${prog[t_serial]}" --collective-only $seedarg
    fi
    run "t_peek np=$np $label" 120 $m "${prog[t_peek]}" $seedarg
    if [ $stock = 0 ]; then
        # a store bounded to a few versions: compactions between the
        # collective points, under every data-path call
        bounded="--mca fs_versioned_store_max_log_bytes 65536 --mca fs_versioned_store_max_versions 4"
        run "t_serial np=$np $label bounded store" 120 $m $bounded "${prog[t_serial]}" $seedarg
        run "t_peek np=$np $label bounded store" 120 $m $bounded "${prog[t_peek]}" $seedarg
        # bytes written before atomic mode began are journaled, not fresh
        # (undone by zeroing after a crash): the store's own count
        run "t_fresh np=$np $label" 120 "$here/fresh_check.sh" "$np" $m "${prog[t_fresh]}"
        # private bytes a rank wrote through a version are not fresh either,
        # after a compaction folded that version (3 ranks or more: see
        # t_fresh.c)
        if [ "$np" -ge 3 ]; then
            run "t_fresh --through-versions np=$np $label" 120 "$here/fresh_check.sh" \
                --through-versions "$np" $m --mca fs_versioned_store_max_versions $((np + 1)) \
                "${prog[t_fresh]}"
        fi
    fi
    run "t_stall np=$np $label sleeper=1" 120 $m "${prog[t_stall]}" --sleeper 1 --sleep $stall_sleep
    if [ "$np" = "$mid" ]; then
        run "t_stall np=$np $label sleeper=0" 120 $m "${prog[t_stall]}" --sleeper 0 --sleep 3
    fi
    if [ $crash = 1 ]; then
        sflag=
        [ $stock != 0 ] && sflag=--stock
        run "crash_test np=$np $label x$crash_runs" 300 "$here/crash_test.sh" --np "$np" --runs "$crash_runs" \
            --bin "${prog[t_crash]}" --dir "$workdir" $sflag ${seed:+--seed $seed}
        # the per-run lines of crash_test
        log=$workdir/logs/$(echo "crash_test np=$np $label x$crash_runs" | tr -c 'A-Za-z0-9_.=-' '_').log
        grep '^crash:' "$log" | sed 's/^/    /'
        # a node crash: every rank of one node at once
        if [ $killnode = 1 ]; then
            name="crash_test --kill-node np=$np $label x$crash_runs"
            run "$name" 300 "$here/crash_test.sh" --np "$np" --runs "$crash_runs" --kill-node \
                --bin "${prog[t_crash]}" --dir "$workdir" $sflag ${seed:+--seed $seed}
            grep '^crash:' "$workdir/logs/$(echo "$name" | tr -c 'A-Za-z0-9_.=-' '_').log" | sed 's/^/    /'
        fi
        # kill during the first (large, whole-tile) writes, before any version exists
        if [ $first = 1 ] && [ "$np" -le 4 ]; then
            run "crash_test --first-write np=$np $label x$first_runs" 300 "$here/crash_test.sh" --np "$np" \
                --runs "$first_runs" --first-write --bin "${prog[t_crash]}" --dir "$workdir" $sflag ${seed:+--seed $seed}
            log=$workdir/logs/$(echo "crash_test --first-write np=$np $label x$first_runs" | tr -c 'A-Za-z0-9_.=-' '_').log
            grep '^crash:' "$log" | sed 's/^/    /'
        fi
    fi
done

# The suite's default atomic mode: auto takes versions across nodes and on
# network storage, range locks on one node over a local file system, no
# lock there for a write of one system call (said at verbose 1).  Under
# the same checkers, and the choice as it is said.
if [ "$stock" = 0 ]; then
    m="$mpirun_cmd -np $mid --mca fs versioned --mca fbtl versioned --mca fbtl_versioned_verbose 1"
    m="$m --mca fs_versioned_verbose 1"
    run "t_atomicity np=$mid auto" 120 $m "${prog[t_atomicity]}" --rounds 10
    run "t_serial np=$mid auto" 120 $m "${prog[t_serial]}" $seedarg
    log=$workdir/logs/$(echo "t_atomicity np=$mid auto" | tr -c 'A-Za-z0-9_.=-' '_').log
    # versions: the store's statistics at close count some; list locks:
    # said once, and no store
    versions="grep -Eq 'versioned [1-9][0-9]* B' '$log' && ! grep -q 'not versioned:' '$log'"
    if [ -n "${SFIO_MPIRUN:-}" ]; then
        run "auto chose versions (across nodes)" 10 sh -c "$versions"
    else
        run "auto chose range locks (one node, local file system)" 10 sh -c \
            "grep -q 'uses rangelock.*, not versioned: its ranks share one node' '$log' &&
             ! grep -q 'versioned store' '$log' && ! grep -Eq 'versioned [1-9][0-9]* B' '$log'"
        # one-call writes behind the node's gate, where the file system
        # serializes writes (the work directory's: ext4 or tmpfs here)
        run "auto opened the gate (one node, local file system)" 10 sh -c \
            "grep -q 'atomic writes of one system call take no lock (gate on shm)' '$log' ||
             grep -q 'no gate for one-call atomic writes (its file system is not known' '$log'"
        run "t_atomicity np=$mid auto storage=network" 120 $m --mca fbtl_versioned_storage network \
            "${prog[t_atomicity]}" --rounds 10
        log=$workdir/logs/$(echo "t_atomicity np=$mid auto storage=network" | tr -c 'A-Za-z0-9_.=-' '_').log
        versions="grep -Eq 'versioned [1-9][0-9]* B' '$log' && ! grep -q 'not versioned:' '$log'"
        run "auto chose versions (storage network)" 10 sh -c "$versions"
    fi
fi

# The store in memory (tmpfs): atomic writes defer small private pieces to
# the log and folds write every rank's domain in large windows.
if [ "$stock" = 0 ] && [ $storeshm = 1 ] && [ -d /dev/shm ]; then
    for np in $lock_nps; do
        m="$mpirun_cmd -np $np --mca fs versioned --mca fbtl versioned $vmode --mca fs_versioned_store_dir /dev/shm"
        run "t_atomicity np=$np store=/dev/shm" 120 $m "${prog[t_atomicity]}" --rounds 10
        run "t_serial np=$np store=/dev/shm" 120 $m "${prog[t_serial]}" $seedarg
        run "t_serial --collective np=$np store=/dev/shm" 120 $m "${prog[t_serial]}" --collective-only $seedarg
        run "t_serial np=$np store=/dev/shm cycle=4096" 120 $m --mca io_ompio_cycle_buffer_size 4096 \
            "${prog[t_serial]}" $seedarg
    done
    # two groups of one file (MPI_COMM_SELF handles, a store each): a fold
    # writing windows whole must not lose the other group's bytes.  One
    # node only: across nodes the stores go beside the file, and a group's
    # private pieces go in place, so no fold writes a window.
    if [ -z "${SFIO_MPIRUN:-}" ]; then
        pauselock=
        for f in "$(dirname "${prog[t_groups]}")/.libs/libpauselock.so" "$workdir/bin/libpauselock.so"; do
            [ -e "$f" ] && { pauselock=$f; break; }
        done
        if [ -z "$pauselock" ]; then
            mkdir -p "$workdir/bin"
            pauselock=$workdir/bin/libpauselock.so
            ${CC:-cc} -O2 -Wall -shared -fPIC -fvisibility=hidden -o "$pauselock" "$here/pauselock.c" -ldl ||
                pauselock=
        fi
        m="$mpirun_cmd -np 2 --mca fs versioned --mca fbtl versioned $vmode --mca fs_versioned_store_dir /dev/shm"
        run "t_groups np=2 store=/dev/shm" 120 $m -x LD_PRELOAD="$pauselock" "${prog[t_groups]}"
    fi
    if [ $crash = 1 ]; then
        for fw in "" --first-write; do
            name="crash_test $fw --store-shm np=$mid x$first_runs"
            run "$name" 300 "$here/crash_test.sh" --np "$mid" --runs "$first_runs" --store-shm $fw \
                --bin "${prog[t_crash]}" --dir "$workdir" ${seed:+--seed $seed}
            grep '^crash:' "$workdir/logs/$(echo "$name" | tr -c 'A-Za-z0-9_.=-' '_').log" | sed 's/^/    /'
        done
    fi
fi

# Clients of one file that cache it, as NFS clients do (cachefs, a FUSE
# file system; needs libfuse3, /dev/fuse and fusermount3): a read must
# see what another client wrote before it, when MPI says it must.  The
# writer's client keeps written pages dirty until they are flushed.
#   one node: two mounts of one directory, a rank on each; under the
#     lock service (whose grants are messages) and through MPI's
#     sync-barrier-sync;
#   across nodes (SFIO_MPIRUN=mpirun-nodes.sh): one mount per node at one
#     path (node-agent.sh SFIO_NODES_CACHEFS), a rank per node; versioned
#     mode too (logs, records, folds across clients).
if [ "$stock" = 0 ]; then
    cfs=
    for f in "${CACHEFS:-}" "$(dirname "${prog[t_coherence]}")/cachefs"; do
        [ -n "$f" ] && [ -x "$f" ] && { cfs=$f; break; }
    done
    if [ -z "$cfs" ] && pkg-config --exists fuse3 2>/dev/null; then
        mkdir -p "$workdir/bin"
        # shellcheck disable=SC2046
        ${CC:-cc} -O2 -Wall -o "$workdir/bin/cachefs" "$here/cachefs.c" $(pkg-config --cflags --libs fuse3) &&
            cfs=$workdir/bin/cachefs
    fi
    cf=$workdir/cachefs
    # what the entries mount, undone however the script ends
    cachefs_cleanup() {
        for d in "$cf/writer" "$cf/reader"; do
            mountpoint -q "$d" 2>/dev/null && { fusermount3 -u "$d" 2>/dev/null || fusermount3 -uz "$d"; }
        done
        # the nodes' clients outlive the launched daemons (by /proc: procps
        # may be missing in a minimal root)
        for pd in /proc/[0-9]*; do
            case "$(tr '\0' ' ' <"$pd/cmdline" 2>/dev/null)" in
            "$cfs $cf/backing "*) kill "${pd#/proc/}" 2>/dev/null ;;
            esac
        done
    }
    trap cachefs_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    vfb="--mca fs versioned --mca fbtl versioned"
    svc="--mca fbtl_versioned_atomic_mode listlock --mca fbtl_versioned_lock_backend service"
    if [ -z "${SFIO_MPIRUN:-}" ]; then
        names=("t_coherence np=2 listlock service cachefs" "t_coherence np=2 sync cachefs")
    else
        names=("t_coherence np=2 versioned cachefs per node" "t_coherence np=2 listlock service cachefs per node"
               "t_coherence np=2 sync cachefs per node")
    fi
    why=
    if [ -z "$cfs" ]; then
        why="no cachefs (libfuse3-dev)"
    elif [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
        why="no /dev/fuse or fusermount3 (fuse3)"
    fi
    if [ -n "$why" ]; then
        for name in "${names[@]}"; do skip "$name" "$why"; done
    elif [ -z "${SFIO_MPIRUN:-}" ]; then
        mkdir -p "$cf/backing" "$cf/writer" "$cf/reader"
        if CACHEFS_WRITEBACK=1 "$cfs" "$cf/backing" "$cf/writer" && "$cfs" "$cf/backing" "$cf/reader"; then
            run "${names[0]}" 120 $mpirun_cmd -np 2 $vfb $svc \
                "${prog[t_coherence]}" "$cf/writer/f" "$cf/reader/f"
            run "${names[1]}" 120 $mpirun_cmd -np 2 $vfb \
                "${prog[t_coherence]}" "$cf/writer/g" "$cf/reader/g" sync
        else
            for name in "${names[@]}"; do skip "$name" "cachefs did not mount"; done
        fi
        cachefs_cleanup
    else
        mkdir -p "$cf/backing" "$cf/mnt"
        # rank 0 runs on the first node, whichever prefix its host name has
        wb="${SFIO_NODES_PREFIX:-sfio-n}1 ${SFIO_NODES_PREFIX:-sfio-net}1"
        i=0
        for how in "$vmode" "$svc" ""; do
            arg=atomic
            [ -z "$how" ] && arg=sync
            run "${names[$i]}" 120 env SFIO_NODES_CACHEFS="$cfs:$cf/backing:$cf/mnt" \
                SFIO_NODES_CACHEFS_WRITEBACK="$wb" $mpirun_cmd -np 2 $vfb $how \
                "${prog[t_coherence]}" "$cf/mnt/f$i" "$cf/mnt/f$i" $arg
            cachefs_cleanup
            i=$((i + 1))
        done
    fi
    trap - EXIT INT TERM
fi

# Groups of one file on different nodes (a group per node, each with its
# store in its node's /dev/shm) cannot see each other's stores: their
# folds must write pieces, never a window with holes whole.
if [ "$stock" = 0 ] && [ -n "${SFIO_MPIRUN:-}" ] && [ -d /dev/shm ]; then
    name="t_groups --node-groups np=$mid store=/dev/shm"
    m="$mpirun_cmd -np $mid --mca fs versioned --mca fbtl versioned $vmode --mca fs_versioned_store_dir /dev/shm"
    run "$name" 120 $m --mca fs_versioned_verbose 1 "${prog[t_groups]}" --node-groups
    log=$workdir/logs/$(echo "$name" | tr -c 'A-Za-z0-9_.=-' '_').log
    run "t_groups --node-groups: folds split their windows" 10 sh -c \
        "grep -Eq 'fold windows split \(other opens\) [1-9]' '$log' ||
         grep -q '^t_groups: every group has one rank' '$log'"
fi

# Fold write-back both ways (auto picks by piece size): owner from the
# log's copy in memory, owner reading its log (no copy, or a copy too
# small for one write), and domain windows.
if [ "$stock" = 0 ]; then
    np=${lock_nps##* }
    for fb in "owner" "owner fold_cache=0" "owner fold_cache=4096" "domain"; do
        set -- $fb
        f="--mca fs_versioned_fold_by $1"
        [ -n "${2:-}" ] && f="$f --mca fs_versioned_${2%%=*} ${2#*=}"
        m="$mpirun_cmd -np $np --mca fs versioned --mca fbtl versioned $vmode $f"
        run "t_serial np=$np fold_by=$fb" 120 $m "${prog[t_serial]}" $seedarg
        run "t_serial --collective np=$np fold_by=$fb" 120 $m "${prog[t_serial]}" --collective-only $seedarg
        run "t_atomicity np=$np fold_by=$fb" 120 $m "${prog[t_atomicity]}" --rounds 10
    done
fi

# Every lock mode of fbtl/versioned through the same checkers, over the
# suite's fs and over stock fs/ufs (where no versioned store exists).
if [ "$stock" = 0 ] && [ -n "$lock_modes" ]; then
    for fs in versioned ufs; do
        for mode in $lock_modes; do
            for np in $lock_nps; do
                m="$mpirun_cmd -np $np --mca fs $fs --mca fbtl versioned --mca fbtl_versioned_atomic_mode $mode"
                run "t_atomicity np=$np fs=$fs mode=$mode" 120 $m "${prog[t_atomicity]}" --rounds 10
                run "t_serial np=$np fs=$fs mode=$mode" 120 $m "${prog[t_serial]}" $seedarg
                run "t_serial --collective np=$np fs=$fs mode=$mode" 120 $m "${prog[t_serial]}" --collective-only $seedarg
            done
        done
    done
    # Pipelined pieces (fbtl_versioned_io_depth, auto picks 8 only on
    # network file systems): the same tests with 8 requests in flight.
    depth="--mca fbtl_versioned_io_depth 8 --mca fbtl_versioned_io_depth_min_pieces 2"
    for fs in versioned ufs; do
        np=${lock_nps##* }
        mode=${lock_modes%% *}
        m="$mpirun_cmd -np $np --mca fs $fs --mca fbtl versioned --mca fbtl_versioned_atomic_mode $mode $depth"
        run "t_atomicity np=$np fs=$fs mode=$mode io_depth=8" 120 $m "${prog[t_atomicity]}" --rounds 10
        run "t_serial np=$np fs=$fs mode=$mode io_depth=8" 120 $m "${prog[t_serial]}" $seedarg
    done
    run "t_serial np=${lock_nps##* } fs=versioned mode=auto io_depth=8" 120 \
        $mpirun_cmd -np ${lock_nps##* } --mca fs versioned --mca fbtl versioned $depth "${prog[t_serial]}" $seedarg
fi
# Who takes the lock lists (fbtl_versioned_lock_backend), each named,
# under listlock: the checkers, a rank asleep outside MPI while the
# others lock (the service's host among the sleepers), and the service
# driven directly (t_locksvc: safety, stress, frozen holder, timeout).
if [ "$stock" = 0 ] && [ -n "$lock_backends" ]; then
    for np in $lock_nps; do
        for be in $lock_backends; do
            m="$mpirun_cmd -np $np --mca fs versioned --mca fbtl versioned --mca fbtl_versioned_atomic_mode listlock --mca fbtl_versioned_lock_backend $be"
            run "t_atomicity np=$np mode=listlock backend=$be" 120 $m "${prog[t_atomicity]}" --rounds 10
            run "t_serial np=$np mode=listlock backend=$be" 120 $m "${prog[t_serial]}" $seedarg
            if [ "$be" = service ]; then
                for s in 0 1; do
                    run "t_stall np=$np mode=listlock backend=$be sleeper=$s" 120 $m \
                        "${prog[t_stall]}" --sleeper $s --sleep $stall_sleep
                done
            fi
        done
        if [ -n "${prog[t_locksvc]:-}" ] && [ "$np" -ge 2 ]; then
            run "t_locksvc np=$np" 180 $mpirun_cmd -np $np "${prog[t_locksvc]}"
        fi
    done
fi

# fcoll/adaptive: atomic collective writes must equal one serial order
# whichever algorithm is forced, without the suite's fcoll proxy (stock fs
# ufs + fbtl posix: the component's own rank-order rule over disjoint
# domains) and with it (fs/fbtl versioned: one atomic access per rank);
# "many" adds a small k and cycle buffer (8 aggregators, many cycles).
if [ "$stock" = 0 ] && [ "$adaptive" = 1 ]; then
    for np in $lock_nps; do
        for alg in auto individual two_phase dynamic static many; do
            a="--mca fcoll adaptive --mca fcoll_adaptive_algorithm $alg"
            [ $alg = many ] && a="--mca fcoll adaptive --mca fcoll_adaptive_algorithm two_phase --mca fcoll_adaptive_k 1024 --mca io_ompio_bytes_per_agg 8192"
            run "t_serial --collective np=$np fs=ufs fcoll=adaptive/$alg" 120 \
                $mpirun_cmd -np $np --mca fs ufs --mca fbtl posix $a "${prog[t_serial]}" --collective-only $seedarg
        done
        run "t_serial --collective np=$np fs=versioned fcoll=adaptive" 120 \
            $mpirun_cmd -np $np --mca fs versioned --mca fbtl versioned --mca fcoll adaptive "${prog[t_serial]}" --collective-only $seedarg
    done
fi
t_end=$(date +%s.%N)
echo "run_atomic_tests: $label, $(awk -v a="$t_all" -v b="$t_end" 'BEGIN { printf "%.0f", b - a }') s"
if [ $keep = 1 ] || [ $failed -gt 0 ]; then
    rm -rf "$workdir"/crash.*/.sfio-store.* "$workdir"/bin
    echo "run_atomic_tests: logs kept in $workdir"
else
    rm -rf "$workdir"
fi
[ $skipped -gt 0 ] && echo "$skipped skipped (a prerequisite missing)"
echo "$passed passed, $failed failed"
echo "1..$((passed + failed + skipped))"
[ $failed = 0 ]
