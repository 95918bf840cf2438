# -*- shell-script -*-
# fbtl/versioned inside an Open MPI source tree: needs POSIX I/O and the
# engine (common/sfio, configured before it).
# MCA_ompi_fbtl_versioned_CONFIG([action-if-can-compile], [action-if-cant])
AC_DEFUN([MCA_ompi_fbtl_versioned_CONFIG],[
    AC_CONFIG_FILES([ompi/mca/fbtl/versioned/Makefile])
    fbtl_versioned_happy=$ompi_common_sfio_happy
    AC_CHECK_HEADERS([sys/uio.h], [], [fbtl_versioned_happy=no])
    AS_IF([test "$fbtl_versioned_happy" = yes], [$1], [$2])
])
