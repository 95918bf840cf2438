#!/bin/sh
# otpo-build.sh: build Open MPI's OTPO (github.com/open-mpi/otpo, last
# changed 2016) on Debian bookworm/trixie, with the five fixes it needs
# there.  None of OTPO's code is kept in this repository: the script
# clones it (or takes a checkout) and edits the copy.
#
#   bench/otpo-build.sh [SRC]     SRC: an OTPO checkout or a git URL
#                                 (default https://github.com/open-mpi/otpo)
#   env OTPO_DIR (default ./otpo-build): where the copy is built
#
# The fixes, each a one-line edit:
#  1. ADCL's Makefile.defs uses `ar clr`; binutils >= 2.36 rejects the `l`
#     modifier, so the archive step fails.                  -> `ar cr`
#  2. otpo.h defines globals in a header; GCC >= 10 defaults to -fno-common,
#     so the link fails with multiple definitions.          -> CFLAGS -fcommon
#  3. adcl_setup.c calls floor() but configure's libm check does not reach
#     the final link.                                        -> LIBS -lm
#  4. The NPB/latency/noncontig/tile runners close stdout and stderr, open
#     the output file (which gets fd 1), dup2 it onto itself and close it:
#     the benchmark's output is lost and every result reads as 0 or the
#     penalty.                                               -> close only fd > 2
#  5. The NPB reader fcloses its file and the common exit path fcloses it
#     again (glibc aborts: "double free detected").          -> skip the 2nd close
set -eu

src=${1:-https://github.com/open-mpi/otpo}
dir=${OTPO_DIR:-$PWD/otpo-build}

if [ -d "$src" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    (cd "$src" && git archive --format=tar HEAD 2>/dev/null || tar -C "$src" -cf - .) |
        tar -C "$dir" -xf - 2>/dev/null || cp -a "$src"/. "$dir"/
else
    rm -rf "$dir"
    git clone -q "$src" "$dir"
fi
cd "$dir"

sed -i 's/^AR_FLAGS\([ \t]*\)= clr/AR_FLAGS\1= cr/' ADCL/Makefile.defs.in
python3 - <<'EOF'
import sys
p = 'adcl_setup.c'
s = open(p).read()
a = "close(fd); /* close the file descriptor as we don't need it more  */"
b = "    fclose(fp);\n    return SUCCESS;\n}"
if a not in s or b not in s:
    sys.exit('otpo-build.sh: adcl_setup.c is not the version these fixes are for')
s = s.replace(a, "if (fd > STDERR_FILENO) close(fd);")
s = s.replace(b, "    if (OTPO_TEST_NPB != test && OTPO_TEST_SKAMPI != test) fclose(fp);\n"
                 "    return SUCCESS;\n}")
open(p, 'w').write(s)
EOF

./autogen.sh >autogen.log 2>&1 || { cat autogen.log; exit 1; }
./configure CC=mpicc CFLAGS="-g -O2 -fcommon" >configure.log 2>&1 || { tail -20 configure.log; exit 1; }
# ADCL's generated Makefile.defs may predate the edit above on re-runs
[ -f ADCL/Makefile.defs ] && sed -i 's/^AR_FLAGS\([ \t]*\)= clr/AR_FLAGS\1= cr/' ADCL/Makefile.defs
make LIBS="-ladcl -lm" >make.log 2>&1 || { tail -30 make.log; exit 1; }
# ADCL (OTPO's search engine) defaults to a 2^k factorial design, which runs
# a fraction of the combinations of a multi-parameter file (8 of 20 for
# params/adaptive_algorithm.otpo).  ADCL reads config.adcl from the current
# directory: ADCL_EMETHOD_SEARCH_ALGO 0 is its brute force (every combination).
# ADCL_DISPLAY_RANK must be set too, or ADCL's debug print of the file's
# values dereferences a null pointer (segfault at start).
mkdir -p exhaustive
printf 'ADCL_EMETHOD_SEARCH_ALGO: 0\nADCL_DISPLAY_RANK: 0\n' > exhaustive/config.adcl
echo "built $dir/otpo (run it from $dir/exhaustive to try every combination)"
