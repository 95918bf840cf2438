# -*- shell-script -*-
# sharedfp/fetchadd inside an Open MPI source tree: needs the engine
# (common/sfio, configured before it), mmap and C11 atomics (shm
# backend) and MPI one-sided (rma backend, always present).
# MCA_ompi_sharedfp_fetchadd_CONFIG([action-if-can-compile], [action-if-cant])
AC_DEFUN([MCA_ompi_sharedfp_fetchadd_CONFIG],[
    AC_CONFIG_FILES([ompi/mca/sharedfp/fetchadd/Makefile])
    sharedfp_fetchadd_happy=$ompi_common_sfio_happy
    AC_CHECK_HEADERS([sys/mman.h stdatomic.h], [], [sharedfp_fetchadd_happy=no])
    AS_IF([test "$sharedfp_fetchadd_happy" = yes], [$1], [$2])
])
