#!/bin/bash
# run_nodes_tests.sh: the cross-node selection of the test suites, on
# emulated nodes (mpirun-nodes.sh), at each node count with --ppn ranks per
# node.  Run by `make check` in test/nodes as one TAP stream: every MPI and
# atomic run of the steps is one "ok"/"not ok" line (automake counts
# them), the bench self-test one line per node count; the plan comes last.
#
#   run_nodes_tests.sh --builddir DIR [--nodes "2 4"] [--ppn 2] [--steps "mpi coord fault place atomic bench"]
#   (defaults: SFIO_NODES_BUILDDIR, SFIO_NODES_COUNTS, SFIO_NODES_PPN,
#   SFIO_NODES_STEPS from the environment)
#
# An entry of --nodes is N (--ppn ranks per node, every step of --steps)
# or NxP[:STEP[+STEP...]]: P ranks per node and only the steps named
# (all of --steps without them), e.g. "2 4 8x1:atomic".
#
# Steps, at every node count N (np = N x ppn):
#   mpi     test/mpi on the suite stack, default configuration: views, calls,
#           non-blocking, collective progress, shared pointer, amode, private
#           cache; t_fetchadd only where sharedfp/fetchadd serves the ranks
#           (the coordination service on libfabric); fetchadd_noprov: no
#           provider starts, a stock sharedfp serves t_shared;
#           fetchadd_ofi_atomic, fetchadd_ofi_message: the shared-pointer
#           programs with the counters forced each way
#   coord   t_coord: the coordination service itself (ofi across nodes,
#           counters by atomics and by messages; rma where this Open MPI
#           makes windows over TCP)
#   fault   t_fault under the faultio preload, suite stack (fault_two_phase,
#           fault-async_static)
#   place   fcoll/adaptive placement over real host names: nodes-block_<alg>
#           and nodes-cyclic_<alg>, t_coll_unequal, each algorithm
#   atomic  test/atomic: t_atomicity, t_serial (independent, 4 KiB cycles,
#           collective, fold write-back, fcoll/adaptive), t_stall, the list
#           lock backends; versioned mode runs across nodes (the store's
#           counters in the coordination service, its files beside the
#           user's), so also the crash runs (2 each): kill -9 of one rank,
#           of every rank of one node (--kill-node) and during the first
#           writes; the store-in-/dev/shm entries are skipped (across
#           nodes the store goes beside the file); then ROMIO's
#           atomicity.c (test/atomic/romio_atomicity.sh, SFIO_NODES_ROMIO_RUNS
#           runs, default 5; a SKIP line where no Open MPI source is found)
#   bench   bench/selftest.sh at N x ppn ranks (atomic mode versioned not forced)
# The configurations are named in test/mpi/mpi_configs.sh.  The
# components are the build tree's ($DIR/components).  Where emulated
# nodes cannot be made (no unshare, not root), or --nodes is empty, the
# whole stream is skipped ("1..0 # SKIP ...").
set -u
shopt -s lastpipe   # sfio_tap_emit runs in this shell: its counts survive
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/test/mpi/mpi_configs.sh"
# defaults from make check's environment (Makefile.am)
builddir=${SFIO_NODES_BUILDDIR:-}
counts=${SFIO_NODES_COUNTS-2 4}
ppn=${SFIO_NODES_PPN:-2}
steps=${SFIO_NODES_STEPS:-mpi coord fault place atomic bench}
romio_runs=${SFIO_NODES_ROMIO_RUNS:-5}
while [ $# -gt 0 ]; do
    case "$1" in
    --builddir) builddir=$2; shift 2 ;;
    --nodes) counts=$2; shift 2 ;;
    --ppn) ppn=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "run_nodes_tests.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ -n "$builddir" ] || { echo "run_nodes_tests.sh: --builddir is required" >&2; exit 2; }
builddir=$(cd "$builddir" && pwd)

if [ -z "${counts// /}" ]; then
    echo "1..0 # SKIP no node counts (SFIO_NODES_COUNTS is empty)"
    exit 0
fi
if ! unshare --uts --mount --propagation unchanged true 2>/dev/null; then
    echo "1..0 # SKIP emulated nodes: unshare --uts --mount is not permitted here; run as root"
    exit 0
fi
# the most nodes any entry asks for (NxP:steps -> N)
max_nodes=0
for e in $counts; do
    n=${e%%[x:]*}
    case $n in ''|*[!0-9]*) echo "run_nodes_tests.sh: bad --nodes entry '$e'" >&2; exit 2 ;; esac
    [ "$n" -gt "$max_nodes" ] && max_nodes=$n
done
if ! "$here/mpirun-nodes.sh" --nodes "$max_nodes" --hosts-only; then
    echo "1..0 # SKIP emulated nodes: /etc/hosts has no entries for them and cannot be written"
    exit 0
fi

. "$top/test/sfio_tap.sh"

