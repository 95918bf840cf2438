#!/bin/bash
# mpirun-nodes.sh: run an MPI job on N emulated nodes of this machine.
#
#   mpirun-nodes.sh --nodes N --ppn P [--cyclic] [mpirun options] [--] PROG ARGS...
#   mpirun-nodes.sh --nodes N [--cyclic] -np NP [mpirun options] PROG ARGS...
#   mpirun-nodes.sh --nodes N --ppn P --rankfile F [mpirun options] PROG ARGS...
#   mpirun-nodes.sh --nodes N --net MBIT ...   nodes on a shaped network (below)
#   mpirun-nodes.sh --nodes N --hosts-only     add the /etc/hosts entries, run nothing
#   mpirun-nodes.sh --remove-hosts             remove every entry this script added
#   mpirun-nodes.sh --remove-net               remove the network namespaces, links, bridge
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
#
# --net MBIT (or SFIO_NODES_NET_MBIT): each node also gets its own network
# namespace, joined to a bridge (sfio-br0, 10.213.77.254/24) by a veth
# pair whose both ends are limited to MBIT Mbit/s (tc htb), so traffic
# between nodes pays a NIC's bandwidth while ranks of one node still
# share memory.  The nodes are then named ${SFIO_NODES_PREFIX:-sfio-net}I
# at 10.213.77.I, and MPI's and libfabric's TCP use that subnet.  The
# namespaces stay for the next job (same rate: reused; another rate:
# reshaped); --remove-net takes them down.  Needs ip and tc (iproute2).
# Environment: SFIO_NODES_PREFIX (host name prefix), SFIO_NODES_SHM_SIZE
# (size of each node's /dev/shm, see node-agent.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
agent=$here/node-agent.sh
net_mbit=${SFIO_NODES_NET_MBIT:-}
net_subnet=10.213.77
net_bridge=sfio-br0
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
    --net) net_mbit=$2; shift 2 ;;
    --net=*) net_mbit=${1#*=}; shift ;;
    --remove-net) action=remove-net; shift ;;
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
case "$nodes$ppn$np$net_mbit" in *[!0-9]*|'') echo "mpirun-nodes.sh: --nodes, --ppn, -np and --net take numbers" >&2; exit 2 ;; esac
[ "$net_mbit" != 0 ] || net_mbit=
if [ -n "$net_mbit" ]; then
    prefix=${SFIO_NODES_PREFIX:-sfio-net}
    addr_of() { echo "$net_subnet.$1"; }
else
    prefix=${SFIO_NODES_PREFIX:-sfio-n}
    addr_of() { echo "127.0.2.$1"; }
fi
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

