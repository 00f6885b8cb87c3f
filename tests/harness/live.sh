# Sourced by tests/harness/cluster: the per-node network, the control plane (kube-controller-manager,
# kube-scheduler), the node agents and the attacher, and `incident NAME`. See SEED.md "Live incidents".
# shellcheck shell=bash

# ---------------------------------------------------------------- per-node network (198.18.0.0/16)
# Each instance owns the /27 198.18.(PO/8).(32*(PO%8))/27, so that every port offset 0..999 gets a
# network of its own (offsets 20 and 60 shared 198.18.0.128/27 when only PO%8 chose it, and two
# bridges with one address break both harnesses' routes): .1 is the bridge (the host's Ceph
# address: mon, osd and every host-side client); .2, .3, .4 are the nodes worker-1..3 (InternalIP)
# in their namespaces; .18, .19, .20 their storage addresses (SEED.md "Storage addresses").
NET_PREFIX=198.18.$((PO / 8))
NET_BASE=$(((PO % 8) * 32))
HOST_IP=$NET_PREFIX.$((NET_BASE + 1))
BRIDGE=ush${PO}br
LIVE_NODES=(worker-1 worker-2 worker-3)
node_ip()    { echo "$NET_PREFIX.$((NET_BASE + 1 + $1))"; }    # node_ip INDEX (1-based): InternalIP
storage_ip() { echo "$NET_PREFIX.$((NET_BASE + 17 + $1))"; }   # storage_ip INDEX: its Ceph clients' source
node_netns() { echo "ush${PO}-$1"; }                      # node_netns NODE
node_veth()  { echo "ush${PO}v$1"; }                      # host side of node INDEX's veth

net_up() {
  command -v ip >/dev/null || die "no 'ip' (iproute2)"
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    log "creating bridge $BRIDGE ($HOST_IP/27)"
    ip link add "$BRIDGE" type bridge || die "ip link add $BRIDGE type bridge failed"
  fi
  # (no `ip ... | grep -q`: with pipefail, grep's early exit fails the pipeline by SIGPIPE)
  [[ $(ip addr show dev "$BRIDGE") == *"inet $HOST_IP/"* ]] || ip addr add "$HOST_IP/27" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  local i node ns veth sip
  for i in "${!LIVE_NODES[@]}"; do
    node=${LIVE_NODES[$i]}; ns=$(node_netns "$node"); veth=$(node_veth $((i + 1))); sip=$(storage_ip $((i + 1)))
    if [[ ! -e /run/netns/$ns ]]; then
      ip netns add "$ns" || die "ip netns add $ns failed"
    fi
    if ! ip link show "$veth" >/dev/null 2>&1; then
      ip link add "$veth" type veth peer name "${veth}p" || die "veth $veth failed"
      ip link set "${veth}p" netns "$ns"
      ip -n "$ns" link set "${veth}p" name eth0
    fi
    ip link set "$veth" master "$BRIDGE" up
    ip -n "$ns" link set lo up
    [[ $(ip -n "$ns" addr show dev eth0) == *"inet $(node_ip $((i + 1)))/"* ]] \
      || ip -n "$ns" addr add "$(node_ip $((i + 1)))/27" dev eth0
    # the storage address: a second address whose route makes it the source of every connection
    # the namespace opens to the bridge (Ceph's public network), so each Ceph client of the node
    # (holders, `rbd` calls) is `<storage address>:0/<nonce>`, not its InternalIP
    [[ $(ip -n "$ns" addr show dev eth0) == *"inet $sip/"* ]] || ip -n "$ns" addr add "$sip/27" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route replace "$NET_PREFIX.$NET_BASE/27" dev eth0 proto kernel scope link src "$sip" \
      || die "cannot make $sip the source address in $ns"
  done
}

# after the mon is up: a node namespace reaches it over the bridge
check_net() {
  wait_for 10 "bridge" ping_node1 || die "node namespace $(node_netns "${LIVE_NODES[0]}") cannot reach the mon at $HOST_IP:$MON_V2_PORT"
}
ping_node1() { timeout 2 ip netns exec "$(node_netns "${LIVE_NODES[0]}")" bash -c "exec 3<>/dev/tcp/$HOST_IP/$MON_V2_PORT"; }

net_down() {
  local i node ns
  for i in "${!LIVE_NODES[@]}"; do
    node=${LIVE_NODES[$i]}; ns=$(node_netns "$node")
    ip link del "$(node_veth $((i + 1)))" 2>/dev/null || true
    if [[ -e /run/netns/$ns ]]; then ip netns del "$ns"; fi
  done
  ip link show "$BRIDGE" >/dev/null 2>&1 && { log "removing bridge $BRIDGE and the node namespaces"; ip link del "$BRIDGE"; }
  return 0
}

