#!/bin/bash
# selftest.sh - functional test of the benchmark harness against the MPI-IO
# stacks this Open MPI has (stock OMPIO, ROMIO; the suite's components when
# installed).  Every scenario must verify its data at several rank counts, with
# and without the emulated network storage, and a deliberately corrupted run
# (BENCH_CORRUPT=1) must be refused.  Ends with "N passed, N failed".
#
#   selftest.sh [--bench PATH] [--h5bench PATH] [--netstore-lib PATH] [--np "1 3 4"]
# Environment: SFIO_MPIRUN (launcher taking -np, e.g. test/nodes/mpirun-nodes.sh
# --nodes N), SFIO_CROSS_NODE=1 (the ranks span nodes: see the atomic modes).
# The hdf5 scenario (sfio_h5bench, default: next to sfio_bench) is tested
# where it was built (configure found parallel HDF5).
here=$(cd "$(dirname "$0")" && pwd)
bench=$here/sfio_bench
h5bench=
lib=$here/netstore/libnetstore.so
nps="1 3 4"
while [ $# -gt 0 ]; do
    case $1 in
        --bench) bench=$2; shift 2 ;;
        --h5bench) h5bench=$2; shift 2 ;;
        --netstore-lib) lib=$2; shift 2 ;;
        --np) nps=$2; shift 2 ;;
        *) echo "usage: $0 [--bench PATH] [--h5bench PATH] [--netstore-lib PATH] [--np LIST]"; exit 2 ;;
    esac
done
bench=$(readlink -f "$bench"); lib=$(readlink -f "$lib")
[ -n "$h5bench" ] || h5bench=$(dirname "$bench")/sfio_h5bench
if [ -x "$h5bench" ]; then h5bench=$(readlink -f "$h5bench"); else h5bench=; fi
# the build tree's components when SFIO_COMPONENT_PATH says where (make check)
if [ -f "$here/../test/sfio_component_path.sh" ]; then
    . "$here/../test/sfio_component_path.sh"
    sfio_use_build_components
fi
dir=$(mktemp -d /tmp/sfio-selftest.XXXXXX)
trap 'rm -rf "$dir"' EXIT
# SFIO_MPIRUN: another launcher taking -np (test/nodes/mpirun-nodes.sh --nodes N)
mpirun="${SFIO_MPIRUN:-mpirun --allow-run-as-root --oversubscribe} --bind-to none"
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
    # HDF5 collective dataset write + read through each io component
    if [ -n "$h5bench" ]; then
        for io in $ios; do
            check "np=$np io=$io hdf5 local" 0 \
                $mpirun -np $np --mca io $io "$h5bench" -s hdf5 --quick --reps 1 -d "$dir"
        done
    fi
    # ROMIO implements MPI atomicity: its atomic runs must verify as serializable
    if [ -n "$romio" ]; then
        check "np=$np $romio tilerow atomic" 0 \
            $mpirun -np $np --mca io $romio "$bench" -s tilerow --atomic --quick --reps 1 -d "$dir"
        check "np=$np $romio tiles2d atomic" 0 \
            $mpirun -np $np --mca io $romio "$bench" -s tiles2d --atomic --quick --reps 1 -d "$dir"
    fi
