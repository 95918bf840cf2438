# -*- shell-script -*-
# fbtl/versioned inside an Open MPI source tree: needs only POSIX I/O.
# MCA_ompi_fbtl_versioned_CONFIG([action-if-can-compile], [action-if-cant])
AC_DEFUN([MCA_ompi_fbtl_versioned_CONFIG],[
    AC_CONFIG_FILES([ompi/mca/fbtl/versioned/Makefile])
    AC_CHECK_HEADERS([sys/uio.h], [$1], [$2])
])