# /etc/hosts: one "ADDRESS NAME # sfio-nodes" line per node (127.0.2.I, or
# 10.213.77.I with --net), under a lock so that concurrent jobs do not add
# a line twice or lose one.
hosts_add() {
    local i name addr re missing=()
    for (( i = 1; i <= nodes; i++ )); do
        name=$(node_name "$i")
        addr=$(addr_of "$i")
        re=${addr//./\\.}
        grep -qE "^$re[[:space:]]+$name([[:space:]]|\$)" "$hosts_file" 2>/dev/null ||
            missing+=("$addr $name $marker")
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
            addr=$(addr_of "$i")
            re=${addr//./\\.}
            # another name on this address (an older prefix) would shadow ours
            sed -i "/^$re[[:space:]].*$marker\$/{/[[:space:]]$name[[:space:]]/!d}" "$hosts_file"
            grep -qE "^$re[[:space:]]+$name([[:space:]]|\$)" "$hosts_file" ||
                echo "$addr $name $marker" >> "$hosts_file"
        done
    ) 9>>"$hosts_file.sfio-lock"
}

hosts_remove() {
    [ -w "$hosts_file" ] || return 0
    ( flock 9; sed -i "/$marker\$/d" "$hosts_file" ) 9>>"$hosts_file.sfio-lock"
    rm -f "$hosts_file.sfio-lock"
}

# Shapes one end of a node's link to net_mbit (kept when already so).
net_shape() {   # [ip netns exec NS] DEV
    local dev=${*: -1} run=("${@:1:$#-1}")
    local shown=${net_mbit}Mbit
    [ $(( net_mbit % 1000 )) = 0 ] && shown=$(( net_mbit / 1000 ))Gbit
    "${run[@]}" tc class show dev "$dev" 2>/dev/null | grep -q "rate $shown " && return 0
    "${run[@]}" tc qdisc del dev "$dev" root 2>/dev/null
    "${run[@]}" tc qdisc add dev "$dev" root handle 1: htb default 1 r2q 1000 &&
    "${run[@]}" tc class add dev "$dev" parent 1: classid 1:1 htb rate "${net_mbit}mbit" \
        burst 64k cburst 64k
}

# The bridge and each node's namespace and shaped veth pair, under a lock.
net_up() {
    command -v ip >/dev/null && command -v tc >/dev/null ||
        { echo "mpirun-nodes.sh: --net needs ip and tc (iproute2)" >&2; return 1; }
    (
        flock 9
        if ! ip link show "$net_bridge" >/dev/null 2>&1; then
            ip link add "$net_bridge" type bridge &&
            ip addr add "$net_subnet.254/24" dev "$net_bridge" &&
            ip link set "$net_bridge" up || exit 1
        fi
        for (( i = 1; i <= nodes; i++ )); do
            ns=$(node_name "$i")
            veth=sfio-v$i
            if ! ip netns list | grep -qx "$ns\( .*\)\?"; then
                ip netns add "$ns" &&
                ip link add "$veth" type veth peer name eth0 netns "$ns" &&
                ip link set "$veth" master "$net_bridge" up &&
                ip -n "$ns" addr add "$(addr_of "$i")/24" dev eth0 &&
                ip -n "$ns" link set eth0 up &&
                ip -n "$ns" link set lo up || exit 1
            fi
            net_shape "$veth" && net_shape ip netns exec "$ns" eth0 || exit 1
        done
    ) 9>>"/run/sfio-nodes-net.lock"
}

net_remove() {
    local ns
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${SFIO_NODES_PREFIX:-sfio-net}[0-9]+\$"); do
        ip netns del "$ns"   # takes the veth pair with it
    done
    ip link del "$net_bridge" 2>/dev/null || true
    rm -f /run/sfio-nodes-net.lock
}

case "$action" in
hosts) hosts_add; exit ;;
remove) hosts_remove; exit ;;
remove-net) net_remove; exit ;;
esac

[ ${#args[@]} -gt 0 ] || { echo "mpirun-nodes.sh: no program given (see --help)" >&2; exit 2; }
command -v unshare >/dev/null || { echo "mpirun-nodes.sh: unshare (util-linux) not found" >&2; exit 2; }
hosts_add
if [ -n "$net_mbit" ]; then
    net_up || exit 2
    # the agent enters the node's namespace; libfabric's tcp takes its NIC
    export SFIO_NODES_NETNS=1 FI_TCP_IFACE=eth0 FI_SOCKETS_IFACE=eth0
    tcp_if=$net_subnet.0/24
else
    tcp_if=lo
fi

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
          --mca btl self,vader,tcp --mca btl_tcp_if_include "$tcp_if" --mca oob_tcp_if_include "$tcp_if")
    if [ -n "$rankfile" ]; then
        cmd+=(--rankfile "$rankfile")
    elif [ "$cyclic" = 1 ]; then
        cmd+=(--map-by node)
    fi
    ;;
5.*)
    cmd+=(--prtemca plm_ssh_agent "$agent" --prtemca plm_ssh_no_tree_spawn 1
          --host "$hostlist" --mca btl self,sm,tcp --mca btl_tcp_if_include "$tcp_if")
    [ -n "$net_mbit" ] && cmd+=(--prtemca oob_tcp_if_include "$tcp_if")
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
