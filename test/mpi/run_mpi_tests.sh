#!/bin/bash
# run_mpi_tests.sh: run the MPI-IO integration tests of test/mpi/ at several
# process counts and MCA configurations, and summarize.
#
# Usage: run_mpi_tests.sh [--stack suite|stock|adaptive|fbtl-ufs] [--np "1 2 4 8"] [--quick]
#                         [--configs "default smallbuf"] [--bindir DIR]
#                         [--programs "t_views t_calls ..."] [--keep] [--nodes N]
#
#   --stack suite   --mca fs versioned --mca fbtl versioned (default), and
#                   --mca sharedfp fetchadd when that component is built; when
#                   SFIO_COMPONENT_PATH is set it is prepended to Open MPI's
#                   component path via OMPI_MCA_mca_base_component_path
#   --stack stock   --mca fs ufs --mca fbtl posix (stock Open MPI components)
#   --stack fbtl-ufs  --mca fs ufs --mca fbtl versioned (the suite's data
#                   path and lock modes over the stock fs)
#   --stack adaptive  stock fs/fbtl, the suite's components on the path (for
#                   the adaptive_* configurations: fcoll/adaptive without
#                   the suite's fs/fbtl proxies)
#   --np LIST       process counts (default "1 2 4 8"; --quick: "1 4")
#   --quick         only the default configuration, np "1 4" unless --np given
#   --configs LIST  configurations (default "default smallbuf", plus
#                   "fetchadd_rma depth8-versioned" on the suite stack); every
#                   configuration, what it passes to mpirun and the named
#                   lists are in mpi_configs.sh
#   --bindir DIR    where the test programs are (default: the current directory
#                   if it holds them, else they are built with ${MPICC:-mpicc}
#                   -O2 -Wall into ${TMPDIR:-/tmp}/sfio-mpi-bin)
#   --programs LIST subset of programs
#   --keep          keep the test directory and logs
#   --nodes N       run every job on N emulated nodes (test/nodes/mpirun-nodes.sh:
#                   a namespace per node with its own host name and /dev/shm,
#                   TCP over loopback between nodes), np/N ranks per node in
#                   blocks; without it the launcher is $SFIO_MPIRUN if set, else
#                   mpirun --oversubscribe.  On the suite stack sharedfp is
#                   "fetchadd,lockedfile,individual" (fetchadd steps aside where
#                   it cannot serve the ranks, e.g. no one-sided MPI over TCP),
#                   and t_fetchadd, which tests fetchadd itself, is skipped with
#                   a note when fetchadd stepped aside (its reopen_loop
#                   subtest always: it checks one node's segments).
#                   Configurations only here:
#                     nodes-block_<alg>, nodes-cyclic_<alg>  fcoll adaptive, N+1
#                                   aggregators forced, ranks in blocks or round
#                                   robin over the nodes; the run also fails
#                                   unless every call's aggregators (verbose 1,
#                                   real host names) cover the N nodes with
#                                   counts differing by at most 1
#
# Every program x np x config is one run with a 120 s timeout; a run passes
# when the program exits 0 (no FAIL line; xfail lines are known stock bugs,
# xpass lines are such subtests that happened to pass: neither counts).
# Each run prints one TAP line, "ok - PROG np=N config=C (...)" or
# "not ok - ..." ("# SKIP" where fetchadd stepped aside across nodes).
# The configurations and the default lists are in mpi_configs.sh.
# The programs see SFIO_TEST_STACK (stock|suite), SFIO_TEST_CONFIG and
# SFIO_TEST_DIR; SFIO_TEST_ONLY=a,b / SFIO_TEST_SKIP=a,b filter subtests by name.
# The last lines are "N passed, N failed" and the TAP plan "1..N"; the exit
# status is non-zero on any failure. Test files go to a fresh directory under $SFIO_TEST_DIR (default
# /tmp), removed at the end unless --keep or a run failed (logs are kept).
set -u

