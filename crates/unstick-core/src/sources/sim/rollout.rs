//! The DaemonSet controller's rolling update, as the real one does it with the default
//! `updateStrategy` (RollingUpdate; measured on the live harness with kube-controller-manager
//! 1.20): a pod whose containers differ from its DaemonSet's current template is deleted, and the
//! simulated controllers create its replacement from the template. With `OnDelete` a running pod
//! keeps its old template until someone deletes it.

use super::store::{ObjKey, Res, Store};

/// The pods to replace: those of the RollingUpdate DaemonSets `daemonsets` (`(namespace, name)`;
/// their pods carry `label=<name>`) whose containers differ from the current template.
pub fn outdated(store: &Store, daemonsets: &[(String, String)], label: &str) -> Vec<ObjKey> {
    let mut out = vec![];
    for (ns, name) in daemonsets {
        let Some(ds) = store.get(&ObjKey::new(Res::DaemonSet, ns, name)) else { continue };
        if ds["spec"]["updateStrategy"]["type"] == "OnDelete" {
            continue;
        }
        let template = &ds["spec"]["template"]["spec"]["containers"];
        for p in store.list_where(Res::Pod, Some(ns), |p| p["metadata"]["labels"][label] == name.as_str()) {
            if p["spec"]["containers"] != *template {
                out.push(ObjKey::new(Res::Pod, ns, p["metadata"]["name"].as_str().unwrap_or_default()));
            }
        }
    }
    out
}
