#!/bin/bash
# tools/build-ompi-with-suite.sh: build one Open MPI with the suite's
# components in it ("building Open MPI with the components", the way a
# site or a packager uses the suite).
#
# Takes the Open MPI source of the installed series (apt-get source
# openmpi: 4.1.x on Debian bookworm, 5.0.x on trixie) or a 4.1.x/5.0.x
# tarball or directory, copies ompi/mca/{common/sfio,fs/versioned,
# fbtl/versioned,fcoll/adaptive,sharedfp/fetchadd} of this checkout into
# it, runs Open MPI's autogen.pl, configures, builds and installs into a
# prefix.  The suite's components are then plain Open MPI components:
# ompi_info lists them, no component path is set, and with --static they
# are linked into libmpi (the engine with them).
#
# Usage: tools/build-ompi-with-suite.sh [--static] [--source TARBALL|DIR]
#                                       [--prefix DIR] [--work DIR] [--print-prefix]
#   --static        the suite's components (and so the engine) static in libmpi
#                   (--enable-mca-static=fs-versioned,fbtl-versioned,
#                   fcoll-adaptive,sharedfp-fetchadd); default: DSOs, the
#                   engine as libmca_common_sfio.so in the prefix's libdir
#   --source S      Open MPI source (default: apt-get source openmpi of this
#                   Debian release, with a private apt state: no change to
#                   the system's apt sources)
#   --prefix P      install prefix (default WORK/<version>-<shared|static>/prefix,
#                   emptied for a fresh build; any other prefix is installed over)
#   --work W        cache directory (default $SFIO_OMPI_WORK or
#                   /var/cache/sfio/ompi-intree): sources, ccache, builds
#   --print-prefix  only print the prefix the options above select
#
# Caching (WORK/<version>-tree, the autogen'd source; WORK/<version>-<mode>,
# the build): a build is reused when its key matches: the Open MPI
# source's checksum, the configure line, the suite's build files
# (configure.m4, Makefile.am) and the recipe below.  Then only the suite's
# changed sources are copied in and "make install" recompiles those.  Any
# other change starts from a fresh tree or build and prefix; ccache (masquerading
# as gcc through /usr/lib/ccache, so the wrapper compilers record plain
# gcc) makes that cheap for everything Open MPI compiled before, and lets
# the static build reuse the shared build's objects.
#
# Needs: build-essential autoconf automake libtool flex perl pkg-config
# ccache dpkg-dev (apt-get source) libhwloc-dev libevent-dev libpmix-dev,
# and on 5.0 Debian's PRRTE (openmpi-bin, libopenmpi-dev).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mode=shared
source_arg=
prefix=
work=${SFIO_OMPI_WORK:-/var/cache/sfio/ompi-intree}
print_prefix=0
jobs=$(nproc)

while [ $# -gt 0 ]; do
    case "$1" in
    --static) mode=static; shift ;;
    --source) source_arg=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --print-prefix) print_prefix=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-ompi-with-suite: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

say() { printf '== %s\n' "$*"; }
die() { printf 'build-ompi-with-suite: %s\n' "$*" >&2; exit 1; }

# Bump when the way Open MPI is built here changes other than by the
# configure line (part of the cache keys).
recipe=2
suite_dirs="ompi/mca/common/sfio ompi/mca/fs/versioned ompi/mca/fbtl/versioned
            ompi/mca/fcoll/adaptive ompi/mca/sharedfp/fetchadd"
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

# ---------------------------------------------------------------- source --
# fetch_debian_source: the openmpi source package of this Debian release,
# through a private apt state under $work/apt (deb-src of the release's
# main archive only).  Prints the path of the upstream (orig) tarball.
fetch_debian_source() {
    local codename mirror apt d
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release: pass --source"
    mirror=${SFIO_DEBIAN_MIRROR:-http://deb.debian.org/debian}
    d=$work/src/$codename
    apt=$d/apt
    mkdir -p "$apt/lists/partial"
    echo "deb-src $mirror $codename main" > "$apt/sources.list"
    local opts=(-q -o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
                -o "Dir::State::Lists=$apt/lists" -o APT::Sandbox::User=root)
    if ! ls "$d"/openmpi_*.orig.tar.* >/dev/null 2>&1; then
        apt-get "${opts[@]}" update >&2
        (cd "$d" && apt-get "${opts[@]}" source --download-only openmpi >&2)
    fi
    ls "$d"/openmpi_*.orig.tar.* | head -1
}

# An Open MPI tarball or directory, its checksum and version.
if [ -z "$source_arg" ]; then
    source_arg=$(fetch_debian_source)
fi
[ -e "$source_arg" ] || die "no such source: $source_arg"
source_arg=$(cd "$(dirname "$source_arg")" && pwd)/$(basename "$source_arg")
if [ -d "$source_arg" ]; then
    src_sum=$(cd "$source_arg" && find . -type f ! -path './.git/*' -print0 | sort -z |
              xargs -0 sha256sum | sha256sum | cut -c1-16)
    version_file=$source_arg/VERSION
    version_text=$(cat "$version_file")
else
    src_sum=$(sha256sum "$source_arg" | cut -c1-16)
    version_text=$(tar -xOf "$source_arg" --wildcards '*/VERSION' 2>/dev/null)
fi
get_version() { printf '%s\n' "$version_text" | sed -n "s/^$1=//p" | head -1; }
major=$(get_version major); minor=$(get_version minor); release=$(get_version release)
version=$major.$minor.$release
case "$major.$minor" in
4.1|5.0) ;;
*) die "Open MPI $version is not supported (4.1.x and 5.0.x are)" ;;
esac

