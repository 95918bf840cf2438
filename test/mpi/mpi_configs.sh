# mpi_configs.sh: the one place that says which MPI test runs exist.
# Sourced by run_mpi_tests.sh (what a configuration passes to mpirun, the
# default lists), by mpi_check.sh (the runs of `make check`) and by
# test/nodes/run_nodes_tests.sh (the cross-node selection).
#
# A configuration is a name; config_mca NAME prints the mpirun arguments
# it adds (uses $nodes and $faultio of the caller); the lists below name
# configurations, never their arguments.

# ---- named lists ----------------------------------------------------

SFIO_DEFAULT_CONFIGS="default smallbuf"
SFIO_SUITE_EXTRA_CONFIGS="fetchadd_rma fetchadd_ofi fetchadd_ofi_message depth8-versioned"   # suite stack only
SFIO_QUICK_CONFIGS="default"
SFIO_DEFAULT_NPS="1 2 4 8"
SFIO_QUICK_NPS="1 4"
SFIO_DEFAULT_PROGRAMS="t_views t_calls t_nonblocking t_nbcoll t_shared t_amode"
SFIO_SUITE_EXTRA_PROGRAMS="t_fetchadd t_pcache t_engine"    # suite stack only

# fcoll/adaptive: every algorithm forced (and auto), over stock fs/fbtl so
# that the component itself is under test (the suite stack's default
# configuration runs it behind the suite's proxies).
SFIO_ADAPTIVE_CONFIGS="adaptive_auto adaptive_individual adaptive_two_phase
    adaptive_dynamic adaptive_static adaptive-smallbuf_two_phase
    adaptive-smallbuf_dynamic adaptive-smallbuf_static adaptive-n3_two_phase
    adaptive-n3_dynamic adaptive-n3_static adaptive-async_two_phase adaptive-async_dynamic
    adaptive-async_static adaptive-asyncq_two_phase adaptive-asyncq_dynamic adaptive-asyncq_static"
SFIO_ADAPTIVE_PROGS="t_views t_calls t_nonblocking t_coll_unequal"

# Failing storage: t_fault under the faultio preload, every algorithm, with
# synchronous and queued (POSIX AIO) cycle I/O.
SFIO_FAULT_CONFIGS="fault_auto fault_individual fault_two_phase fault_dynamic fault_static
    fault-async_two_phase fault-async_dynamic fault-async_static"
SFIO_FAULT_SUITE_CONFIGS="fault_two_phase fault-async_static"

# fcoll/adaptive placement: 2 emulated nodes (block and cyclic rank
# mapping), 3 aggregators; besides exact bytes, each run's verbose lines
# must show aggregators on both nodes (run_mpi_tests.sh check_placement).
SFIO_PLACE_CONFIGS="place-block2_two_phase place-block2_dynamic place-block2_static
    place-cyclic2_two_phase place-cyclic2_dynamic place-cyclic2_static"
# The same over real (emulated-namespace) nodes, test/nodes only.
SFIO_NODES_PLACE_CONFIGS="nodes-block_two_phase nodes-block_dynamic nodes-block_static
    nodes-cyclic_two_phase nodes-cyclic_dynamic nodes-cyclic_static"

SFIO_ATOMIC_CONFIGS="atomic-listlock atomic-listlock-cache4k atomic-rangelock atomic-versioned atomic-versioned-mem"
SFIO_ATOMIC_UFS_CONFIGS="atomic-listlock atomic-listlock-cache4k"

# ---- the runs of `make check` (mpi_check.sh) -------------------------
#
# One line per step: label | when | stack | programs | np | configs | flags
#   when     always; suite: only with SFIO_MPI_STACK=suite; engine: the
#            programs built from the engine's sources exist; fetchadd: suite
#            and mca_sharedfp_fetchadd.so built; crash: crash_sharedfp.sh
#            (kill -9 a job, the next one must not hang or fail)
#   -        the runner's default for that stack
#   flags    user: SFIO_MPI_TEST_FLAGS apply (make check SFIO_MPI_TEST_FLAGS=...)
#            $VAR names a list above.
sfio_mpi_check_steps() {
    cat <<'STEPS'
stack|always|$SFIO_MPI_STACK|-|-|-|user
coord|engine|suite|t_coord|1 2 4|default|
fetchadd-crash|crash|suite|t_fetchadd|-|-|
fetchadd-baddir|fetchadd|suite|t_shared t_fetchadd|2 4|fetchadd_baddir|
atomic|suite|suite|t_views t_calls t_nonblocking t_pcache t_nbcoll|1 3 4|$SFIO_ATOMIC_CONFIGS|
atomic-fbtl-ufs|suite|fbtl-ufs|t_views t_pcache|1 3 4|$SFIO_ATOMIC_UFS_CONFIGS|
adaptive|suite|adaptive|$SFIO_ADAPTIVE_PROGS|3 8|$SFIO_ADAPTIVE_CONFIGS|user
place|suite|adaptive|t_coll_unequal|4 5 6 7 8|$SFIO_PLACE_CONFIGS|
place-views|suite|adaptive|t_views|5|place-block2_two_phase place-cyclic2_static|
nbcoll|suite|adaptive|t_nbcoll|3|$SFIO_ADAPTIVE_CONFIGS|
fault|suite|adaptive|t_fault|1 3 4|$SFIO_FAULT_CONFIGS|
fault-suite|suite|suite|t_fault|1 3 4|$SFIO_FAULT_SUITE_CONFIGS|
control|suite|stock|-|-|-|user
STEPS
}