# ---------------------------------------------------------------- control plane
# secure ports of kube-controller-manager (CM_PORT) and kube-scheduler (CM_PORT + 1): 20000 + 2·offset.
# (10260 + offset and 10280 + offset collided across offsets 20 apart: the controller-manager of
# offset 40 could not bind 10300, the scheduler's of offset 20.)
CM_PORT=$((20000 + PO * 2))
sig_cm()        { echo "$CONTROLLER_MANAGER_BIN"; echo "--kubeconfig=$STATE/admin.kubeconfig"; }
sig_scheduler() { echo "$SCHEDULER_BIN"; echo "--kubeconfig=$STATE/admin.kubeconfig"; }
sig_agent()     { echo "agent.py"; echo "--run $RUN"; }

start_control_plane() {
  if is_running controller-manager sig_cm; then
    log "kube-controller-manager already running (pid $(pid_of controller-manager))"
  else
    log "starting kube-controller-manager (all controllers, node monitor grace 16 s)"
    setsid "$CONTROLLER_MANAGER_BIN" --kubeconfig="$STATE/admin.kubeconfig" \
      --authentication-kubeconfig="$STATE/admin.kubeconfig" --authorization-kubeconfig="$STATE/admin.kubeconfig" \
      --bind-address=127.0.0.1 --secure-port="$CM_PORT" "${OLD_CP_FLAGS[@]}" --leader-elect=false --controllers='*' \
      --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" --use-service-account-credentials=false \
      --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
      --node-monitor-period=2s --node-monitor-grace-period=16s --node-startup-grace-period=30s \
      --profiling=false --v=2 < /dev/null >> "$RUN/controller-manager.log" 2>&1 9>&- &
    echo $! > "$RUN/controller-manager.pid"
  fi
  if is_running scheduler sig_scheduler; then
    log "kube-scheduler already running (pid $(pid_of scheduler))"
  else
    log "starting kube-scheduler"
    setsid "$SCHEDULER_BIN" --kubeconfig="$STATE/admin.kubeconfig" \
      --authentication-kubeconfig="$STATE/admin.kubeconfig" --authorization-kubeconfig="$STATE/admin.kubeconfig" \
      --bind-address=127.0.0.1 --secure-port=$((CM_PORT + 1)) "${OLD_CP_FLAGS[@]}" --leader-elect=false \
      --profiling=false --v=1 < /dev/null >> "$RUN/scheduler.log" 2>&1 9>&- &
    echo $! > "$RUN/scheduler.pid"
  fi
  sleep 1
  is_running controller-manager sig_cm || { tail -20 "$RUN/controller-manager.log" >&2; die "kube-controller-manager exited (log $RUN/controller-manager.log)"; }
  is_running scheduler sig_scheduler || { tail -20 "$RUN/scheduler.log" >&2; die "kube-scheduler exited (log $RUN/scheduler.log)"; }
}

stop_control_plane() {
  stop_proc scheduler sig_scheduler
  stop_proc controller-manager sig_cm
}

# ---------------------------------------------------------------- node agents + attacher
run_agent_py() { # NAME ARGS...: a daemon; pidfile $RUN/NAME.pid
  local name=$1; shift
  UNSTICK_HARNESS_DIR=$STATE CEPH_CONF=$CEPHD/ceph.conf UNSTICK_API_PORT=$API_PORT UNSTICK_HOST_IP=$HOST_IP \
    setsid "$SYSPY" "$HARNESS_SRC/agent.py" --run "$RUN" "$@" < /dev/null >> "$RUN/$name.log" 2>&1 9>&- &
  echo $! > "$RUN/$name.pid"
}

start_agent() { # NODE
  local node=$1 i
  for i in "${!LIVE_NODES[@]}"; do [[ ${LIVE_NODES[$i]} == "$node" ]] && break; done
  [[ ${LIVE_NODES[$i]} == "$node" ]] || die "unknown node $node (${LIVE_NODES[*]})"
  if is_running "agent-$node" sig_agent; then return 0; fi
  # worker-3's storage address is its ceph-csi node plugin pod's IP (a holder pod); the others'
  # are listed in their Node annotation (SEED.md "Storage addresses")
  local tie=annotation; [[ $node == worker-3 ]] && tie=client-pod
  log "starting node agent $node ($(node_ip $((i + 1))), storage $(storage_ip $((i + 1))) by $tie, netns $(node_netns "$node"))"
  run_agent_py "agent-$node" node --node "$node" --ip "$(node_ip $((i + 1)))" --storage-ip "$(storage_ip $((i + 1)))" \
    --storage-tie "$tie" --netns "$(node_netns "$node")"
}

start_agents() {
  local node
  for node in "${LIVE_NODES[@]}"; do start_agent "$node"; done
  if ! is_running attacher sig_agent; then
    log "starting the CSI attacher (rbd.csi.ceph.com)"
    run_agent_py attacher attacher
  fi
}