dir=$work/$version-$mode
[ -n "$prefix" ] || prefix=$dir/prefix
if [ "$print_prefix" = 1 ]; then echo "$prefix"; exit 0; fi

# -------------------------------------------------------------- configure --
# What the suite does not need is left out, to keep the build short:
#  - Fortran, C++ bindings, Java, OpenSHMEM: the suite and its tests are C.
#  - ROMIO: the suite's components are OMPIO's (io/ompio); ROMIO is the
#    largest component to compile and the tests select io/ompio anyway.
#  - networks (verbs, usnic, libfabric btl/mtl, UCX, hcoll, ...): the tests
#    run on one node over btl self + vader/sm; btl/tcp stays (small).
#  - treematch (topo): a sizeable embedded library nothing here uses.
# hwloc, libevent and PMIx (and for 5.0 PRRTE) are the system's, as in
# Debian's own Open MPI, rather than the embedded copies.
# PMIx: 4.1 takes its directory (Debian: .../pmix2); 5.0 finds it through
# pkg-config with "external" (its headers need both of pmix.pc's -I).
pmix_dir=$(pkg-config --variable=prefix pmix 2>/dev/null) || die "PMIx not found: apt-get install libpmix-dev"
[ "$major" = 5 ] && pmix_dir=external
no_build=btl-openib,btl-usnic,btl-ofi,btl-uct,mtl,pml-ucx,osc-ucx,spml,common-ofi,common-ucx
no_build=$no_build,common-verbs,common-verbs_usnic,coll-hcoll,coll-fca,coll-ucc,topo-treematch
no_build=$no_build,vprotocol,io-romio321,io-romio341
config=(--prefix="$prefix"
        --with-hwloc=external --with-libevent=external --with-pmix="$pmix_dir"
        --disable-mpi-fortran --disable-oshmem --disable-mpi-java --disable-io-romio
        --without-ucx --without-cuda --without-verbs --without-ofi
        --enable-mca-no-build="$no_build")
case "$major.$minor" in
4.1)
    config+=(--disable-mpi-cxx) ;;
5.0)
    # Debian installs PRRTE with its Open MPI: headers in Open MPI's
    # include directory, prterun in /usr/bin.
    prrte_dir=
    for d in "$(pkg-config --variable=prefix prrte 2>/dev/null || true)" \
             /usr/lib/"$multiarch"/openmpi /usr; do
        if [ -n "$d" ] && [ -f "$d/include/prte.h" ]; then prrte_dir=$d; break; fi
    done
    [ -n "$prrte_dir" ] || die "PRRTE headers (prte.h) not found: apt-get install libopenmpi-dev"
    prrte_bin=$(dirname "$(command -v prterun || echo "$prrte_dir/bin/prterun")")
    config+=(--with-prrte="$prrte_dir" --with-prrte-bindir="$prrte_bin" --disable-sphinx)
    ;;
esac
if [ "$mode" = static ]; then
    static=fs-versioned,fbtl-versioned,fcoll-adaptive,sharedfp-fetchadd
    # 4.1 builds OMPIO's common code as a DSO (libmca_common_ompio) that
    # the suite calls: linked into libmpi, the suite would need a library
    # that needs libmpi (ld: undefined mca_common_ompio_*).  So OMPIO
    # goes static with it: common/ompio and its frameworks, so that no
    # DSO links a copy of the static common/ompio (5.0 has all static).
    [ "$major" = 4 ] && static=$static,common-ompio,io,fs,fbtl,fcoll,sharedfp
    config+=(--enable-mca-static="$static")
