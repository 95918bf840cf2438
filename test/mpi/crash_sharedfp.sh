#!/bin/bash
# crash_sharedfp.sh: a crashed job must never hang or corrupt the next run
# of sharedfp/fetchadd (issue #6).
#
# Usage: crash_sharedfp.sh [--np P] [--runs N] [--bin PATH/t_fetchadd] [--dir DIR]
#
# Each run: start "mpirun -np P t_fetchadd --crash-loop" (every rank opens a
# file, write_shared's a record and closes it, in a loop: the kill lands in
# open, in a write or in close), sleep 0.2-1.5 s, kill -9 every rank (by the
# pids the ranks logged), wait for mpirun to end.  Then plant a segment
# named like one a job killed inside MPI_File_open leaves behind (creator
# pid = a killed rank).  The next job (t_fetchadd: append, same_basename,
# reopen_loop, all under a 120 s timeout) must pass, and afterwards no
# coordination segment of a killed rank may remain in /dev/shm.  The
# crashed job's data file is then opened again and appended to.
# Prints "ok/FAIL crash run i ..." and a last line "N passed, N failed".
set -u

np=4
runs=3
bin=
dir=${SFIO_TEST_DIR:-/tmp}
while [ $# -gt 0 ]; do
    case "$1" in
    --np) np=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "crash_sharedfp.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$bin" ]; then
    for b in ${T_FETCHADD:-} ./t_fetchadd "$here/t_fetchadd"; do
        if [ -x "$b" ]; then bin=$b; break; fi
    done
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "crash_sharedfp.sh: t_fetchadd not found (--bin PATH)" >&2
    exit 2
fi
if [ -n "${SFIO_COMPONENT_PATH:-}" ]; then
    pkglibdir=$(env -u OMPI_MCA_mca_base_component_path ompi_info --path pkglibdir --parsable \
                2>/dev/null | sed -n 's/^path:pkglibdir://p')
    export OMPI_MCA_mca_base_component_path="$SFIO_COMPONENT_PATH${pkglibdir:+:$pkglibdir}"
fi
mpirun_cmd="mpirun --allow-run-as-root --oversubscribe --mca io ompio --mca sharedfp fetchadd"
shm=/dev/shm
uid=$(id -u)

passed=0
failed=0
for run in $(seq 1 "$runs"); do
    work=$(mktemp -d "$dir/sfio-crash-sfp.XXXXXX") || exit 2
    why=
    # 1. the job to crash
    SFIO_TEST_DIR=$work $mpirun_cmd -np "$np" "$bin" --crash-loop >"$work/crash.log" 2>&1 &
    mpirun_pid=$!
    for _ in $(seq 1 200); do
        [ "$(ls "$work"/crash.pid.* 2>/dev/null | wc -l)" -ge "$np" ] && break
        sleep 0.05
    done
    pids=$(cat "$work"/crash.pid.* 2>/dev/null | tr '\n' ' ')
    if [ "$(echo $pids | wc -w)" -lt "$np" ]; then
        why="crash job did not start (see $work/crash.log)"
    fi
    sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.3f", 0.2 + 1.3 * r / 32768 }')"
    for p in $pids; do
        kill -9 "$p" 2>/dev/null
    done
    for _ in $(seq 1 100); do
        kill -0 "$mpirun_pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$mpirun_pid" 2>/dev/null; then
        kill -9 "$mpirun_pid" 2>/dev/null
    fi
    wait "$mpirun_pid" 2>/dev/null
    # 2. a segment as a job killed inside MPI_File_open leaves it
    dead=$(echo $pids | awk '{ print $1 }')
    planted=
    if [ -n "$dead" ]; then
        planted=$shm/sfio-coord-$uid-$dead-00000000deadbeef
        : >"$planted"
    fi
    # 3. the next job: must pass, in bounded time
    if [ -z "$why" ]; then
        SFIO_TEST_DIR=$work SFIO_TEST_ONLY=append,same_basename,reopen_loop \
            timeout 120 $mpirun_cmd -np "$np" "$bin" >"$work/next.log" 2>&1
        rc=$?
        if [ $rc -eq 124 ]; then
            why="the next job hung (timeout 120 s; $work/next.log)"
        elif [ $rc -ne 0 ] || grep -q '^FAIL' "$work/next.log"; then
            why="the next job failed (exit $rc): $(grep '^FAIL' "$work/next.log" | head -1)"
        fi
    fi
    # 4. nothing of the killed ranks left in /dev/shm
    if [ -z "$why" ]; then
        for p in $pids; do
            left=$(ls "$shm" 2>/dev/null | grep -c "^sfio-coord-$uid-$p-")
            if [ "$left" -ne 0 ]; then
                why="$left coordination segment(s) of killed rank $p left in $shm"
                break
            fi
        done
    fi
    # 5. the crashed job's file opens again and takes appends
    if [ -z "$why" ] && [ -f "$work/crash.dat" ]; then
        before=$(stat -c %s "$work/crash.dat")
        rm -f "$work"/crash.pid.*
        SFIO_TEST_DIR=$work timeout 60 $mpirun_cmd -np "$np" "$bin" --crash-loop \
            >/dev/null 2>&1 &
        again=$!
        for _ in $(seq 1 200); do
            [ "$(ls "$work"/crash.pid.* 2>/dev/null | wc -l)" -ge "$np" ] && break
            sleep 0.05
        done
        sleep 0.5
        pids2=$(cat "$work"/crash.pid.* 2>/dev/null | tr '\n' ' ')
        for p in $pids2; do
            kill -9 "$p" 2>/dev/null
        done
        wait "$again" 2>/dev/null
        after=$(stat -c %s "$work/crash.dat")
        if [ "$after" -le "$before" ]; then
            why="no appends to the crashed job's file ($before -> $after bytes)"
        fi
        # the second crash may leave a segment too: the next open sweeps it
        SFIO_TEST_DIR=$work SFIO_TEST_ONLY=append timeout 120 $mpirun_cmd -np "$np" "$bin" \
            >/dev/null 2>&1 || why="the job after the second crash failed"
        for p in $pids2; do
            if ls "$shm" 2>/dev/null | grep -q "^sfio-coord-$uid-$p-"; then
                why="segment of killed rank $p left in $shm after the next job"
            fi
        done
    fi
    [ -n "$planted" ] && rm -f "$planted"
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        echo "ok crash run $run (np $np, killed pids $pids)"
        rm -rf "$work"
    else
        failed=$((failed + 1))
        echo "FAIL crash run $run: $why (kept $work)"
    fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
