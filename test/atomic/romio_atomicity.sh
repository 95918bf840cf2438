#!/bin/bash
# romio_atomicity.sh: ROMIO's own atomicity test (romio/test/atomicity.c of
# the installed Open MPI's source) N times per rank count on a stack.
# Not part of make check: it needs the Open MPI source (apt-get source,
# which needs a deb-src line).  None of that source is kept here.
#
#   romio_atomicity.sh [--src DIR] [--runs N] [--np "2 4 8"] [-- MCA ARGS...]
#   default MCA args: --mca io ompio --mca fs versioned --mca fbtl versioned
set -u
src= runs=20 nps="2 4 8"
while [ $# -gt 0 ]; do
    case $1 in
        --src) src=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --np) nps=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "usage: $0 [--src DIR] [--runs N] [--np LIST] [-- MCA ARGS]"; exit 2 ;;
    esac
done
mca=("$@")
[ ${#mca[@]} = 0 ] && mca=(--mca io ompio --mca fs versioned --mca fbtl versioned)
work=$(mktemp -d /tmp/romio-atomicity.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -z "$src" ]; then
    (cd "$work" && apt-get source -q --download-only openmpi >/dev/null 2>&1 &&
     tar -xf openmpi_*.orig.tar.* --wildcards '*/romio*/test/atomicity.c') ||
        { echo "romio_atomicity: no Open MPI source (add a deb-src line or pass --src)"; exit 77; }
    src=$(ls -d "$work"/openmpi-*)
fi
test_c=$(find "$src" -path '*romio*/test/atomicity.c' | head -1)
[ -n "$test_c" ] || { echo "romio_atomicity: atomicity.c not found under $src"; exit 77; }
mpicc -O2 -o "$work/atomicity" "$test_c" || exit 1
. "$(dirname "$0")/../sfio_component_path.sh"
sfio_use_build_components
fails=0
for np in $nps; do
    ok=0
    for i in $(seq 1 "$runs"); do
        timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" "${mca[@]}" \
            "$work/atomicity" -fname "$work/f" 2>&1 | grep -q "No Errors" && ok=$((ok + 1))
    done
    echo "romio atomicity np=$np ${mca[*]}: $ok/$runs"
    [ "$ok" = "$runs" ] || fails=$((fails + 1))
done
[ $fails = 0 ]