stack=suite
nps=
quick=0
configs=
bindir=
programs=
keep=0
nodes=0
srcdir=$(cd "$(dirname "$0")" && pwd)
. "$srcdir/mpi_configs.sh"   # config_mca and the default lists

while [ $# -gt 0 ]; do
    case "$1" in
    --stack) stack=$2; shift 2 ;;
    --stack=*) stack=${1#*=}; shift ;;
    --np) nps=$2; shift 2 ;;
    --np=*) nps=${1#*=}; shift ;;
    --quick) quick=1; shift ;;
    --configs) configs=$2; shift 2 ;;
    --configs=*) configs=${1#*=}; shift ;;
    --bindir) bindir=$2; shift 2 ;;
    --bindir=*) bindir=${1#*=}; shift ;;
    --programs) programs=$2; shift 2 ;;
    --programs=*) programs=${1#*=}; shift ;;
    --keep) keep=1; shift ;;
    --nodes) nodes=$2; shift 2 ;;
    --nodes=*) nodes=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set -u$/{/^set -u$/d;p}' "$0"; exit 0 ;;
    *) echo "run_mpi_tests.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

# t_fetchadd checks what issue #6 asks of sharedfp/fetchadd; stock sharedfp
# components are not held to it (sm: same-basename files share a semaphore;
# lockedfile: lock files), so it runs on the suite stack only.
if [ -z "$programs" ]; then
    programs=$SFIO_DEFAULT_PROGRAMS
    [ "$stack" = suite ] && programs="$programs $SFIO_SUITE_EXTRA_PROGRAMS"
fi

case "$stack" in
suite) stack_mca="--mca fs versioned --mca fbtl versioned" ;;
stock) stack_mca="--mca fs ufs --mca fbtl posix" ;;
adaptive) stack_mca="--mca fs ufs --mca fbtl posix" ;;
fbtl-ufs) stack_mca="--mca fs ufs --mca fbtl versioned" ;;
*) echo "run_mpi_tests.sh: --stack must be suite, stock, adaptive or fbtl-ufs" >&2; exit 2 ;;
esac
if [ -z "$nps" ]; then
    if [ $quick = 1 ]; then nps=$SFIO_QUICK_NPS; else nps=$SFIO_DEFAULT_NPS; fi
fi
if [ -z "$configs" ]; then
    if [ $quick = 1 ]; then configs=$SFIO_QUICK_CONFIGS; else configs=$SFIO_DEFAULT_CONFIGS; fi
    if [ $quick = 0 ] && [ "$stack" = suite ]; then configs="$configs $SFIO_SUITE_EXTRA_CONFIGS"; fi
fi

# Locate or build the programs.
have_all() {
    local p
    for p in $programs; do [ -x "$1/$p" ] || return 1; done
    return 0
}
if [ -z "$bindir" ]; then
    if have_all "$PWD"; then
        bindir=$PWD
    else
        bindir=${TMPDIR:-/tmp}/sfio-mpi-bin
    fi
fi
if ! have_all "$bindir"; then
    mkdir -p "$bindir" || exit 2
    for p in $programs; do
        echo "building $bindir/$p"
        ${MPICC:-mpicc} -O2 -Wall -I"$srcdir" -o "$bindir/$p" "$srcdir/$p.c" || exit 2
    done
fi

# Suite components: prepend the build tree's component dir to Open MPI's own.
if [ "$stack" != stock ] && [ -n "${SFIO_COMPONENT_PATH:-}" ]; then
    . "$(dirname "$0")/../sfio_component_path.sh"
    sfio_use_build_components
    echo "# component path: $OMPI_MCA_mca_base_component_path"
fi
if [ "$stack" = suite ] &&
   ompi_info 2>/dev/null | grep -q "MCA sharedfp: fetchadd"; then
    if [ "$nodes" -gt 0 ]; then
        stack_mca="$stack_mca --mca sharedfp fetchadd,lockedfile,individual"
    else
        stack_mca="$stack_mca --mca sharedfp fetchadd"
    fi
fi