done
# the suite's forced atomic modes, writes and then reads on a read-only handle
# (SFIO_CROSS_NODE=1, ranks on several nodes: fs/versioned keeps no store
# there, so forcing versioned must fail; only listlock is run)
if ompi_info | grep -q "MCA fs: versioned"; then
    modes="versioned listlock"
    if [ "${SFIO_CROSS_NODE:-0}" = 1 ]; then
        modes=listlock
        echo "note: atomic mode versioned not forced across nodes (no versioned store there)"
    fi
    for m in $modes; do
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
    if [ -n "$h5bench" ]; then
        for io in $ios; do
            check "np=$np io=$io hdf5 netstore" 0 \
                $mpirun -np $np --mca io $io -x LD_PRELOAD="$lib" -x NETSTORE_DIR="$dir" \
                -x NETSTORE_KEY=selftest$$ "$h5bench" -s hdf5 --quick --reps 1 -d "$dir"
        done
    fi
    check "netstore shared link" 0 \
        $mpirun -np $np -x LD_PRELOAD="$lib" -x NETSTORE_DIR="$dir" -x NETSTORE_SHARED=1 \
        -x NETSTORE_KEY=selftest$$ "$bench" -s ior --quick --reps 1 -d "$dir"
    # stripe locks: the data still verifies, with one client per node too
    check "netstore stripe locks shared link" 0 \
        $mpirun -np $np -x LD_PRELOAD="$lib" -x NETSTORE_DIR="$dir" -x NETSTORE_SHARED=1 \
        -x NETSTORE_STRIPE_LOCKS=1 -x NETSTORE_KEY=selftest$$ "$bench" -s noncontig --quick \
        --reps 1 -d "$dir"
    # ... and per process, callbacks are charged where ranks interleave in a
    # stripe (noncontig) and not where each keeps to its own (ior's blocks);
    # counted, not timed, so that a busy machine cannot fail it
    if [ "$np" -gt 1 ]; then
        for s in noncontig ior; do
            $mpirun -np $np -x LD_PRELOAD="$lib" -x NETSTORE_DIR="$dir" -x NETSTORE_STATS=1 \
                -x NETSTORE_STRIPE_LOCKS=1 -x NETSTORE_KEY=selftest$$ "$bench" -s $s --quick \
                --reps 1 -d "$dir" > "$dir/out.$s" 2>&1
        done
        if grep -q "^RESULT " "$dir/out.noncontig" && grep -q "^RESULT " "$dir/out.ior" &&
           grep -q "revokes=[1-9]" "$dir/out.noncontig" && ! grep -q "revokes=[1-9]" "$dir/out.ior"; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1)); echo "FAIL: netstore stripe lock callbacks"
            grep -h "netstore\[" "$dir/out.noncontig" "$dir/out.ior" | sed 's/^/    /'
        fi
    fi
    # space reservation is a request to the server: charged, counted as
    # metadata even where opens and closes are not (NETSTORE_META=0);
    # fallocate(1) makes two such requests, its fallocate and an fsync
    if command -v fallocate > /dev/null; then
        : > "$dir/reserved"
        NETSTORE_DIR="$dir" NETSTORE_META=0 NETSTORE_STATS=1 NETSTORE_KEY=selftest$$ \
            LD_PRELOAD="$lib" fallocate -n -l 8192 "$dir/reserved" 2> "$dir/out.fallocate"
        if grep -q "meta=2 " "$dir/out.fallocate"; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1)); echo "FAIL: netstore charges fallocate"
            sed 's/^/    /' "$dir/out.fallocate"
        fi
        rm -f "$dir/reserved"
    fi
    rm -f /dev/shm/netstore-$(id -u)-selftest$$ "$dir"/.netstore-stripes-*
else
    echo "note: $lib not built, netstore runs skipped"
fi
# Across nodes, what follows does not depend on where the ranks run (the
# refusal of corrupted data, the report parsers): it is left to the
# single-node run.
if [ "${SFIO_CROSS_NODE:-0}" = 1 ]; then
    echo "note: corruption refusal and report parsing left to the single-node self-test"
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
fi
# corruption must be detected and refused
for s in noncontig tilerow block3d flash tileread "volume --method master" ior sharedlog ordered \
         "smallwrite --writes 200"; do
    check "corrupt $s refused" 3 \
        $mpirun -np 4 -x BENCH_CORRUPT=1 "$bench" -s $s --quick --reps 1 -d "$dir"
done
# smallwrite's atomic check goes overlap by overlap: a correct run passes,
# a stretch two calls share made of both writers' bytes is refused
check "smallwrite atomic" 0 \
    $mpirun -np 4 "$bench" -s smallwrite --atomic --writes 200 --reps 1 -d "$dir"
check "torn smallwrite refused" 3 \
    $mpirun -np 4 -x BENCH_TEAR=1 "$bench" -s smallwrite --atomic --writes 200 --reps 1 -d "$dir"
if [ -n "$h5bench" ]; then
    # fcoll/adaptive under HDF5, 2-D dataset; then a corrupted write and read refused
    if ompi_info | grep -q "MCA fcoll: adaptive"; then
        check "np=4 fcoll adaptive hdf5 2-D" 0 \
            $mpirun -np 4 --mca io ompio --mca fcoll adaptive "$h5bench" -s hdf5 --ndims 2 \
            --quick --reps 1 -d "$dir"
    fi
    check "corrupt hdf5 write refused" 3 \
        $mpirun -np 4 -x BENCH_CORRUPT=1 "$h5bench" -s hdf5 --op write --quick --reps 1 -d "$dir"
    check "corrupt hdf5 read refused" 3 \
        $mpirun -np 4 -x BENCH_CORRUPT=1 "$h5bench" -s hdf5 --op read --quick --reps 1 -d "$dir"
