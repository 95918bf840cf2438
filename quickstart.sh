#!/bin/sh
# quickstart.sh: one-command set-up of the ompio-sfio suite on Debian.
#   ./quickstart.sh demo   install dependencies, build, install the components
#                          for this user (~/.openmpi/components), run the demo
#   ./quickstart.sh test   the same set-up, then the whole test suite
# Works on Debian bookworm (Open MPI 4.1) and trixie (Open MPI 5.0).
# Environment: SFIO_BUILD_DIR (default ./build), SFIO_PREFIX (default
# ~/.openmpi), SFIO_NP (demo ranks, 4), SFIO_SKIP_APT=1 to skip the apt step.
set -eu

cmd=${1:-demo}
src=$(cd "$(dirname "$0")" && pwd)
build=${SFIO_BUILD_DIR:-$src/build}
prefix=${SFIO_PREFIX:-$HOME/.openmpi}

# Packages the suite needs on Debian bookworm and trixie (.ci/trixie.sh
# installs the same list into its root).
packages="build-essential autoconf automake libtool pkg-config libopenmpi-dev openmpi-bin
          check libhwloc-dev libpmix-dev libfabric-dev valgrind python3 python3-matplotlib
          libhdf5-openmpi-dev libfuse3-dev fuse3"

say() { printf '== %s\n' "$*"; }

install_deps() {
    [ "${SFIO_SKIP_APT:-0}" = 1 ] && return 0
    as_root=""
    [ "$(id -u)" = 0 ] || as_root=sudo
    say "installing Debian packages"
    $as_root apt-get update -q
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -q --no-install-recommends $packages
}

build_and_install() {
    say "building in $build"
    (cd "$src" && autoreconf -fi >/dev/null 2>&1) || (cd "$src" && autoreconf -fi)
    mkdir -p "$build"
    cd "$build"
    "$src/configure" --prefix="$prefix" --with-component-dir="$prefix/components" -q
    make -s -j"$(nproc)"
    say "installing components into $prefix/components"
    make -s install
}

# mpirun as root needs these; oversubscription lets 8 ranks run on 2 cores
# (Open MPI 4.1's ORTE reads the OMPI_MCA_ variable, 5.0's PRRTE the PRTE_MCA_ one).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export PRTE_MCA_rmaps_default_mapping_policy=${PRTE_MCA_rmaps_default_mapping_policy:-:oversubscribe}

# Open MPI 5.0's ranks share OMPI_MCA_mca_base_component_path with PMIx
# (Debian trixie's mpirun sets it to PMIx's plugin directory). When it
# names the suite's components, PMIx scans them too and prints "bad prefix"
# lines; giving PMIx its own path keeps both quiet. Harmless on 4.1.
pmix_env() {
    local d
    d=$(pkg-config --variable=libdir pmix 2>/dev/null)/pmix
    if [ -d "$d" ] && [ -z "${PMIX_MCA_mca_base_component_path:-}" ]; then
        export PMIX_MCA_mca_base_component_path=$d
    fi
}

case "$cmd" in
demo)
    install_deps
    build_and_install
    pmix_env
    # Name the component directory explicitly: Debian trixie's mpirun (Open
    # MPI 5.0, PRRTE) hands its ranks OMPI_MCA_mca_base_component_path=
    # <pmix plugin dir> unless the user sets it, so ranks never look in
    # ~/.openmpi/components by themselves there (ompi_info does).
    ompi_dir=$(ompi_info --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p')
    export OMPI_MCA_mca_base_component_path="$prefix/components${ompi_dir:+:$ompi_dir}"
    say "demo: $prefix/bin/sfio-demo on ${SFIO_NP:-4} ranks (components from $OMPI_MCA_mca_base_component_path)"
    mpirun -np "${SFIO_NP:-4}" "$prefix/bin/sfio-demo"
    ;;
test)
    install_deps
    build_and_install
    pmix_env
    say "running the test suite (make check)"
    make -s check
    ;;
*)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
