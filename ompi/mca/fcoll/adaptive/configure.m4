# -*- shell-script -*-
# fcoll/adaptive inside an Open MPI source tree: needs the engine
# (common/sfio, configured before it) and MPI only.
# MCA_ompi_fcoll_adaptive_CONFIG([action-if-can-compile], [action-if-cant])
AC_DEFUN([MCA_ompi_fcoll_adaptive_CONFIG],[
    AC_CONFIG_FILES([ompi/mca/fcoll/adaptive/Makefile])
    fcoll_adaptive_happy=$ompi_common_sfio_happy
    AC_CHECK_HEADERS([sys/uio.h], [], [fcoll_adaptive_happy=no])
    AS_IF([test "$fcoll_adaptive_happy" = yes], [$1], [$2])
])
