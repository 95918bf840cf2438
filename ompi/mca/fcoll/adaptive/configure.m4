# -*- shell-script -*-
# fcoll/adaptive inside an Open MPI source tree: needs the engine and MPI only.
# MCA_ompi_fcoll_adaptive_CONFIG([action-if-can-compile], [action-if-cant])
AC_DEFUN([MCA_ompi_fcoll_adaptive_CONFIG],[
    AC_CONFIG_FILES([ompi/mca/fcoll/adaptive/Makefile])
    AC_CHECK_HEADERS([sys/uio.h], [$1], [$2])
])
