# Sourced by tests/harness/cluster: the harness's csi-addons. `up` installs the NetworkFence,
# NetworkFenceClass and CSIAddonsNode CRDs (tests/harness/crds/, verbatim from csi-addons v0.14.0;
# each node agent keeps its node's CSIAddonsNode, agent.py sync_csiaddons_node) and starts
# fencer.py, which acts on NetworkFences as the csi-addons controller + ceph-csi do (its
# docstring); `down` stops it by PID. No NetworkFenceClass is created here: a test that wants
# fencing through csi-addons creates one (provisioner rbd.csi.ceph.com), `reset` removes them.
# shellcheck shell=bash

sig_fencer() { echo "fencer.py"; echo "--run $RUN"; }

install_csiaddons_crds() {
  # --validate=false: kube 1.20 does not know x-kubernetes-validations (the API server drops the
  # field; kubectl's client-side check against the 1.20 schema would refuse the file)
  log "installing the csi-addons NetworkFence / NetworkFenceClass / CSIAddonsNode CRDs"
  timeout 60 kubectl --kubeconfig "$STATE/admin.kubeconfig" apply --validate=false -f "$HARNESS_SRC/crds/" >> "$RUN/csiaddons.log" 2>&1 \
    || { tail -5 "$RUN/csiaddons.log" >&2; die "kubectl apply of tests/harness/crds failed (log $RUN/csiaddons.log)"; }
  # kubectl 1.32's wait fails at once (".status.conditions accessor error: <nil>") on a CRD the
  # API server has not yet given conditions: asked again until the deadline
  local deadline=$((SECONDS + 50))
  until timeout 30 kubectl --kubeconfig "$STATE/admin.kubeconfig" wait --for condition=established --timeout=20s \
    crd/networkfences.csiaddons.openshift.io crd/networkfenceclasses.csiaddons.openshift.io \
    crd/csiaddonsnodes.csiaddons.openshift.io >> "$RUN/csiaddons.log" 2>&1; do
    ((SECONDS < deadline)) || die "the csi-addons CRDs were not established within 50 s (log $RUN/csiaddons.log)"
    sleep 1
  done
}

start_fencer() {
  if is_running fencer sig_fencer; then return 0; fi
  log "starting the NetworkFence controller (fencer.py)"
  UNSTICK_HARNESS_DIR=$STATE CEPH_CONF=$CEPHD/ceph.conf UNSTICK_API_PORT=$API_PORT UNSTICK_HOST_IP=$HOST_IP \
    setsid "$SYSPY" "$HARNESS_SRC/fencer.py" --run "$RUN" < /dev/null >> "$RUN/fencer.log" 2>&1 9>&- &
  echo $! > "$RUN/fencer.pid"
}

stop_fencer() { stop_proc fencer sig_fencer; }

status_fencer() {
  if is_running fencer sig_fencer; then printf '%-18s running (pid %s)\n' fencer "$(pid_of fencer)"
  else printf '%-18s stopped\n' fencer; fi
}