# ---- what each configuration passes to mpirun --------------------------
#
#   default       no extra parameters
#   atomic-listlock, atomic-listlock-cache4k  atomicity on in every
#                 subtest, list locking (the second with a 4 KiB
#                 private-byte cache)
#   atomic-rangelock  atomicity on in every subtest, one range
#                 lock per access (what auto takes on one node's
#                 local storage), writes sieved under it
#   atomic-versioned  atomicity on in every subtest, atomic
#                 mode forced to versioned
#   atomic-versioned-mem  the same with the store in memory
#                 (fs_versioned_store_dir /dev/shm): atomic
#                 private pieces are deferred to the log and
#                 folds write windows with holes
#   depth8-versioned  fbtl_versioned_io_depth 8 and
#                 io_depth_min_pieces 2 (accesses of many
#                 pieces issued by several threads), atomic
#                 mode forced to versioned
#   smallbuf      io_ompio_cycle_buffer_size 4096 and
#                 io_ompio_bytes_per_agg 8192: multi-cycle
#                 independent and collective paths
#   fcoll_<name>  force --mca fcoll <name> (e.g. fcoll_two_phase;
#                 skipped when this Open MPI lacks it: 5.0
#                 has no two_phase)
#   adaptive_<alg>  fcoll adaptive with fcoll_adaptive_algorithm <alg>
#                 and fcoll_adaptive_k 2048 (many aggregators)
#                 (auto individual two_phase dynamic static)
#   adaptive-n3_<alg>  3 aggregators forced (groups of
#                 several ranks), 4 KiB cycles
#   adaptive-smallbuf_<alg>  the same with the smallbuf sizes
#                 (many cycles, double buffering exercised)
#   adaptive-async_<alg>  adaptive-smallbuf_<alg> with queued
#                 cycle writes and reads (fcoll_adaptive_async_io 1:
#                 the fbtl's ipwritev / ipreadv, POSIX AIO in stock
#                 fbtl/posix, the worker thread in fbtl/versioned)
#   adaptive-asyncq_<alg>  queued I/O with automatic cycles:
#                 fcoll_adaptive_async_min_cycles shrinks them to
#                 1/8 of the busiest aggregator's bytes (floor
#                 512 B here), so odd cycle sizes
#   place-block2_<alg>, place-cyclic2_<alg>  fcoll adaptive, 3
#                 aggregators forced, on 2 emulated nodes
#                 (fcoll_adaptive_emulate_nodes block:2 or
#                 cyclic:2); the run also fails unless every
#                 call's aggregators (verbose 1) cover both
#                 nodes with counts differing by at most 1
#   fault_<alg>   fcoll adaptive, <alg> forced, under the faultio
#                 preload (file accesses past an offset fail with
#                 EIO); runs only t_fault
#   fault-async_<alg>  the same with queued cycle I/O and 4 KiB
#                 cycles (failed AIO requests)
#   fetchadd_rma  sharedfp/fetchadd with its multi-node backend
#                 (MPI one-sided) forced; runs only the
#                 shared-pointer programs (t_shared t_fetchadd)
#   fetchadd_ofi  sharedfp/fetchadd with the coordination service on
#                 libfabric forced (what several nodes get), also
#                 on one node; shared-pointer programs only
#   fetchadd_ofi_atomic, fetchadd_ofi_message  the same with the
#                 counters forced to libfabric atomics or to messages
#                 (fetchadd_ofi: auto, atomics where they are native)
#   fetchadd_noprov  the ofi backend asked for a provider that does
#                 not exist: fetchadd steps aside (verbose line) and
#                 a stock component serves; run across nodes, where
#                 the runner lists stock components after fetchadd
#   fetchadd_nodirect  sharedfp/fetchadd without its direct path
#   fetchadd_baddir  sharedfp_fetchadd_shm_dir names a missing
#                 directory: a warning, the page in /dev/shm
#   nodes-block_<alg>, nodes-cyclic_<alg>  (run_mpi_tests.sh --nodes N only)
#                 fcoll adaptive, N+1 aggregators forced, ranks in
#                 blocks or round robin over the emulated nodes

