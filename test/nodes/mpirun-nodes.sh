#!/bin/bash
# mpirun-nodes.sh: run an MPI job on N emulated nodes of this machine.
#
#   mpirun-nodes.sh --nodes N --ppn P [--cyclic] [mpirun options] [--] PROG ARGS...
#   mpirun-nodes.sh --nodes N [--cyclic] -np NP [mpirun options] PROG ARGS...
#   mpirun-nodes.sh --nodes N --ppn P --rankfile F [mpirun options] PROG ARGS...
#   mpirun-nodes.sh --nodes N --hosts-only     add the /etc/hosts entries, run nothing
#   mpirun-nodes.sh --remove-hosts             remove every entry this script added
#   mpirun-nodes.sh --nodes N --ppn P --print -- PROG ...   print the mpirun command
#
# Each node is a UTS + mount namespace with its own host name
# (${SFIO_NODES_PREFIX:-sfio-n}1 .. N) and its own tmpfs on /dev/shm,
# started by node-agent.sh, which Open MPI's launcher uses instead of ssh.
# Files stay shared by all nodes (like NFS or Lustre on a cluster); ranks of
# different nodes talk over TCP on the loopback interface, ranks of one node
# over shared memory.  The host names resolve to 127.0.2.1 .. 127.0.2.N via
# /etc/hosts (entries marked "# sfio-nodes", added idempotently: needs root
# the first time).  Ranks are placed P per node, in blocks (ranks 0..P-1 on
# node 1) or with --cyclic round robin over the nodes.  Without --ppn, -np NP
# (or -n NP) among the mpirun options gives NP ranks over the N nodes: NP/N
# per node when N divides NP, else ceil(NP/N) slots per node filled in
# order; fewer ranks than nodes use NP nodes.  --rankfile F places the
# ranks as F says (host names sfio-n1.., e.g. written by sfio-place; 4.1
# --rankfile, 5.0 --map-by rankfile:file=).  So a script whose launcher is
# "mpirun -np NP" can use "mpirun-nodes.sh --nodes N" unchanged (test
# scripts read it from SFIO_MPIRUN).  Open MPI 4.1 and 5.0
# are told apart by `mpirun --version`:
#   4.1  --mca plm_rsh_agent node-agent.sh --mca plm_rsh_no_tree_spawn 1
#        --host n1:P,... -np N*P --mca btl self,vader,tcp
#        --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo
#   5.0  --prtemca plm_ssh_agent node-agent.sh --prtemca plm_ssh_no_tree_spawn 1
#        --host n1:P,... --map-by ppr:P:node:OVERSUBSCRIBE --mca btl self,sm,tcp
#        --mca btl_tcp_if_include lo
# plus --allow-run-as-root as root, and --mca mpi_yield_when_idle 1 when the
# ranks outnumber the processors.  The launched environment is mpirun's own
# (the agent is a local process), so OMPI_MCA_* variables reach every rank.
# Environment: SFIO_NODES_PREFIX (host name prefix), SFIO_NODES_SHM_SIZE
# (size of each node's /dev/shm, see node-agent.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
agent=$here/node-agent.sh
prefix=${SFIO_NODES_PREFIX:-sfio-n}
marker="# sfio-nodes"
hosts_file=${SFIO_NODES_HOSTS_FILE:-/etc/hosts}

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

nodes=2
ppn=
np=
cyclic=0
rankfile=
print=0
action=run
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --nodes=*) nodes=${1#*=}; shift ;;
    --ppn) ppn=$2; shift 2 ;;
    --ppn=*) ppn=${1#*=}; shift ;;
    --cyclic) cyclic=1; shift ;;
    --rankfile) rankfile=$2; shift 2 ;;
    -np|-n|--np|--n) np=$2; shift 2 ;;
    --oversubscribe|--allow-run-as-root) shift ;;   # implied
    --print) print=1; shift ;;
    --hosts-only) action=hosts; shift ;;
    --remove-hosts) action=remove; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; args+=("$@"); break ;;
    *) args+=("$1"); shift ;;
    esac
done
case "$nodes$ppn$np" in *[!0-9]*|'') echo "mpirun-nodes.sh: --nodes, --ppn and -np take numbers" >&2; exit 2 ;; esac
if [ "$nodes" -lt 1 ] || [ "$nodes" -gt 254 ]; then
    echo "mpirun-nodes.sh: need 1 <= --nodes <= 254" >&2
    exit 2
fi
# exact: every node gets ppn ranks (5.0 maps them with ppr); else slots fill in order
exact=1
if [ -n "$ppn" ]; then
    [ -n "$np" ] && [ "$np" != $(( nodes * ppn )) ] && { echo "mpirun-nodes.sh: -np $np is not --nodes x --ppn" >&2; exit 2; }