# The launcher: "LAUNCHER -np N ARGS..."
if [ "$nodes" -gt 0 ]; then
    launcher="$srcdir/../nodes/mpirun-nodes.sh --nodes $nodes"
    echo "# $nodes emulated nodes: $launcher"
else
    launcher=${SFIO_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
fi

# fault_* configurations preload faultio: the build tree's, else built here.
faultio=
case " $configs " in
*" fault"*)
    for f in "$bindir/.libs/libfaultio.so" "$bindir/libfaultio.so"; do
        [ -e "$f" ] && { faultio=$(cd "$(dirname "$f")" && pwd)/${f##*/}; break; }
    done
    if [ -z "$faultio" ]; then
        faultio=$(cd "$bindir" && pwd)/libfaultio.so
        echo "building $faultio"
        ${CC:-cc} -O2 -Wall -shared -fPIC -fvisibility=hidden -o "$faultio" \
            "$srcdir/faultio.c" -ldl -lpthread || exit 2
    fi ;;
esac

base=${SFIO_TEST_DIR:-/tmp}
workdir=$(mktemp -d "$base/sfio-mpi-tests.XXXXXX") || exit 2
logdir=$workdir/logs
mkdir -p "$logdir"
export SFIO_TEST_DIR=$workdir
export SFIO_TEST_STACK=$stack

# fcoll_<name> configurations need that stock component (fcoll/two_phase
# exists in Open MPI 4.1 only): drop the ones this Open MPI lacks, saying so.
kept=
for cfg in $configs; do
    case "$cfg" in
    fcoll_*)
        if ! ompi_info 2>/dev/null | grep -q "MCA fcoll: ${cfg#fcoll_} "; then
            echo "# skipping configuration $cfg: this Open MPI has no fcoll/${cfg#fcoll_}"
            continue
        fi ;;
    esac
    kept="$kept $cfg"
done
configs=$kept

# Placement configurations: every "aggregators (rank@node)" line of an
# emulated run (fcoll/adaptive, verbose 1) puts aggregators on all N nodes
# when there are at least N, and the per-node counts differ by at most 1.
# check_placement LOG [NODES]: with NODES, the lines of real nodes, which
# must say NODES nodes.  Prints what is wrong; exit 0 when all is well and
# there was such a line.
check_placement() {
    awk -v want="${2:-0}" '
         /aggregators \(rank@node\)/ && (want > 0 || /emulated/) {
             seen++
             nn = $0; sub(/.*\(/, "", nn); sub(/ nodes.*/, "", nn); nn += 0
             if (want > 0 && nn != want) { print "    " nn " nodes seen, want " want ": " $0; bad++ }
             line = $0; sub(/.*\): /, "", line)
             na = split(line, a, " ")
             delete per
             for (i = 1; i <= na; i++) { split(a[i], rn, "@"); per[rn[2]]++ }
             lo = na; hi = 0
             for (x = 0; x < nn; x++) { c = per[x] + 0; lo = c < lo ? c : lo; hi = c > hi ? c : hi }
             if (na >= nn && lo == 0 || hi - lo > 1) { print "    placement uneven: " line; bad++ }
         }
         END { if (!seen) print "    no placement line (fcoll_adaptive_verbose 1)"; exit (bad || !seen) }' "$1"
}

passed=0
failed=0
skipped=0
failed_runs=
start=$(date +%s)
echo "# stack=$stack np=\"$nps\" configs=\"$configs\" bindir=$bindir"
for cfg in $configs; do
    extra=$(config_mca "$cfg")
    if [ "$extra" = BAD ]; then
        echo "run_mpi_tests.sh: unknown configuration '$cfg'" >&2
        exit 2
    fi
    cfg_programs=$programs
    case "$cfg" in
    fetchadd_*) cfg_programs=$(for p in $programs; do
                    case "$p" in t_shared|t_fetchadd) echo "$p" ;; esac; done) ;;
    fault*) cfg_programs=$(for p in $programs; do
                    case "$p" in t_fault) echo "$p" ;; esac; done) ;;
    esac
    for np in $nps; do
        for p in $cfg_programs; do
            log=$logdir/$p.np$np.$cfg.log
            export SFIO_TEST_CONFIG=$cfg
            t0=$(date +%s)
            # shellcheck disable=SC2086
            run_launcher=$launcher
            case "$cfg" in nodes-cyclic_*) run_launcher="$launcher --cyclic" ;; esac
            verb=
            skip=
            if [ "$nodes" -gt 0 ] && [ "$p" = t_fetchadd ]; then
                # across nodes: reopen_loop checks node-local segments (the
                # ofi backend has none) and costs a minute of opens at 4
                # nodes on two processors.  The launcher's environment
                # reaches the ranks.
                verb="--mca sharedfp_fetchadd_verbose 1"
                skip="SFIO_TEST_SKIP=reopen_loop"
                echo "# t_fetchadd across nodes: reopen_loop (one node's segments) not run"
            fi
            # shellcheck disable=SC2086
            env $skip timeout 120 $run_launcher -np "$np" \
                --mca io ompio $stack_mca $extra $verb "$bindir/$p" >"$log" 2>&1
            rc=$?
            dt=$(( $(date +%s) - t0 ))
            case "$cfg" in
            place-*) [ $rc -eq 0 ] && ! check_placement "$log" >>"$log" && rc=99 ;;
            nodes-*) [ $rc -eq 0 ] && ! check_placement "$log" "$(( np < nodes ? np : nodes ))" >>"$log" && rc=99 ;;
            esac
            if [ -n "$verb" ] && grep -q 'sharedfp:fetchadd: not used for' "$log"; then
                echo "ok - $p np=$np config=$cfg # SKIP sharedfp/fetchadd stepped aside$(grep -m1 -o 'not used for [^:]*: .*' "$log" | sed 's/^not used for [^:]*//')"
                skipped=$((skipped + 1))
                continue
            fi
            nok=$(grep -c '^ok ' "$log")
            nfail=$(grep -c '^FAIL ' "$log")
            nx=$(grep -c '^xfail ' "$log")
            if [ $rc -eq 0 ] && [ "$nfail" -eq 0 ] && grep -q '^# .* failed' "$log"; then
                passed=$((passed + 1))
                echo "ok - $p np=$np config=$cfg ($nok ok, $nx xfail, ${dt}s)"
            else
                failed=$((failed + 1))
                failed_runs="$failed_runs $p/np$np/$cfg"
                why="exit $rc"
                [ $rc -eq 124 ] && why="timeout after 120s"
                [ $rc -eq 99 ] && why="aggregators not spread over the (emulated) nodes"
                echo "not ok - $p np=$np config=$cfg ($why; $nok ok, $nfail failed, ${dt}s; log $log)"
                grep -E '^FAIL ' "$log" | head -20 | sed 's/^/    /'
                if [ "$nfail" -eq 0 ]; then
                    tail -15 "$log" | sed 's/^/    | /'
                fi
            fi
            # known stock bugs, one line per reason: "xfail <reason>: name name ..."
            awk '/^xfail / { name = $2; sub(/:$/, "", name); r = $0;
                             sub(/.* -- known bug: /, "", r);
                             if (!(r in names)) order[n++] = r; names[r] = names[r] " " name }
                 /^ok .*\(xpass/ { xp = xp " " $2 }
                 END { for (i = 0; i < n; i++) print "    xfail (" order[i] "):" names[order[i]];
                       if (xp != "") print "    xpass (expected to fail on this stack, passed):" xp }' "$log"
        done
    done
done
echo "# elapsed $(( $(date +%s) - start ))s"
if [ $failed -eq 0 ] && [ $keep = 0 ]; then
    rm -rf "$workdir"
else
    # data files of finished runs are removed by the programs; keep logs
    echo "# logs kept in $logdir"
fi
[ -n "$failed_runs" ] && echo "# failed runs:$failed_runs"
echo "$passed passed, $failed failed"
echo "1..$((passed + failed + skipped))"
[ $failed -eq 0 ]
