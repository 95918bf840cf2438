dnl Locate an installed Open MPI with its internal (devel) headers.
dnl Sets/substitutes: SFIO_OMPI_CPPFLAGS, SFIO_OMPI_LDFLAGS, SFIO_OMPI_LIBS,
dnl SFIO_OMPI_INCDIR, SFIO_OMPI_VERSION, SFIO_OMPI_SERIES (4.1 or 5.0), SFIO_OMPI_MAJOR,
dnl AM conditional SFIO_OMPI_SERIES_5, ompilibdir (component dir),
dnl sfio_helpdir.
AC_DEFUN([SFIO_FIND_OMPI], [
  AC_ARG_WITH([ompi],
    [AS_HELP_STRING([--with-ompi=PREFIX], [Open MPI installation prefix (default: ask mpicc/ompi_info)])],
    [], [with_ompi=])
  AC_ARG_WITH([component-dir],
    [AS_HELP_STRING([--with-component-dir=DIR],
      [where to install mca_*.so (default: Open MPI's own component dir when PREFIX is Open MPI's prefix, else LIBDIR/openmpi; use ~/.openmpi/components for a per-user install)])],
    [], [with_component_dir=])

  sfio_ompi_incbase=
  sfio_ompi_libdir=
  AS_IF([test -n "$with_ompi"], [
    AC_PATH_PROG([OMPI_INFO], [ompi_info], [], [$with_ompi/bin])
    for d in "$with_ompi/include" "$with_ompi/lib/openmpi/include" "$with_ompi"/lib/*/openmpi/include; do
      AS_IF([test -f "$d/openmpi/ompi_config.h"], [sfio_ompi_incbase=$d; break])
    done
    for d in "$with_ompi/lib" "$with_ompi/lib64" "$with_ompi"/lib/*/openmpi/lib; do
      AS_IF([test -e "$d/libmpi.so"], [sfio_ompi_libdir=$d; break])
    done
  ], [
    AC_PATH_PROG([OMPI_INFO], [ompi_info])
    for d in `$CC --showme:incdirs 2>/dev/null`; do
      AS_IF([test -f "$d/openmpi/ompi_config.h"], [sfio_ompi_incbase=$d; break])
      AS_IF([test -f "$d/ompi_config.h"], [sfio_ompi_incbase=`dirname $d`; break])
    done
    for d in `$CC --showme:libdirs 2>/dev/null`; do
      AS_IF([test -e "$d/libmpi.so"], [sfio_ompi_libdir=$d; break])
    done
  ])
  AS_IF([test -z "$sfio_ompi_incbase"],
    [AC_MSG_ERROR([Open MPI devel headers (ompi_config.h) not found: install Debian package libopenmpi-dev, or pass --with-ompi=PREFIX of an Open MPI built with --with-devel-headers])])
  AS_IF([test -z "$sfio_ompi_libdir"],
    [AC_MSG_ERROR([libmpi.so not found: install Debian package libopenmpi-dev, or pass --with-ompi=PREFIX])])
  SFIO_OMPI_INCDIR="$sfio_ompi_incbase/openmpi"
  AS_IF([test ! -f "$SFIO_OMPI_INCDIR/ompi/mca/common/ompio/common_ompio.h"],
    [AC_MSG_ERROR([OMPIO headers (ompi/mca/common/ompio/common_ompio.h) missing under $SFIO_OMPI_INCDIR: install Debian package libopenmpi-dev (Open MPI must be built with --with-devel-headers)])])
  SFIO_OMPI_CPPFLAGS="-I$sfio_ompi_incbase -I$SFIO_OMPI_INCDIR"
  SFIO_OMPI_LDFLAGS="-L$sfio_ompi_libdir"

  AC_MSG_CHECKING([Open MPI version])
  sfio_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $SFIO_OMPI_CPPFLAGS"
  AC_COMPUTE_INT([sfio_ompi_major], [OMPI_MAJOR_VERSION], [#include <mpi.h>], [sfio_ompi_major=0])
  AC_COMPUTE_INT([sfio_ompi_minor], [OMPI_MINOR_VERSION], [#include <mpi.h>], [sfio_ompi_minor=0])
  AC_COMPUTE_INT([sfio_ompi_release], [OMPI_RELEASE_VERSION], [#include <mpi.h>], [sfio_ompi_release=0])
  CPPFLAGS=$sfio_save_CPPFLAGS
  SFIO_OMPI_VERSION="$sfio_ompi_major.$sfio_ompi_minor.$sfio_ompi_release"
  SFIO_OMPI_SERIES="$sfio_ompi_major.$sfio_ompi_minor"
  AC_MSG_RESULT([$SFIO_OMPI_VERSION])
  dnl The series decides the interfaces compiled (see
  dnl ompi/mca/common/sfio/sfio_ompi_compat.h) and what the components link:
  dnl 4.1 keeps OMPIO's common code in libmca_common_ompio; 5.0 exports it
  dnl from libmpi and has no such library.
  AS_CASE([$SFIO_OMPI_SERIES],
    [4.1], [
      AS_IF([test ! -e "$sfio_ompi_libdir/libmca_common_ompio.so"],
        [AC_MSG_ERROR([libmca_common_ompio.so missing in $sfio_ompi_libdir: install Debian package libopenmpi-dev])])
      SFIO_OMPI_LIBS="-lmpi -lmca_common_ompio -lopen-pal"],
    [5.0], [
      AS_IF([test ! -e "$sfio_ompi_libdir/libopen-pal.so"],
        [AC_MSG_ERROR([libopen-pal.so missing in $sfio_ompi_libdir: install Debian package libopenmpi-dev])])
      SFIO_OMPI_LIBS="-lmpi -lopen-pal"],
    [AC_MSG_ERROR([Open MPI $SFIO_OMPI_VERSION is not supported (supported: 4.1.x, 5.0.x); on Debian bookworm or trixie install libopenmpi-dev])])
  SFIO_OMPI_MAJOR=$sfio_ompi_major
  AC_DEFINE_UNQUOTED([SFIO_OMPI_BUILD_MAJOR], [$sfio_ompi_major], [Open MPI major version the suite is built for])
  AC_DEFINE_UNQUOTED([SFIO_OMPI_BUILD_MINOR], [$sfio_ompi_minor], [Open MPI minor version the suite is built for])
  AM_CONDITIONAL([SFIO_OMPI_SERIES_5], [test "$sfio_ompi_major" -ge 5])

  AS_IF([test -n "$with_component_dir"], [ompilibdir=$with_component_dir], [
    sfio_pkglibdir=
    AS_IF([test -n "$OMPI_INFO"],
      [sfio_pkglibdir=`$OMPI_INFO --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p'`])
    sfio_ompi_prefix=
    AS_IF([test -n "$OMPI_INFO"],
      [sfio_ompi_prefix=`$OMPI_INFO --path prefix --parsable 2>/dev/null | sed -n 's/^path:prefix://p'`])
    dnl Install straight into Open MPI's component dir only when the user's
    dnl prefix is Open MPI's own (the packager case); otherwise stay inside
    dnl the chosen prefix and let the user point mca_base_component_path at it.
    AS_IF([test -n "$sfio_pkglibdir" && test "x$prefix" = "x$sfio_ompi_prefix"],
      [ompilibdir=$sfio_pkglibdir],
      [ompilibdir='${libdir}/openmpi'])
  ])
  sfio_helpdir='${datadir}/ompio-sfio'
  AC_SUBST([SFIO_OMPI_CPPFLAGS])
  AC_SUBST([SFIO_OMPI_LDFLAGS])
  AC_SUBST([SFIO_OMPI_LIBS])
  AC_SUBST([SFIO_OMPI_INCDIR])
  AC_SUBST([SFIO_OMPI_VERSION])
  AC_SUBST([SFIO_OMPI_SERIES])
  AC_SUBST([SFIO_OMPI_MAJOR])
  AC_SUBST([sfio_helpdir])
  dnl Open MPI's component Makefile.am installs to mcacomponentdir = $(ompilibdir).
  AC_SUBST([ompilibdir])
])

dnl hwloc, PMIx and libfabric (engine: topology, locality, remote
dnl coordination) and Check (unit tests only), all via pkg-config.
AC_DEFUN([SFIO_FIND_DEPS], [
  PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [],
    [AC_MSG_ERROR([hwloc not found by pkg-config: install Debian package libhwloc-dev])])
  PKG_CHECK_MODULES([PMIX], [pmix], [],
    [AC_MSG_ERROR([PMIx not found by pkg-config: install Debian package libpmix-dev])])
  PKG_CHECK_MODULES([FABRIC], [libfabric], [],
    [AC_MSG_ERROR([libfabric not found by pkg-config: install Debian package libfabric-dev])])
  AC_ARG_ENABLE([unit-tests],
    [AS_HELP_STRING([--disable-unit-tests], [do not require Check (make check then skips unit tests)])],
    [], [enable_unit_tests=yes])
  sfio_have_check=no
  AS_IF([test "x$enable_unit_tests" != xno], [
    PKG_CHECK_MODULES([CHECK], [check >= 0.11], [sfio_have_check=yes],
      [AC_MSG_ERROR([Check not found by pkg-config: install Debian package check (or configure --disable-unit-tests)])])
  ])
  AM_CONDITIONAL([SFIO_HAVE_CHECK], [test "x$sfio_have_check" = xyes])
  AC_SEARCH_LIBS([pthread_create], [pthread])
])
