#!/bin/bash
# fresh_check.sh [--through-versions] NP LAUNCHER... t_fresh: runs t_fresh (with the
# store's statistics at fs_versioned_verbose 1) and checks the store's
# count of fresh bytes on every rank against what t_fresh says to expect:
# one count for all ranks ("t_fresh: block B fresh-expected B": only the
# block no rank had written before atomic mode began) or one per rank
# ("t_fresh: rank R fresh-expected B", --through-versions; see t_fresh.c).
# Prints the run's output and "FAIL ..." lines; exits with the run's
# status.
targs=
if [ "$1" = --through-versions ]; then
    targs=$1
    shift
fi
np=$1
shift
# the launcher's options go before the program (prterun hands the rest
# to the program)
prog=${!#}
out=$("${@:1:$#-1}" --mca fs_versioned_verbose 1 "$prog" $targs 2>&1)
rc=$?
echo "$out"
echo "$out" | awk -v np="$np" '
    /^t_fresh: block / { want = $5 }
    /^t_fresh: rank [0-9]+ fresh-expected / { want_r[$3] = $5; per_rank = 1 }
    /^sfio: rank [0-9]+ .*t_fresh\..*\(fresh [0-9]+ B\)/ {
        match($0, /\(fresh [0-9]+ B\)/)
        fresh[$3] = substr($0, RSTART + 7, RLENGTH - 10)
        n++
    }
    END {
        if (want == "" && !per_rank) exit   # t_fresh failed and said so
        if (n < np) { print "FAIL t_fresh: " n + 0 " statistics lines for " np " ranks"; exit }
        for (r = 0; r < np; r++) {
            w = per_rank ? want_r[r] : want
            if (fresh[r] != w) bad = bad " rank " r ": " fresh[r] " (expected " w ")"
        }
        if (bad != "") print "FAIL t_fresh: fresh bytes" bad
    }'
exit $rc