export SFIO_COMPONENT_PATH=$builddir/components
tmp=$(mktemp)
t_all=$(date +%s)
default_ppn=$ppn
for entry in $counts; do
    n=${entry%%[x:]*}
    ppn=$default_ppn
    entry_steps=$steps
    case $entry in *x*) ppn=${entry#*x}; ppn=${ppn%%:*} ;; esac
    case $entry in *:*) entry_steps=${entry#*:}; entry_steps=${entry_steps//+/ } ;; esac
    case $ppn in ''|*[!0-9]*|0) echo "run_nodes_tests.sh: bad --nodes entry '$entry'" >&2; exit 2 ;; esac
    np=$(( n * ppn ))
    launcher="$here/mpirun-nodes.sh --nodes $n"
    for step in $entry_steps; do
        t0=$(date +%s)
        echo "# == $n emulated nodes x $ppn ranks: $step"
        before=$sfio_tap_failed
        {
        case "$step" in
        mpi)
            bash "$top/test/mpi/run_mpi_tests.sh" --nodes "$n" --stack suite \
                --bindir "$builddir/test/mpi" --np "$np" \
                --configs "default fetchadd_noprov fetchadd_ofi_atomic fetchadd_ofi_message" ;;
        coord)
            if [ -x "$builddir/test/mpi/t_coord" ]; then
                bash "$top/test/mpi/run_mpi_tests.sh" --nodes "$n" --stack suite \
                    --bindir "$builddir/test/mpi" --programs t_coord --np "$np" --configs default
            else
                echo "# t_coord not built (tests-only build)"
            fi ;;
        fault)
            bash "$top/test/mpi/run_mpi_tests.sh" --nodes "$n" --stack suite \
                --bindir "$builddir/test/mpi" --programs t_fault --np "$np" \
                --configs "$SFIO_FAULT_SUITE_CONFIGS" ;;
        place)
            bash "$top/test/mpi/run_mpi_tests.sh" --nodes "$n" --stack adaptive \
                --bindir "$builddir/test/mpi" --programs t_coll_unequal --np "$np" \
                --configs "$(echo $SFIO_NODES_PLACE_CONFIGS)" ;;
        atomic)
            SFIO_MPIRUN=$launcher bash "$top/test/atomic/run_atomic_tests.sh" --quick \
                --np "$np" --crash-runs 2 --first-write-runs 2 --kill-node --no-store-shm \
                --lock-modes "" --bindir "$builddir/test/atomic"
            r=$?
            # ROMIO's own atomicity test (its source: romio_atomicity.sh)
            SFIO_MPIRUN=$launcher bash "$top/test/atomic/romio_atomicity.sh" --np "$np" \
                --runs "$romio_runs" >"$tmp" 2>&1
            rr=$?
            sed 's/^/  /' "$tmp"
            res=$(grep -m1 '^romio atomicity np=' "$tmp" | sed 's/.*: //')
            name="romio atomicity np=$np suite, $n nodes x $ppn"
            case $rr in
            0) echo "ok - $name: ${res:-?} runs" ;;
            77) echo "ok - $name # SKIP $(tail -1 "$tmp" | sed 's/^romio_atomicity: //')" ;;
            *) echo "not ok - $name: exit $rr, ${res:-no result} runs" ;;
            esac
            [ $rr = 0 ] || [ $rr = 77 ] || r=$rr
            (exit $r) ;;
        bench)
            # not TAP: one result for the whole self-test
            (cd "$builddir/bench" &&
             SFIO_MPIRUN=$launcher SFIO_CROSS_NODE=1 bash "$top/bench/selftest.sh" --np "$np" \
                 --bench ./sfio_bench --netstore-lib ./.libs/libnetstore.so) >"$tmp" 2>&1
            r=$?
            sed 's/^/  /' "$tmp"
            summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp" | tail -1)
            if [ $r = 0 ]; then echo "ok - bench selftest, $n nodes x $ppn: ${summary:-no summary}"
            else echo "not ok - bench selftest, $n nodes x $ppn: exit $r, ${summary:-no summary}"
            fi
            (exit $r) ;;
        *) echo "run_nodes_tests.sh: unknown step '$step'" >&2; exit 2 ;;
        esac
        } 2>&1 | sfio_tap_emit
        r=${PIPESTATUS[0]}
        # a step that stopped before reporting a failed run still fails once
        if [ "$r" != 0 ] && [ "$sfio_tap_failed" = "$before" ]; then
            sfio_tap_result $r "$step, $n nodes x $ppn: exit $r without a failed run"
        fi
        echo "# == $n nodes $step: exit $r in $(( $(date +%s) - t0 )) s"
    done
done
rm -f "$tmp"
echo "# emulated nodes {$counts} (x $default_ppn where not given): $(( $(date +%s) - t_all )) s"
echo "1..$sfio_tap_tests"
[ "$sfio_tap_failed" = 0 ]
