#!/bin/bash
# selftest.sh - functional test of the benchmark harness against the MPI-IO
# stacks this Open MPI has (stock OMPIO, ROMIO; the suite's components when
# installed).  Every scenario must verify its data at several rank counts, with
# and without the emulated network storage, and a deliberately corrupted run
# (BENCH_CORRUPT=1) must be refused.  Ends with "N passed, N failed".
#
#   selftest.sh [--bench PATH] [--netstore-lib PATH] [--np "1 3 4"] [--quick-only]
here=$(cd "$(dirname "$0")" && pwd)
bench=$here/sfio_bench
lib=$here/netstore/libnetstore.so
nps="1 3 4"
while [ $# -gt 0 ]; do
    case $1 in
        --bench) bench=$2; shift 2 ;;
        --netstore-lib) lib=$2; shift 2 ;;
        --np) nps=$2; shift 2 ;;
        *) echo "usage: $0 [--bench PATH] [--netstore-lib PATH] [--np LIST]"; exit 2 ;;
    esac
done
bench=$(readlink -f "$bench"); lib=$(readlink -f "$lib")
# the build tree's components when SFIO_COMPONENT_PATH says where (make check)
if [ -f "$here/../test/sfio_component_path.sh" ]; then
    . "$here/../test/sfio_component_path.sh"
    sfio_use_build_components
fi
dir=$(mktemp -d /tmp/sfio-selftest.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mpirun="mpirun --allow-run-as-root --oversubscribe --bind-to none"
pass=0; fail=0
scen=(noncontig tilerow tiles2d block3d flash tileread "volume --method coll"
      "volume --method master" ior sharedlog ordered "ior --mode coll")
ios="ompio"
# ROMIO is io/romio321 in Open MPI 4.1 and io/romio341 in 5.0
romio=$(ompi_info | sed -n 's/^ *MCA io: \(romio[0-9]*\) .*/\1/p' | head -1)
[ -n "$romio" ] && ios="$ios $romio"

check() { # description, expected rc (0 or 3), command...
    local what=$1 want=$2; shift 2
    "$@" > "$dir/out" 2>&1
    local rc=$?
    if [ "$want" = 0 ] && [ $rc = 0 ] && grep -q "^RESULT " "$dir/out"; then
        pass=$((pass + 1))
    elif [ "$want" = 3 ] && [ $rc != 0 ] && grep -q "VERIFY FAILED" "$dir/out" &&
         ! grep -q "^RESULT " "$dir/out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $what (rc=$rc, wanted ${want})"
        tail -5 "$dir/out" | sed 's/^/    /'
    fi
}

for np in $nps; do
    for io in $ios; do
        for s in "${scen[@]}"; do
            check "np=$np io=$io $s local" 0 \
                $mpirun -np $np --mca io $io "$bench" -s $s --quick --reps 1 -d "$dir"
        done
    done
    # ROMIO implements MPI atomicity: its atomic runs must verify as serializable
    if [ -n "$romio" ]; then
        check "np=$np $romio tilerow atomic" 0 \
            $mpirun -np $np --mca io $romio "$bench" -s tilerow --atomic --quick --reps 1 -d "$dir"
        check "np=$np $romio tiles2d atomic" 0 \
            $mpirun -np $np --mca io $romio "$bench" -s tiles2d --atomic --quick --reps 1 -d "$dir"
    fi
done
# the suite's forced atomic modes, writes and then reads on a read-only handle
if ompi_info | grep -q "MCA fs: versioned"; then
    for m in versioned listlock; do
        check "np=4 suite $m block3d atomic" 0 \
            $mpirun -np 4 --mca fs versioned --mca fbtl versioned --mca fbtl_versioned_atomic_mode $m \
            "$bench" -s block3d --atomic --mode indep --quick --reps 1 -d "$dir"
    done
fi
# emulated network storage, largest rank count
np=${nps##* }
if [ -f "$lib" ]; then
    for io in $ios; do
        for s in "${scen[@]}"; do
            check "np=$np io=$io $s netstore" 0 \
                $mpirun -np $np --mca io $io -x LD_PRELOAD="$lib" -x NETSTORE_DIR="$dir" \
                -x NETSTORE_KEY=selftest$$ "$bench" -s $s --quick --reps 1 -d "$dir"
        done
    done
    check "netstore shared link" 0 \
        $mpirun -np $np -x LD_PRELOAD="$lib" -x NETSTORE_DIR="$dir" -x NETSTORE_SHARED=1 \
        -x NETSTORE_KEY=selftest$$ "$bench" -s ior --quick --reps 1 -d "$dir"
    rm -f /dev/shm/netstore-$(id -u)-selftest$$
else
    echo "note: $lib not built, netstore runs skipped"
fi
# corruption must be detected and refused
for s in noncontig tilerow block3d flash tileread "volume --method master" ior sharedlog ordered; do
    check "corrupt $s refused" 3 \
        $mpirun -np 4 -x BENCH_CORRUPT=1 "$bench" -s $s --quick --reps 1 -d "$dir"
done
# the program real OTPO runs: no arguments, last line is OTPO's NPB format
if "$here/sfio-bench" otpo-wrapper --scenario tilerow --quick --reps 1 --netstore off \
        --bench "$bench" --storage "$dir" -o "$dir/otpo-wrapper.sh" > /dev/null &&
   $mpirun -np 2 "$dir/otpo-wrapper.sh" > "$dir/out" 2>&1 &&
   tail -1 "$dir/out" | grep -Eq '^Time in seconds = [0-9.]+$'; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL: otpo-wrapper program"; tail -5 "$dir/out" | sed 's/^/    /'
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
