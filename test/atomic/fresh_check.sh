#!/bin/bash
# fresh_check.sh NP LAUNCHER... t_fresh: runs t_fresh (with the store's
# statistics at fs_versioned_verbose 1) and checks the store's count of
# fresh bytes on every rank: only the block no rank had written before
# atomic mode began may be fresh (see t_fresh.c).  Prints the run's output
# and "FAIL ..." lines; exits with the run's status.
np=$1
shift
# the launcher's options go before the program (prterun hands the rest
# to the program)
prog=${!#}
out=$("${@:1:$#-1}" --mca fs_versioned_verbose 1 "$prog" 2>&1)
rc=$?
echo "$out"
echo "$out" | awk -v np="$np" '
    /^t_fresh: block / { want = $5 }
    /^sfio: rank [0-9]+ .*t_fresh\..*\(fresh [0-9]+ B\)/ {
        match($0, /\(fresh [0-9]+ B\)/)
        fresh[n++] = substr($0, RSTART + 7, RLENGTH - 10)
    }
    END {
        if (want == "") exit   # t_fresh failed and said so
        if (n < np) { print "FAIL t_fresh: " n + 0 " statistics lines for " np " ranks"; exit }
        for (i = 0; i < n; i++)
            if (fresh[i] != want) bad = bad " " fresh[i]
        if (bad != "") print "FAIL t_fresh: fresh bytes" bad ", expected " want " on every rank"
    }'
exit $rc
