#!/bin/sh
# two-hosts.sh MPIRUN PROGRAM ARGS...: runs PROGRAM ARGS as 2 ranks on two
# hosts: network namespaces joined by a veth pair (10.201.0.1 and
# 10.201.0.2), each with a hostname of its own. mpirun runs in the first;
# its remote shell (plm_rsh_agent) enters the second to start MPI's daemon
# there, and the ranks talk over MPI's TCP transport between the two
# addresses, as on two machines. Needs root (ip netns, unshare).
set -eu
mpirun=$1
shift
tag=$$
a=gnnc-a-$tag
b=gnnc-b-$tag
work=$(mktemp -d)
cleanup() {
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip link add "va$tag" type veth peer name "vb$tag"
ip link set "va$tag" netns "$a"
ip link set "vb$tag" netns "$b"
ip -n "$a" addr add 10.201.0.1/24 dev "va$tag"
ip -n "$b" addr add 10.201.0.2/24 dev "vb$tag"
for ns in "$a" "$b"; do
  ip -n "$ns" link set lo up
done
ip -n "$a" link set "va$tag" up
ip -n "$b" link set "vb$tag" up

# The remote shell: "agent HOST COMMAND...", COMMAND run by sh in the
# second host's namespace.
cat > "$work/agent" <<AGENT
#!/bin/sh
shift
exec ip netns exec $b unshare --uts sh -c "hostname gnnc-host-b && \$*"
AGENT
chmod +x "$work/agent"
printf '10.201.0.1 slots=1\n10.201.0.2 slots=1\n' > "$work/hosts"

# The remote rank shares the local one's compile cache (the same files).
# So do the sanitizers' settings (the sanitizer job).
forward=
for variable in GNNC_CACHE_DIR ASAN_OPTIONS UBSAN_OPTIONS GNNC_CHECKED; do
  if [ -n "$(printenv $variable)" ]; then forward="$forward -x $variable"; fi
done
ip netns exec "$a" unshare --uts sh -c 'hostname gnnc-host-a && exec "$@"' sh \
  $mpirun -np 2 --hostfile "$work/hosts" $forward \
  --mca plm_rsh_agent "$work/agent" \
  --mca btl self,tcp --mca btl_tcp_if_include 10.201.0.0/24 \
  --mca oob_tcp_if_include 10.201.0.0/24 \
  "$@"
