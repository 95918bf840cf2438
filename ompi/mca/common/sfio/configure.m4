# -*- shell-script -*-
# common/sfio, the suite's engine, inside an Open MPI source tree.
#
# Compile mode: the engine follows the suite's components.  When any of
# fs/versioned, fbtl/versioned, fcoll/adaptive or sharedfp/fetchadd is
# built static (into libmpi), the engine must be static too: a DSO
# engine would make libmpi depend on a library that depends on libmpi.
# Otherwise it is a DSO (libmca_common_sfio.so in libdir, as
# libmca_common_ompio.so is in Open MPI 4.1).
# MCA_ompi_common_sfio_COMPILE_MODE(project, framework, component, mode-variable)
AC_DEFUN([MCA_ompi_common_sfio_COMPILE_MODE], [
    MCA_COMPONENT_COMPILE_MODE([ompi], [fs], [versioned], [common_sfio_mode_fs])
    MCA_COMPONENT_COMPILE_MODE([ompi], [fbtl], [versioned], [common_sfio_mode_fbtl])
    MCA_COMPONENT_COMPILE_MODE([ompi], [fcoll], [adaptive], [common_sfio_mode_fcoll])
    MCA_COMPONENT_COMPILE_MODE([ompi], [sharedfp], [fetchadd], [common_sfio_mode_sharedfp])
    AS_CASE([" $common_sfio_mode_fs $common_sfio_mode_fbtl $common_sfio_mode_fcoll $common_sfio_mode_sharedfp "],
            [*" static "*], [common_sfio_compile_mode=static],
            [common_sfio_compile_mode=dso])
    AC_MSG_CHECKING([for MCA component $2:$3 compile mode])
    AC_MSG_RESULT([$common_sfio_compile_mode (as the suite's components)])
    # Open MPI 4.1 reads the mode from the variable named $4.  5.0.x
    # passes the temporary component_compile_mode_tmp and then copies the
    # variable whose *name* that holds (AS_VAR_COPY of
    # $component_compile_mode_tmp in MCA_COMPONENT_COMPILE_MODE), so there
    # it must hold a variable name.
    m4_if([$4], [component_compile_mode_tmp],
          [$4=common_sfio_compile_mode],
          [$4=$common_sfio_compile_mode])
])

# MCA_ompi_common_sfio_CONFIG([action-if-can-compile], [action-if-cant])
# The engine needs hwloc's header (sfio_topo.c calls hwloc directly; the
# symbols come from the hwloc that Open MPI links), C11 atomics and
# libfabric's headers.  The
# components build only when the engine does (common is configured
# first: they test ompi_common_sfio_happy).
AC_DEFUN([MCA_ompi_common_sfio_CONFIG],[
    AC_CONFIG_FILES([ompi/mca/common/sfio/Makefile])
    # The suite's Makefile.am files serve both builds; here it is Open MPI's.
    AM_CONDITIONAL([SFIO_OUT_OF_TREE], [false])
    ompi_common_sfio_happy=yes
    AC_CHECK_HEADERS([hwloc.h stdatomic.h], [], [ompi_common_sfio_happy=no])
    # libfabric's headers: the coordination service across nodes
    # (sfio_fabric.c loads the library itself when a file spans nodes)
    AC_CHECK_HEADERS([rdma/fabric.h], [], [ompi_common_sfio_happy=no])
    AS_IF([test "$ompi_common_sfio_happy" = yes], [$1], [$2])
])
