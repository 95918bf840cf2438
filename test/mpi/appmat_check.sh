#!/bin/bash
# appmat_check.sh: fcoll_adaptive_matrix_file and sfio-place end to end,
# as TAP for automake (suite stack only).
#
#   appmat.dump      4 ranks, interleaved collective writes and reads
#                    (t_coll_unequal), two_phase with 2 aggregators forced:
#                    the file parses, holds 4 ranks, and every rank that is
#                    not an aggregator sent bytes
#   appmat.plan      sfio-place plan on 2 nodes of 2 slots writes a rankfile
#                    of 4 distinct slots, never costlier than the cyclic one
#   appmat.rerun     a second job truncates the file first (one job, one
#                    matrix: the entries do not double)
#   appmat.symlink   a symlink planted at the path is not followed: its
#                    target stays as it was, the job still succeeds
#
# Environment (Makefile.am): SFIO_COMPONENT_PATH, SFIO_MPI_STACK,
# SFIO_MPI_BINDIR (t_coll_unequal), SFIO_PLACE (sfio-place).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../sfio_tap.sh"
. "$here/../sfio_component_path.sh"
bindir=${SFIO_MPI_BINDIR:-$PWD}
place=${SFIO_PLACE:-$bindir/../../tools/sfio-place}
if [ "${SFIO_MPI_STACK:-suite}" != suite ] || [ ! -x "$place" ]; then
    echo "1..0 # SKIP suite stack and sfio-place only"
    exit 0
fi
sfio_use_build_components
dir=$(mktemp -d "${SFIO_TEST_DIR:-/tmp}/sfio-appmat.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
mat=$dir/app.matrix

run_job() {   # run_job MATRIX_PATH: one 4-rank job; its output in $dir/job.log
    SFIO_TEST_DIR=$dir SFIO_TEST_ONLY=unequal.interleave timeout 120 \
        ${SFIO_MPIRUN:-mpirun --allow-run-as-root --oversubscribe} -np 4 \
        --mca fs versioned --mca fbtl versioned --mca fcoll adaptive \
        --mca fcoll_adaptive_algorithm two_phase --mca fcoll_adaptive_num_aggregators 2 \
        --mca fcoll_adaptive_matrix_file "$1" \
        "$bindir/t_coll_unequal" >"$dir/job.log" 2>&1
}

# bytes sent by each rank, from the matrix file: "rank bytes" lines
row_sums() {
    awk 'NR > 1 && !/^#/ && NF == 3 { s[$1] += $3 } END { for (r in s) print r, s[r] }' "$1" | sort -n
}

run_job "$mat"; rc=$?
sed 's/^/# /' "$dir/job.log"
ok=1
if [ $rc = 0 ] && [ "$(head -1 "$mat" 2>/dev/null)" = "sfio-appmatrix 1 4" ]; then
    senders=$(row_sums "$mat" | awk '$2 > 0' | wc -l)
    echo "# matrix: $(($(wc -l <"$mat") - 1)) entries, $senders ranks sent"
    [ "$senders" -ge 2 ] && ok=0     # 4 ranks, at most 2 aggregators
fi
sfio_tap_result $ok "appmat.dump: 4 ranks, two_phase x 2 aggregators, rows of the senders"

out=$("$place" plan "$mat" --hosts n1:2,n2:2 --from cyclic -o "$dir/rankfile" 2>&1); rc=$?
echo "# $out"
ok=1
if [ $rc = 0 ] && [ "$(grep -c '^rank [0-3]=n[12] slot=[01]$' "$dir/rankfile")" = 4 ] &&
   [ "$(grep '^rank' "$dir/rankfile" | cut -d= -f2- | sort -u | wc -l)" = 4 ]; then
    before=$(sed -n 's/.*cost \([^ ]*\) (cyclic) -> \([^ ]*\).*/\1/p' <<<"$out")
    after=$(sed -n 's/.*cost \([^ ]*\) (cyclic) -> \([^ ]*\).*/\2/p' <<<"$out")
    awk -v b="$before" -v a="$after" 'BEGIN { exit !(a <= b) }' && ok=0
fi
sfio_tap_result $ok "appmat.plan: rankfile of 4 distinct slots, cost not above cyclic"

first=$(row_sums "$mat")
run_job "$mat"; rc=$?
second=$(row_sums "$mat")
[ $rc = 0 ] && [ -n "$first" ] && [ "$first" = "$second" ]
sfio_tap_result $? "appmat.rerun: the next job's matrix replaces the last one"

echo keep >"$dir/target"
ln -s "$dir/target" "$dir/link.matrix"
run_job "$dir/link.matrix"; rc=$?
sed 's/^/# /' "$dir/job.log" | grep -i matrix
[ $rc = 0 ] && [ "$(cat "$dir/target")" = keep ] && grep -q "application matrix" "$dir/job.log"
sfio_tap_result $? "appmat.symlink: not followed, said once, the job succeeds"

echo "1..$sfio_tap_tests"
[ "$sfio_tap_failed" = 0 ]
