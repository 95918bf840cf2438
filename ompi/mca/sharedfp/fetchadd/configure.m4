# -*- shell-script -*-
# sharedfp/fetchadd inside an Open MPI source tree: needs mmap and C11
# atomics (shm backend) and MPI one-sided (rma backend, always present).
# MCA_ompi_sharedfp_fetchadd_CONFIG([action-if-can-compile], [action-if-cant])
AC_DEFUN([MCA_ompi_sharedfp_fetchadd_CONFIG],[
    AC_CONFIG_FILES([ompi/mca/sharedfp/fetchadd/Makefile])
    AC_CHECK_HEADERS([sys/mman.h stdatomic.h], [$1], [$2])
])