else
    echo "note: sfio_h5bench not built (no parallel HDF5), hdf5 runs skipped"
fi
# aggsweep's report: cases from a fixed raw CSV (auto individual = 0
# aggregators against the best forced count, the 10% boundary, a failed auto
# run not counted) and its parsing of fcoll_adaptive_verbose lines
cat > "$dir/agg_raw.csv" <<'CSV'
scenario,netstore,op,np,setting,algorithm,status,reps,MBps,aggregators,alg_used,calls,reason,note
block3d,off,write,4,auto,auto,ok,3,180.0,2,two_phase,3,,
block3d,off,write,4,1,auto,ok,3,100.0,1,two_phase,3,,
block3d,off,write,4,2,auto,ok,3,200.0,2,two_phase,3,,
block3d,off,write,4,4,auto,FAIL,0,,,,0,verify: x,
block3d,off,read,4,auto,auto,ok,3,500.0,0,individual,3,,
block3d,off,read,4,1,two_phase,ok,3,90.0,1,two_phase,3,,
block3d,off,read,4,2,two_phase,ok,3,150.0,2,two_phase,3,,
block3d,off,read,4,4,two_phase,ok,3,120.0,4,two_phase,3,,
hdf5,on,write,4,auto,auto,ok,3,89.9,4,dynamic,3,,
hdf5,on,write,4,1,auto,ok,3,50.0,1,dynamic,3,,
hdf5,on,write,4,2,auto,ok,3,100.0,2,dynamic,3,,
flash,on,write,4,auto,auto,FAIL,0,,,,0,rc=1: boom,
flash,on,write,4,1,auto,ok,3,10.0,1,two_phase,3,,
CSV
if "$here/sfio-bench" aggsweep --from "$dir/agg_raw.csv" > "$dir/out" 2>&1 &&
   grep -q '^auto within 10% of best in 2 of 3 cases (1 failed cases not counted)$' "$dir/out" &&
   grep -Eq '^block3d +local +write .* 180\.0 2 \(two_phase\) +\| +2 +200\.0 +0\.90 yes' "$dir/out" &&
   grep -Eq '^block3d +local +read .* 500\.0 0 \(individual\) +\| +2 +150\.0 +3\.33 yes' "$dir/out" &&
   grep -Eq '^hdf5 +netstore +write .* 0\.90 no' "$dir/out" &&
   grep -Eq '^flash +netstore +write .*FAIL' "$dir/out"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL: aggsweep report"; sed 's/^/    /' "$dir/out" | tail -12
fi
if python3 - "$here/sfio-bench" > "$dir/out" 2>&1 <<'PY'
import importlib.machinery, importlib.util, sys
ld = importlib.machinery.SourceFileLoader('sfio_bench_drv', sys.argv[1])
m = importlib.util.module_from_spec(importlib.util.spec_from_loader(ld.name, ld))
ld.exec_module(m)
err = '\n'.join([
    '[fcoll:adaptive] fcoll:adaptive: write_all two_phase: np=4 bytes=8388608 c=1 gap=0 dup=4096 aggregators=4 cycles=8 cycle_bytes=1048576 async',
    '[fcoll:adaptive] fcoll:adaptive: write_all two_phase: np=4 bytes=2048 c=1 gap=0 aggregators=1 cycles=1 cycle_bytes=1',
    '[fcoll:adaptive] fcoll:adaptive: read_all individual: np=4 bytes=8388608 c=1 gap=0 aggregators=3 cycles=0 cycle_bytes=0',
    '[fcoll:adaptive] fcoll:adaptive: read_all individual (apart): np=4 bytes=4096 c=1024 gap=0 dup=0 interleaved=0 min_run=1024 links=1 aggregators=0 cycles=0 cycle_bytes=0'])
