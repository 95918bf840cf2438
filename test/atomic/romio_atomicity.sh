#!/bin/bash
# romio_atomicity.sh: ROMIO's own atomicity test (romio/test/atomicity.c of
# the installed Open MPI's source) N times per rank count on a stack.
# Not part of test/atomic's make check: it needs the Open MPI source.
# None of that source is kept here.  The source: --src DIR, else
# $SFIO_OMPI_SRC, else the autogen'd tree of tools/build-ompi-with-suite.sh
# for this mpirun's version (${SFIO_OMPI_WORK:-/var/cache/sfio/ompi-intree}/
# VERSION-tree), else apt-get source (with the system's deb-src lines, or
# deb-src lines made from its deb lines); none: exit 77.
#
#   romio_atomicity.sh [--src DIR] [--runs N] [--np "2 4 8"] [-- MCA ARGS...]
#   default MCA args: --mca io ompio --mca fs versioned --mca fbtl versioned
#
# SFIO_MPIRUN: the launcher, taking -np (default "mpirun --allow-run-as-root
# --oversubscribe --bind-to none"; e.g. "test/nodes/mpirun-nodes.sh --nodes
# N", as test/nodes/run_nodes_tests.sh runs it).  Prints one line per rank
# count, "romio atomicity np=P MCA...: K/N".
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
[ -z "$src" ] && src=${SFIO_OMPI_SRC:-}
if [ -z "$src" ]; then
    v=$(mpirun --version 2>/dev/null | sed -n '1s/.*) \([0-9][0-9.]*\).*/\1/p')
    t=${SFIO_OMPI_WORK:-/var/cache/sfio/ompi-intree}/$v-tree
    [ -n "$v" ] && [ -n "$(find "$t" -path '*romio*/test/atomicity.c' 2>/dev/null | head -1)" ] && src=$t
fi
# apt-get source where the system lists no deb-src: a private list of
# deb-src lines made from the system's deb lines (one-line and deb822
# files), used by this download only; the system's apt setup is untouched
private_source() {
    local d=$work/apt
    mkdir -p "$d/lists/partial" || return 1
    {
        sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
        cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk 'BEGIN { RS = ""; FS = "\n" } {
            t = u = s = c = ""
            for (i = 1; i <= NF; i++) {
                if ($i ~ /^Types:/) t = $i; if ($i ~ /^URIs:/) u = $i
                if ($i ~ /^Suites:/) s = $i; if ($i ~ /^Components:/) c = $i
            }
            if (t !~ /deb/ || u == "") next
            sub(/^URIs: */, "", u); sub(/^Suites: */, "", s); sub(/^Components: */, "", c)
            n = split(s, S, " ")
            for (k = 1; k <= n; k++) print "deb-src " u " " S[k] " " c
        }'
    } > "$d/sources.list"
    local o=(-o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts=/nonexistent
             -o Dir::State::Lists="$d/lists")
    apt-get "${o[@]}" update -q >/dev/null 2>&1 &&
        (cd "$work" && apt-get "${o[@]}" source -q --download-only openmpi >/dev/null 2>&1)
}
if [ -z "$src" ]; then
    (cd "$work" && { apt-get source -q --download-only openmpi >/dev/null 2>&1 || private_source; } &&
     tar -xf openmpi_*.orig.tar.* --wildcards '*/romio*/test/atomicity.c') ||
        { echo "romio_atomicity: no Open MPI source (add a deb-src line or pass --src)"; exit 77; }
    src=$(ls -d "$work"/openmpi-*)
fi
test_c=$(find "$src" -path '*romio*/test/atomicity.c' | head -1)
[ -n "$test_c" ] || { echo "romio_atomicity: atomicity.c not found under $src"; exit 77; }
mpicc -O2 -o "$work/atomicity" "$test_c" || exit 1
. "$(dirname "$0")/../sfio_component_path.sh"
sfio_use_build_components
mpirun_cmd="${SFIO_MPIRUN:-mpirun --allow-run-as-root --oversubscribe --bind-to none}"
fails=0
for np in $nps; do
    ok=0
    for i in $(seq 1 "$runs"); do
        timeout 120 $mpirun_cmd -np "$np" "${mca[@]}" \
            "$work/atomicity" -fname "$work/f" 2>&1 | grep -q "No Errors" && ok=$((ok + 1))
    done
    echo "romio atomicity np=$np ${mca[*]}: $ok/$runs"
    [ "$ok" = "$runs" ] || fails=$((fails + 1))
done
[ $fails = 0 ]