else
    # 5.0 builds components into libmpi by default; ask for DSOs (4.1's default).
    config+=(--enable-mca-dso=fs-versioned,fbtl-versioned,fcoll-adaptive,sharedfp-fetchadd)
fi

suite_build_sum=$(cd "$here" && for d in $suite_dirs; do ls "$d"/configure.m4 "$d"/Makefile.am 2>/dev/null; done |
                  xargs cat | sha256sum | cut -c1-16)
# The autogen'd tree serves the shared and the static build; its key
# leaves out the configure line.
tree=$work/$version-tree
tree_key="recipe=$recipe source=$src_sum suite-build=$suite_build_sum"
key="$tree_key configure=${config[*]}"

# ------------------------------------------------------------------ build --
export CCACHE_DIR=${CCACHE_DIR:-$work/ccache}
export CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=1
[ -d /usr/lib/ccache ] && export PATH=/usr/lib/ccache:$PATH || say "ccache not installed: building without it"

# copy_suite TREE: the suite's directories into an Open MPI tree: sources,
# build files and help texts only (never an out-of-tree build's generated
# Makefile.in); files that did not change keep their time stamps, so make
# rebuilds only the rest.
copy_suite() {
    local tree=$1 d f
    for d in $suite_dirs; do
        mkdir -p "$tree/$d"
        (cd "$here" && find "$d" -maxdepth 1 -type f \( -name '*.[ch]' -o -name Makefile.am \
                                                   -o -name configure.m4 -o -name '*.txt' \)) |
        while read -r f; do
            cmp -s "$here/$f" "$tree/$f" || cp -p "$here/$f" "$tree/$f"
        done
    done
}

t0=$(date +%s)
mkdir -p "$work"
# One build at a time per cache (the tree is shared between the modes).
exec 9>"$work/.lock"
flock 9
if [ -f "$tree/.sfio-key" ] && [ "$(cat "$tree/.sfio-key")" = "$tree_key" ]; then
    copy_suite "$tree"
else
    say "Open MPI $version source tree from $source_arg, with the suite"
    rm -rf "$tree" "$dir/key"
    mkdir -p "$tree"
    if [ -d "$source_arg" ]; then
        (cd "$source_arg" && tar --exclude=./.git -cf - .) | tar -xf - -C "$tree"
    else
        tar -xf "$source_arg" -C "$tree" --strip-components=1
    fi
    copy_suite "$tree"
    say "autogen.pl"
    # autogen.pl runs autoreconf in each embedded package too; the ones
    # the configure line replaces (PMIx, libevent) or leaves out (ROMIO)
    # are skipped, which shortens autogen by minutes.  (4.1's --exclude
    # honours one component per framework.)
    autogen=(--force)
    [ "$major" = 4 ] && autogen+=(--no-oshmem --exclude=pmix-pmix3x,event-libevent2022,io-romio321)
    [ "$major" = 5 ] && autogen+=(--no-3rdparty=openpmix,prrte,romio341)
    (cd "$tree" && ./autogen.pl "${autogen[@]}") >"$work/$version-autogen.log" 2>&1 ||
        { tail -40 "$work/$version-autogen.log"; die "autogen.pl failed (log: $work/$version-autogen.log)"; }
    echo "$tree_key" > "$tree/.sfio-key"
fi
t1=$(date +%s)
if [ -f "$dir/key" ] && [ "$(cat "$dir/key")" = "$key" ] && [ -x "$prefix/bin/ompi_info" ]; then
    say "Open MPI $version ($mode) from cache in $dir: suite sources only"
    make -C "$dir/build" -s -j"$jobs" install >"$dir/make.log" 2>&1 || { tail -40 "$dir/make.log"; exit 1; }
else
    say "Open MPI $version ($mode) into $prefix"
    rm -rf "$dir" && mkdir -p "$dir/build"
    say "configure ${config[*]}"
    (cd "$dir/build" && "$tree/configure" "${config[@]}") >"$dir/configure.log" 2>&1 ||
        { tail -40 "$dir/configure.log"; die "configure failed (log: $dir/configure.log)"; }
    t2=$(date +%s)
    say "make install (-j$jobs)"
    make -C "$dir/build" -s -j"$jobs" install >"$dir/make.log" 2>&1 ||
        { grep -B5 -A10 -m3 -E 'error|Error' "$dir/make.log" | tail -60; die "make failed (log: $dir/make.log)"; }
    say "times: autogen $(( t1 - t0 )) s, configure $(( t2 - t1 )) s, make install $(( $(date +%s) - t2 )) s"
    echo "$key" > "$dir/key"
fi
flock -u 9
say "Open MPI $version ($mode) with the suite in $prefix ($(( $(date +%s) - t0 )) s)"
