# sfio_component_path.sh: sourced by the test and bench scripts.
# When SFIO_COMPONENT_PATH is set (the build tree's components/), Open MPI
# loads components from "$SFIO_COMPONENT_PATH:<its own pkglibdir>", so the
# freshly built suite wins over any installed copy (~/.openmpi/components
# is not searched).  Otherwise the environment is used as is.
sfio_use_build_components() {
    [ -n "${SFIO_COMPONENT_PATH:-}" ] || return 0
    local pkglibdir
    pkglibdir=$(env -u OMPI_MCA_mca_base_component_path ompi_info --path pkglibdir --parsable 2>/dev/null |
                sed -n 's/^path:pkglibdir://p')
    export OMPI_MCA_mca_base_component_path="$SFIO_COMPONENT_PATH${pkglibdir:+:$pkglibdir}"
}
