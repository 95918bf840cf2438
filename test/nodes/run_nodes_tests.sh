#!/bin/bash
# run_nodes_tests.sh: the cross-node selection of the test suites, on
# emulated nodes (mpirun-nodes.sh), at each node count with --ppn ranks per
# node.  Run by `make check` in test/nodes; each step prints its own
# "N passed, N failed" line (CI sums them), this script none of its own.
#
#   run_nodes_tests.sh --builddir DIR [--nodes "2 4"] [--ppn 2] [--steps "mpi fault place atomic bench"]
#
# Steps, at every node count N (np = N x ppn):
#   mpi     test/mpi on the suite stack, default configuration: views, calls,
#           non-blocking, collective progress, shared pointer, amode, private
#           cache; t_fetchadd only where sharedfp/fetchadd serves the ranks
#   fault   t_fault under the faultio preload, suite stack (fault_two_phase,
#           fault-async_static)
#   place   fcoll/adaptive placement over real host names: nodes-block_<alg>
#           and nodes-cyclic_<alg>, t_coll_unequal, each algorithm
#   atomic  test/atomic: t_atomicity, t_serial (independent, 4 KiB cycles,
#           collective, fcoll/adaptive) and t_stall; atomic mode falls back
#           to list locks across nodes (fs/versioned keeps no store across
#           nodes), so the crash runs, which check the versioned store's
#           recovery, are left out
#   bench   bench/selftest.sh at N x ppn ranks (atomic mode versioned not forced)
# The components are the build tree's ($DIR/components).  Where emulated
# nodes cannot be made (no unshare, not root), it says so and exits 0.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=
counts="2 4"
ppn=2
steps="mpi fault place atomic bench"
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

if ! unshare --uts --mount --propagation unchanged true 2>/dev/null; then
    echo "# emulated nodes: skipped (unshare --uts --mount is not permitted here; run as root)"
    exit 0
fi
if ! "$here/mpirun-nodes.sh" --nodes "${counts##* }" --hosts-only; then
    echo "# emulated nodes: skipped (/etc/hosts has no entries for them and cannot be written)"
    exit 0
fi

export SFIO_COMPONENT_PATH=$builddir/components
rc=0
t_all=$(date +%s)
for n in $counts; do
    np=$(( n * ppn ))
    launcher="$here/mpirun-nodes.sh --nodes $n"
    for step in $steps; do
        t0=$(date +%s)
        echo "== $n emulated nodes x $ppn ranks: $step"
        case "$step" in
        mpi)
            bash "$top/test/mpi/run_mpi_tests.sh" --nodes "$n" --stack suite \
                --bindir "$builddir/test/mpi" --np "$np" --configs default ;;
        fault)
            bash "$top/test/mpi/run_mpi_tests.sh" --nodes "$n" --stack suite \
                --bindir "$builddir/test/mpi" --programs t_fault --np "$np" \
                --configs "fault_two_phase fault-async_static" ;;
        place)
            bash "$top/test/mpi/run_mpi_tests.sh" --nodes "$n" --stack adaptive \
                --bindir "$builddir/test/mpi" --programs t_coll_unequal --np "$np" \
                --configs "nodes-block_two_phase nodes-block_dynamic nodes-block_static nodes-cyclic_two_phase nodes-cyclic_dynamic nodes-cyclic_static" ;;
        atomic)
            SFIO_MPIRUN=$launcher bash "$top/test/atomic/run_atomic_tests.sh" --quick \
                --np "$np" --no-crash --no-first-write --lock-modes "" \
                --bindir "$builddir/test/atomic" ;;
        bench)
            (cd "$builddir/bench" &&
             SFIO_MPIRUN=$launcher SFIO_CROSS_NODE=1 bash "$top/bench/selftest.sh" --np "$np" \
                 --bench ./sfio_bench --netstore-lib ./.libs/libnetstore.so) ;;
        *) echo "run_nodes_tests.sh: unknown step '$step'" >&2; exit 2 ;;
        esac
        r=$?
        [ $r = 0 ] || rc=1
        echo "== $n nodes $step: exit $r in $(( $(date +%s) - t0 )) s"
    done
done
echo "# emulated nodes {$counts} x $ppn: $(( $(date +%s) - t_all )) s"
exit $rc