config_mca() {
    case "$1" in
    default) echo "" ;;
    smallbuf) echo "--mca io_ompio_cycle_buffer_size 4096 --mca io_ompio_bytes_per_agg 8192" ;;
    fcoll_*) echo "--mca fcoll ${1#fcoll_}" ;;
    adaptive_*) echo "--mca fcoll adaptive --mca fcoll_adaptive_k 2048 --mca fcoll_adaptive_algorithm ${1#adaptive_}" ;;
    adaptive-n3_*) echo "--mca fcoll adaptive --mca fcoll_adaptive_num_aggregators 3 --mca fcoll_adaptive_algorithm ${1#adaptive-n3_} --mca io_ompio_bytes_per_agg 8192" ;;
    adaptive-async_*) echo "--mca fcoll adaptive --mca fcoll_adaptive_k 2048 --mca fcoll_adaptive_async_io 1 --mca fcoll_adaptive_algorithm ${1#adaptive-async_} --mca io_ompio_cycle_buffer_size 4096 --mca io_ompio_bytes_per_agg 8192" ;;
    adaptive-asyncq_*) echo "--mca fcoll adaptive --mca fcoll_adaptive_k 2048 --mca fcoll_adaptive_async_io 1 --mca fcoll_adaptive_async_min_cycle_bytes 512 --mca fcoll_adaptive_algorithm ${1#adaptive-asyncq_}" ;;
    adaptive-smallbuf_*) echo "--mca fcoll adaptive --mca fcoll_adaptive_k 2048 --mca fcoll_adaptive_algorithm ${1#adaptive-smallbuf_} --mca io_ompio_cycle_buffer_size 4096 --mca io_ompio_bytes_per_agg 8192" ;;
    nodes-block_*|nodes-cyclic_*)
        echo "--mca fcoll adaptive --mca fcoll_adaptive_verbose 1 --mca fcoll_adaptive_num_aggregators $((nodes + 1)) --mca fcoll_adaptive_algorithm ${1#nodes-*_}" ;;
    place-block2_*|place-cyclic2_*)
        emu=${1#place-}; emu=${emu%%_*}
        echo "--mca fcoll adaptive --mca fcoll_adaptive_verbose 1 --mca fcoll_adaptive_num_aggregators 3 --mca fcoll_adaptive_emulate_nodes ${emu%2}:2 --mca fcoll_adaptive_algorithm ${1#place-*_}" ;;
    fault_*) echo "--mca fcoll adaptive --mca fcoll_adaptive_k 2048 --mca fcoll_adaptive_algorithm ${1#fault_} -x LD_PRELOAD=$faultio" ;;
    fault-async_*) echo "--mca fcoll adaptive --mca fcoll_adaptive_k 2048 --mca fcoll_adaptive_async_io 1 --mca fcoll_adaptive_algorithm ${1#fault-async_} --mca io_ompio_cycle_buffer_size 4096 --mca io_ompio_bytes_per_agg 8192 -x LD_PRELOAD=$faultio" ;;
    fetchadd_rma) echo "--mca sharedfp_fetchadd_backend rma" ;;
    fetchadd_ofi) echo "--mca sharedfp_fetchadd_backend ofi" ;;
    fetchadd_ofi_atomic) echo "--mca sharedfp_fetchadd_backend ofi --mca sharedfp_fetchadd_counters atomic" ;;
    fetchadd_ofi_message) echo "--mca sharedfp_fetchadd_backend ofi --mca sharedfp_fetchadd_counters message" ;;
    fetchadd_noprov) echo "--mca sharedfp_fetchadd_backend ofi --mca sharedfp_fetchadd_provider sfio-none" ;;
    atomic-listlock) echo "-x SFIO_TEST_ATOMIC=1 -x SFIO_TEST_SKIP=atomicity_flag --mca fbtl_versioned_atomic_mode listlock" ;;
    atomic-listlock-cache4k) echo "-x SFIO_TEST_ATOMIC=1 -x SFIO_TEST_SKIP=atomicity_flag --mca fbtl_versioned_atomic_mode listlock --mca fbtl_versioned_private_cache 4096 --mca fbtl_versioned_private_cache_piece_max 256" ;;
    atomic-rangelock) echo "-x SFIO_TEST_ATOMIC=1 -x SFIO_TEST_SKIP=atomicity_flag --mca fbtl_versioned_atomic_mode rangelock" ;;
    atomic-versioned) echo "-x SFIO_TEST_ATOMIC=1 -x SFIO_TEST_SKIP=atomicity_flag --mca fbtl_versioned_atomic_mode versioned" ;;
    atomic-versioned-mem) echo "-x SFIO_TEST_ATOMIC=1 -x SFIO_TEST_SKIP=atomicity_flag --mca fbtl_versioned_atomic_mode versioned --mca fs_versioned_store_dir /dev/shm" ;;
    depth8-versioned) echo "--mca fbtl_versioned_io_depth 8 --mca fbtl_versioned_io_depth_min_pieces 2 --mca fbtl_versioned_atomic_mode versioned" ;;
    fetchadd_nodirect) echo "--mca sharedfp_fetchadd_direct 0" ;;
    fetchadd_baddir) echo "--mca sharedfp_fetchadd_shm_dir /nonexistent/sfio-shm" ;;
    *) echo "BAD" ;;
    esac
}