c = m.parse_adaptive_verbose(err)
assert m.chosen_aggregators(c['write'])[:2] == (4, 'two_phase'), c
assert m.chosen_aggregators(c['write'])[2].startswith('mixed'), c
assert m.chosen_aggregators(c['read'])[:2] == (0, 'individual'), c
assert len(c['read']) == 2, c
assert m.chosen_aggregators(None) == (None, '', '')
assert m.forced_algorithm({'write': 'dynamic', 'read': 'two_phase'}) == 'auto'
assert m.forced_algorithm({'write': 'dynamic', 'read': 'individual'}) == 'dynamic'
assert m.forced_algorithm({'read': 'individual'}) == 'two_phase'
print('ok')
PY
then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL: aggsweep verbose parsing"; tail -5 "$dir/out" | sed 's/^/    /'
fi
# iorsweep --from CSV: its report holds every given line (fixed strings)
iorsweep_report() {
    local label=$1 csv=$2 line ok=1
    shift 2
    "$here/sfio-bench" iorsweep --from "$csv" --no-plot --out "$csv.out" > "$dir/out" 2>&1 || ok=0
    for line in "$@"; do
        grep -Fq -- "$line" "$dir/out" || ok=0
    done
    if [ "$ok" = 1 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL: $label"; sed 's/^/    /' "$dir/out" | tail -12
    fi
}
# iorsweep's report from a fixed raw CSV: means over the rounds, the best of
# the stock stacks, the 0.95 boundary (not marked), a failed stock run left
# out of the best, a failed suite run without a ratio
cat > "$dir/ior_raw.csv" <<'CSV'
cell,mode,transfer,block,segments,np,storage,stack,config,op,rep,bytes,seconds,MBps,status,reason
ior-t4k-b16k-s1,indep,4k,16k,1,4,locks,suite,suite,write,0,65536,1,90.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,locks,suite,suite,write,1,65536,1,100.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,locks,ompio,ompio,write,0,65536,1,100.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,locks,ompio,ompio,write,1,65536,1,100.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,locks,romio,romio,write,0,65536,1,50.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,locks,romio,romio,write,1,65536,1,70.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,locks,suite,suite,read,0,65536,1,50.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,locks,ompio,ompio,read,0,65536,1,,FAIL,rc=1: x
ior-t4k-b16k-s1,indep,4k,16k,1,4,locks,romio,romio,read,0,65536,1,80.0,ok,
ior-t1m-b4m-s1-coll,coll,1m,4m,1,4,locks,suite,suite,write,0,65536,1,,FAIL,rc=1: y
ior-t1m-b4m-s1-coll,coll,1m,4m,1,4,locks,ompio,ompio-default,write,0,65536,1,10.0,ok,
ior-t1m-b4m-s1-coll,coll,1m,4m,1,4,locks,romio,romio,write,0,65536,1,20.0,ok,
CSV
iorsweep_report "iorsweep report" "$dir/ior_raw.csv" \
    '| indep | 4k | 16k | 1 | 95 | 100 | 60 | 0.95 | 50 | FAIL | 80 | **0.62** |' \
    '| coll | 1m | 4m | 1 | FAIL | 10 | 20 | - |' \
    '1 of 2 cell/op results at >= 0.95x the best stock stack; 1 without a ratio'
# iorsweep's control stack (ROMIO run again): its own ratio to the best
# stock stack, in a column and a count of its own
cat > "$dir/ior_ctl.csv" <<'CSV'
cell,mode,transfer,block,segments,np,storage,stack,config,op,rep,bytes,seconds,MBps,status,reason
ior-t4k-b16k-s1,indep,4k,16k,1,4,off,suite,suite,write,0,65536,1,99.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,off,ompio,ompio,write,0,65536,1,50.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,off,romio,romio,write,0,65536,1,100.0,ok,
ior-t4k-b16k-s1,indep,4k,16k,1,4,off,control,romio,write,0,65536,1,80.0,ok,
CSV
iorsweep_report "iorsweep control stack" "$dir/ior_ctl.csv" \
    '| indep | 4k | 16k | 1 | 99 | 50 | 100 | 0.99 | **0.80** |' \
    '0 of 1 cell/op results at >= 0.95x the best stock stack for ROMIO run again'
# iorsweep --iterations: IOR runs warm-up plus timed iterations (-i)
if "$here/sfio-bench" iorsweep --dry-run --ior /bin/true --np 2 --transfers 4k --segments 1 \
        --modes indep --storage-modes off --stacks suite --reps 1 --warmup 1 --iterations 3 \
        --bench "$bench" > "$dir/out" 2>&1 &&
   grep -q ' -i 4 -t 4k -b 16k -s 1 ' "$dir/out"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL: iorsweep --iterations"; tail -5 "$dir/out" | sed 's/^/    /'
fi
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
