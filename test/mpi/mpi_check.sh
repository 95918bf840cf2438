#!/bin/bash
# mpi_check.sh: the MPI runs of `make check` in test/mpi, as one TAP
# stream (automake's tap-driver counts every run: program x np x
# configuration).  The steps are sfio_mpi_check_steps in mpi_configs.sh;
# each is one run_mpi_tests.sh (or crash_sharedfp.sh) invocation whose
# "ok"/"not ok" lines pass through; the plan comes last.
#
# Environment (set by Makefile.am): SFIO_COMPONENT_PATH (empty: Open MPI
# has the suite built in), SFIO_MPI_STACK
# (suite|stock|..., default suite), SFIO_MPI_TEST_FLAGS (extra runner
# arguments for the steps marked "user"), SFIO_MPI_BINDIR (the programs).
set -u
shopt -s lastpipe   # sfio_tap_emit runs in this shell: its counts survive
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mpi_configs.sh"
stack=${SFIO_MPI_STACK:-suite}
bindir=${SFIO_MPI_BINDIR:-$PWD}
eval "user_flags=(${SFIO_MPI_TEST_FLAGS:-})"
. "$here/../sfio_tap.sh"

have_fetchadd() {
    if [ -n "${SFIO_COMPONENT_PATH:-}" ]; then
        [ -e "$SFIO_COMPONENT_PATH/mca_sharedfp_fetchadd.so" ]
    else   # the suite built into Open MPI
        ompi_info 2>/dev/null | grep -q "MCA sharedfp: fetchadd"
    fi
}

mapfile -t steps < <(sfio_mpi_check_steps)
for step in "${steps[@]}"; do
    IFS='|' read -r label when st progs nps cfgs flags <<<"$step"
    case "$label" in ''|'#'*) continue ;; esac
    case "$when" in
    always) ;;
    suite) [ "$stack" = suite ] || continue ;;
    fetchadd|crash) [ "$stack" = suite ] && have_fetchadd || continue ;;
    engine) [ -x "$bindir/t_coord" ] || continue ;;   # built with the suite's components
    esac
    st=$(eval echo "$st")
    echo "# step $label"
    if [ "$when" = crash ]; then
        out=$(bash "$here/crash_sharedfp.sh" --runs 2 --bin "$bindir/t_fetchadd" 2>&1)
        r=$?
        echo "$out" | sed 's/^/# /'
        sfio_tap_result $r "crash_sharedfp: kill -9 a job, the next one neither hangs nor fails (exit $r)"
        continue
    fi
    args=(--stack "$st" --bindir "$bindir")
    [ "$progs" = - ] || args+=(--programs "$(eval echo "$progs")")
    [ "$nps" = - ] || args+=(--np "$nps")
    [ "$cfgs" = - ] || args+=(--configs "$(eval echo "$cfgs")")
    [ "$flags" = user ] && args+=("${user_flags[@]}")
    before=$sfio_tap_failed
    bash "$here/run_mpi_tests.sh" "${args[@]}" 2>&1 | sfio_tap_emit
    r=${PIPESTATUS[0]}
    # a runner that stopped before reporting a failed run (bad arguments,
    # programs missing) still counts as one failure
    if [ "$r" != 0 ] && [ "$sfio_tap_failed" = "$before" ]; then
        sfio_tap_result $r "step $label: run_mpi_tests.sh exited $r without a failed run"
    fi
done
echo "1..$sfio_tap_tests"
exit 0   # failures are the "not ok" lines