elif [ -n "$np" ]; then
    [ "$np" -ge 1 ] || { echo "mpirun-nodes.sh: -np must be >= 1" >&2; exit 2; }
    [ "$np" -lt "$nodes" ] && nodes=$np
    ppn=$(( (np + nodes - 1) / nodes ))
    [ $(( nodes * ppn )) = "$np" ] || exact=0
else
    ppn=1
fi
[ "$ppn" -ge 1 ] || { echo "mpirun-nodes.sh: --ppn must be >= 1" >&2; exit 2; }
np=${np:-$(( nodes * ppn ))}

node_name() { echo "$prefix$1"; }

# /etc/hosts: one "127.0.2.I NAME # sfio-nodes" line per node, under a lock
# so that concurrent jobs do not add a line twice or lose one.
hosts_add() {
    local i name missing=()
    for (( i = 1; i <= nodes; i++ )); do
        name=$(node_name "$i")
        grep -qE "^127\.0\.2\.$i[[:space:]]+$name([[:space:]]|\$)" "$hosts_file" 2>/dev/null ||
            missing+=("127.0.2.$i $name $marker")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ ! -w "$hosts_file" ]; then
        echo "mpirun-nodes.sh: $hosts_file lacks entries for the emulated nodes and is not writable:" >&2
        printf '  %s\n' "${missing[@]}" >&2
        return 1
    fi
    (
        flock 9
        for (( i = 1; i <= nodes; i++ )); do
            name=$(node_name "$i")
            # another name on this address (an older prefix) would shadow ours
            sed -i "/^127\.0\.2\.$i[[:space:]].*$marker\$/{/[[:space:]]$name[[:space:]]/!d}" "$hosts_file"
            grep -qE "^127\.0\.2\.$i[[:space:]]+$name([[:space:]]|\$)" "$hosts_file" ||
                echo "127.0.2.$i $name $marker" >> "$hosts_file"
        done
    ) 9>>"$hosts_file.sfio-lock"
}

hosts_remove() {
    [ -w "$hosts_file" ] || return 0
    ( flock 9; sed -i "/$marker\$/d" "$hosts_file" ) 9>>"$hosts_file.sfio-lock"
    rm -f "$hosts_file.sfio-lock"
}

case "$action" in
hosts) hosts_add; exit ;;
remove) hosts_remove; exit ;;
esac

[ ${#args[@]} -gt 0 ] || { echo "mpirun-nodes.sh: no program given (see --help)" >&2; exit 2; }
command -v unshare >/dev/null || { echo "mpirun-nodes.sh: unshare (util-linux) not found" >&2; exit 2; }
hosts_add

hostlist=
for (( i = 1; i <= nodes; i++ )); do
    hostlist="$hostlist${hostlist:+,}$(node_name "$i"):$ppn"
done

version=$(mpirun --version 2>/dev/null | sed -n '1s/.*) \([0-9][0-9.]*\).*/\1/p')
cmd=(mpirun)
[ "$(id -u)" = 0 ] && cmd+=(--allow-run-as-root)
case "$version" in
4.*)
    cmd+=(--mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1
          --host "$hostlist" -np "$np"
          --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
    if [ -n "$rankfile" ]; then
        cmd+=(--rankfile "$rankfile")
    elif [ "$cyclic" = 1 ]; then
        cmd+=(--map-by node)
    fi
    ;;
5.*)
    cmd+=(--prtemca plm_ssh_agent "$agent" --prtemca plm_ssh_no_tree_spawn 1
          --host "$hostlist" --mca btl self,sm,tcp --mca btl_tcp_if_include lo)
    if [ -n "$rankfile" ]; then
        cmd+=(-np "$np" --map-by "rankfile:file=$rankfile:OVERSUBSCRIBE")
    elif [ "$cyclic" = 1 ]; then
        cmd+=(-np "$np" --map-by node:OVERSUBSCRIBE)
    elif [ "$exact" = 0 ]; then
        cmd+=(-np "$np" --map-by slot:OVERSUBSCRIBE)
    else
        cmd+=(--map-by "ppr:$ppn:node:OVERSUBSCRIBE")
    fi
    ;;
*)
    echo "mpirun-nodes.sh: unsupported Open MPI version '${version:-unknown}' (4.1 or 5.0)" >&2
    exit 2 ;;
esac
[ "$np" -gt "$(nproc)" ] && cmd+=(--mca mpi_yield_when_idle 1)
cmd+=("${args[@]}")
if [ "$print" = 1 ]; then
    printf '%q ' "${cmd[@]}"; echo
    exit 0
fi
exec "${cmd[@]}"
