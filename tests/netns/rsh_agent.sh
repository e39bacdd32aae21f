#!/usr/bin/env bash
# Open MPI's plm_rsh_agent in place of ssh: "rsh_agent.sh [ssh options] HOST COMMAND..."
# runs COMMAND in the network namespace that stands for HOST, with its own UTS namespace so that
# the node's host name (and MPI_Get_processor_name) differs from the other nodes'.
# The map comes from the environment (mpirun passes its environment on to the agent):
#   R1PI_NETNS_HOSTS="ADDRESS:NAMESPACE:HOSTNAME ..." (one entry per node)
while [[ "${1:-}" == -* ]]; do   # skip ssh-style options (-x, -o Opt, ...)
  case "$1" in -o|-p|-l|-i) shift 2 ;; *) shift ;; esac
done
host=${1:?rsh_agent: no host}
shift
for entry in ${R1PI_NETNS_HOSTS:-}; do
  IFS=: read -r addr ns name <<<"$entry"
  if [ "$host" = "$addr" ] || [ "$host" = "$name" ]; then
    exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $name; $*"
  fi
done
echo "rsh_agent: unknown host $host (R1PI_NETNS_HOSTS='${R1PI_NETNS_HOSTS:-}')" >&2
exit 255
