#!/bin/sh
# node-agent.sh: the "ssh" of emulated nodes.  Open MPI's launcher calls it
# as it would call ssh (plm_rsh_agent in 4.1, plm_ssh_agent in 5.0):
#
#   node-agent.sh [ssh options] HOST COMMAND...
#
# It runs COMMAND (joined with spaces and given to /bin/sh -c, as ssh
# does) on this machine, in a new UTS + mount namespace whose host name is
# HOST and whose /dev/shm is a fresh tmpfs: the node's own host name and
# node-local shared memory, while files, network and processes stay shared
# like a cluster's file system and loopback network.  The namespace, and
# its /dev/shm with whatever the job left there, disappears with the
# launched daemon.
#
# Mount propagation: private where it can be made so (a mount on the host's
# / would otherwise show the node's /dev/shm to everyone when / is shared);
# unchanged inside a chroot whose / is not a mount point, where making it
# private fails (the chroot's own namespace is private already).
#
# Environment: SFIO_NODES_SHM_SIZE (tmpfs size option, default: tmpfs's own
# default, half of the memory; nothing is allocated until written);
# SFIO_NODES_NETNS=1 (mpirun-nodes.sh --net): run in the network namespace
# named HOST, the node's own NIC.
# SFIO_NODES_CACHEFS=BIN:BACKING:MOUNT: the node mounts BACKING at MOUNT
# with the FUSE file system BIN (test/atomic/cachefs), its own client that
# caches pages and attributes as an NFS client does, seen only inside the
# node; with the node's HOST in SFIO_NODES_CACHEFS_WRITEBACK (names
# separated by spaces) its written pages also stay dirty until flushed.
# The launched daemon (orted) daemonizes, so the agent cannot unmount
# after it: whoever sets SFIO_NODES_CACHEFS stops BIN's processes for
# BACKING after the job, and the node's namespace goes with them.
set -eu

# ssh options the launchers may pass ahead of the host name; none matters
# here (no tty, no X11, no agent forwarding)
while [ $# -gt 0 ]; do
    case "$1" in
    -[1246AaCfGgKkMNnqsTtVXxYy]) shift ;;
    -[BbcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "node-agent.sh: usage: node-agent.sh HOST COMMAND..." >&2; exit 255; }
host=$1
shift

if unshare --uts --mount --propagation private true 2>/dev/null; then
    prop=private
elif ! mountpoint -q / 2>/dev/null; then
    prop=unchanged     # a chroot: its mounts are private already
else
    echo "node-agent.sh: cannot make a private mount namespace (unshare --propagation private failed)" >&2
    exit 255
fi
size=${SFIO_NODES_SHM_SIZE:+,size=$SFIO_NODES_SHM_SIZE}
netns=
[ "${SFIO_NODES_NETNS:-}" = 1 ] && netns="ip netns exec $host"
# shellcheck disable=SC2016
exec $netns unshare --uts --mount --propagation "$prop" /bin/sh -c '
    host=$1; opts=$2; shift 2
    hostname "$host" || exit 255
    mount -t tmpfs -o "mode=1777$opts" "sfio-node-shm" /dev/shm || exit 255
    [ -n "${SFIO_NODES_CACHEFS:-}" ] || exec /bin/sh -c "$*"
    mnt=${SFIO_NODES_CACHEFS##*:}
    cfs=${SFIO_NODES_CACHEFS%:*}
    backing=${cfs#*:}
    cfs=${cfs%%:*}
    wb=
    case " ${SFIO_NODES_CACHEFS_WRITEBACK:-} " in *" $host "*) wb=1 ;; esac
    unset CACHEFS_WRITEBACK
    [ -z "$wb" ] || export CACHEFS_WRITEBACK=1
    "$cfs" "$backing" "$mnt" || exit 255
    exec /bin/sh -c "$*"' node-agent "$host" "$size" "$@"
