# -*- shell-script -*-
# fs/versioned inside an Open MPI source tree: needs POSIX I/O and the
# engine (common/sfio, configured before it).
# MCA_ompi_fs_versioned_CONFIG([action-if-can-compile], [action-if-cant])
AC_DEFUN([MCA_ompi_fs_versioned_CONFIG],[
    AC_CONFIG_FILES([ompi/mca/fs/versioned/Makefile])
    fs_versioned_happy=$ompi_common_sfio_happy
    AC_CHECK_HEADERS([sys/uio.h], [], [fs_versioned_happy=no])
    AS_IF([test "$fs_versioned_happy" = yes], [$1], [$2])
])
