#!/bin/bash
# probe_check.sh: sharedfp/fetchadd and the per-open probes of stock
# sharedfp lockedfile and sm (sharedfp_fetchadd_skip_probes), as TAP for
# automake (suite stack only).  Each job: 2 ranks, every sharedfp
# component loaded, t_shared's write_shared subtest, the sharedfp
# framework's selection log (sharedfp_base_verbose).
#
#   probes.skipped    fetchadd serves the file: lockedfile and sm do not
#                     probe it (their queries return at once), fetchadd
#                     is selected, the subtest passes
#   probes.fallback   fetchadd steps aside (no libfabric provider of that
#                     name): lockedfile probes as in stock Open MPI and a
#                     stock component serves the file
#   probes.priority   lockedfile above fetchadd's priority: it is probed
#                     and selected (only components that would lose are
#                     spared their probe)
#   probes.off        sharedfp_fetchadd_skip_probes 0: every probe runs
#
# Environment (Makefile.am): SFIO_COMPONENT_PATH, SFIO_MPI_STACK,
# SFIO_MPI_BINDIR (t_shared).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../sfio_tap.sh"
. "$here/../sfio_component_path.sh"
bindir=${SFIO_MPI_BINDIR:-$PWD}
if [ "${SFIO_MPI_STACK:-suite}" != suite ]; then
    echo "1..0 # SKIP suite stack only"
    exit 0
fi
sfio_use_build_components
dir=$(mktemp -d "${SFIO_TEST_DIR:-/tmp}/sfio-probe.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
log=$dir/job.log

run_job() {   # run_job MCA...: one 2-rank job; 0 when it passed
    SFIO_TEST_DIR=$dir SFIO_TEST_ONLY=shared.write_shared timeout 120 \
        ${SFIO_MPIRUN:-mpirun --allow-run-as-root --oversubscribe} -np 2 \
        --mca io ompio --mca fs versioned --mca fbtl versioned \
        --mca sharedfp fetchadd,individual,lockedfile,sm --mca sharedfp_base_verbose 100 \
        "$@" "$bindir/t_shared" >"$log" 2>&1
}

# replies COMPONENT: what its queries answered in the log, one word per
# query ("failure", or the priority), over both ranks.
replies() {
    awk -v c="$1" '
        match($0, /^\[[^]]*\]/) { who = substr($0, RSTART, RLENGTH) }
        / select: initialising sharedfp component / { asked[who] = ($NF == c) }
        / select: query returned / && asked[who] { print $NF; asked[who] = 0 }' "$log" |
        sort | uniq -c | awk '{ printf "%s%sx%s", sep, $1, $2; sep = " " }'
}
probed() { grep -c "lockedfile_component_file_query: returned" "$log"; }
selected() { grep -c "select: component $1 selected" "$log"; }
observed() {
    echo "lockedfile probes $(probed), lockedfile $(replies lockedfile), sm $(replies sm)," \
         "selected: fetchadd $(selected fetchadd), lockedfile $(selected lockedfile)"
}
# report NAME STATUS: one TAP result; on failure what the log showed.
report() {
    if [ "$2" != 0 ]; then
        echo "# $1: $(observed)"
        sed 's/^/# /' "$log" | tail -20
    fi
    sfio_tap_result "$2" "$1"
}

run_job && [ "$(probed)" = 0 ] && [ "$(replies lockedfile)" = "2xfailure" ] &&
    [ "$(replies sm)" = "2xfailure" ] && [ "$(selected fetchadd)" = 2 ]
report probes.skipped $?

run_job --mca sharedfp_fetchadd_backend ofi --mca sharedfp_fetchadd_provider sfio-none &&
    [ "$(probed)" = 2 ] && [ "$(selected fetchadd)" = 0 ] && [ "$(replies sm)" = "2x30" ]
report probes.fallback $?

run_job --mca sharedfp_lockedfile_priority 60 && [ "$(probed)" = 2 ] &&
    [ "$(selected lockedfile)" = 2 ] && [ "$(replies sm)" = "2xfailure" ]
report probes.priority $?

run_job --mca sharedfp_fetchadd_skip_probes 0 && [ "$(probed)" = 2 ] &&
    [ "$(replies sm)" = "2x30" ] && [ "$(selected fetchadd)" = 2 ]
report probes.off $?

echo "1..$sfio_tap_tests"
