# sfio_tap.sh: sourced by the scripts that run several TAP runners as one
# stream for automake's tap-driver (test/mpi/mpi_check.sh,
# test/nodes/run_nodes_tests.sh).  They need `shopt -s lastpipe` so that
# sfio_tap_emit, the last command of a pipeline, counts in their shell.

sfio_tap_tests=0    # results passed through
sfio_tap_failed=0   # of them "not ok"

# sfio_tap_emit: reads a runner's output; result lines pass through and
# are counted, its plan is dropped (the caller prints one plan at the
# end), anything else becomes a TAP comment.
sfio_tap_emit() {
    local line
    while IFS= read -r line; do
        [[ $line =~ ^1\.\.[0-9]+ ]] && continue
        case "$line" in
        "ok "*) sfio_tap_tests=$((sfio_tap_tests + 1)); echo "$line" ;;
        "not ok "*) sfio_tap_tests=$((sfio_tap_tests + 1))
                    sfio_tap_failed=$((sfio_tap_failed + 1)); echo "$line" ;;
        *) echo "# $line" ;;
        esac
    done
}

# sfio_tap_result OK DESCRIPTION: one result of the caller's own.
sfio_tap_result() {
    sfio_tap_tests=$((sfio_tap_tests + 1))
    if [ "$1" = 0 ]; then echo "ok - $2"
    else sfio_tap_failed=$((sfio_tap_failed + 1)); echo "not ok - $2"
    fi
}