# stop_agent NODE [kill]: SIGTERM (kubelet stopped; its mappings stay) or SIGKILL of the agent and
# every holder it started (the node lost power)
stop_agent() {
  local node=$1 how=${2:-term} f name
  if [[ $how == kill ]]; then
    for f in "$RUN/agent-$node".pid "$RUN/mounts-$node"/*.pid; do
      [[ -e $f ]] || continue
      local pid; pid=$(tr -dc '0-9' < "$f")
      if cmdline_has "$pid" "$SYSPY" && { cmdline_has "$pid" "--run $RUN" || cmdline_has "$pid" "--pidfile $RUN/"; }; then
        log "power off $node: SIGKILL $(basename "$f" .pid) (pid $pid)"; kill -KILL "$pid" 2>/dev/null || true
      fi
      rm -f "$f"
    done
    return 0
  fi
  stop_proc "agent-$node" sig_agent
}

stop_agents() { # also every mount (holder) of every node: the static seed and `down` start clean
  local node f name
  stop_proc attacher sig_agent
  for node in "${LIVE_NODES[@]}"; do
    stop_proc "agent-$node" sig_agent
    for f in "$RUN/mounts-$node"/*.pid; do
      [[ -e $f ]] || continue
      name=mounts-$node/$(basename "$f" .pid)
      stop_proc "$name" sig_holder
    done
  done
}

# unmount_live: every mount under $RUN (the agents' tmpfs "filesystems" at mnt-NODE/<uid>_<pv>,
# mounted shared), deepest first; lazily, so that a mount still busy (a process with its cwd there)
# detaches now and goes when it is released. Then the empty mount points. Without this a live
# incident's mounts outlive `down`, and removing the state directory fails with EBUSY.
unmount_live() {
  local mp n=0
  while read -r mp; do
    umount -l "$mp" 2>/dev/null && n=$((n + 1)) || log "umount -l $mp failed"
  done < <(awk -v run="$RUN/" 'index($5, run) == 1 {print $5}' /proc/self/mountinfo | sort -r)
  ((n == 0)) || log "unmounted $n live mount(s) under $RUN"
  find "$RUN" -mindepth 1 -maxdepth 2 -type d -path "$RUN/mnt-*" -empty -delete 2>/dev/null || true
}

status_live() {
  local name
  for name in controller-manager:sig_cm scheduler:sig_scheduler attacher:sig_agent; do
    if is_running "${name%%:*}" "${name#*:}"; then printf '%-18s running (pid %s)\n' "${name%%:*}" "$(pid_of "${name%%:*}")"
    else printf '%-18s stopped\n' "${name%%:*}"; fi
  done
  for name in "${LIVE_NODES[@]}"; do
    if is_running "agent-$name" sig_agent; then printf '%-18s running (pid %s)\n' "agent-$name" "$(pid_of "agent-$name")"
    else printf '%-18s stopped\n' "agent-$name"; fi
  done
}

run_incident_py() {
  UNSTICK_HARNESS_DIR=$STATE CEPH_CONF=$CEPHD/ceph.conf UNSTICK_API_PORT=$API_PORT UNSTICK_HOST_IP=$HOST_IP \
    UNSTICK_MON_V1=$MON_V1_PORT UNSTICK_HARNESS=$0 timeout 900 "$SYSPY" "$HARNESS_SRC/incident.py" "$@" 9>&-
}

# `live`: controllers, scheduler, agents and attacher on a clean slate (no static seed)
go_live() {
  stop_agents
  stop_control_plane
  run_seed_py reset
  run_incident_py reset
  start_control_plane
  start_agents
  run_incident_py wait-nodes
}

INCIDENTS=(000 000-csi 001 002 003 003-csi 004 va-finalizer-stuck blocklist-leftover rwo-claim-shared ceph-unreachable ceph-auth-failed)

cmd_incident() {
  local which=${1:-}
  [[ " ${INCIDENTS[*]} " == *" $which "* ]] || die "unknown incident '$which' (${INCIDENTS[*]})"
  with_lock
  require_up
  go_live
  run_incident_py incident "$which"
}

# `node NODE poweroff|stop|start|reboot`: what the incident scripts do to a node, for tests
cmd_node() {
  with_lock 60
  local node=${1:-} what=${2:-}
  case $what in
    poweroff) stop_agent "$node" kill ;;
    stop) stop_agent "$node" ;;
    start|reboot)
      [[ $what == reboot ]] && { stop_agent "$node" kill; rm -f "$RUN/agent-$node.bootid"; }
      start_agent "$node" ;;
    *) die "usage: $0 node NODE poweroff|stop|start|reboot" ;;
  esac
}
