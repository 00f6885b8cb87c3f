//! The DaemonSet controller's rolling update, as the real one does it with the default
//! `updateStrategy` (RollingUpdate; measured on the live harness with kube-controller-manager
//! 1.20): a pod whose containers differ from the DaemonSet's current template is deleted, and the
//! controllers ([`super::kubelet`]) create its replacement from the template. With `OnDelete` a
//! running pod keeps its old template until someone deletes it.

use serde_json::Value;

use super::kubelet::CONTROLLER_LABEL;
use super::store::{ObjKey, Res};
use super::world::World;

/// Replaces the pods of RollingUpdate DaemonSets whose template changed (one pass).
pub fn roll_daemonsets(w: &mut World) {
    for c in w.controllers.clone().into_iter().filter(|c| c.kind == "DaemonSet") {
        let Some(ds) = w.store.get(&ObjKey::new(Res::DaemonSet, &c.namespace, &c.name)).cloned() else { continue };
        if ds["spec"]["updateStrategy"]["type"] == "OnDelete" {
            continue;
        }
        let template = &ds["spec"]["template"]["spec"]["containers"];
        let outdated: Vec<Value> = w
            .store
            .list(Res::Pod, Some(&c.namespace))
            .into_iter()
            .filter(|p| p["metadata"]["labels"][CONTROLLER_LABEL] == c.name.as_str())
            .filter(|p| p["spec"]["containers"] != *template)
            .collect();
        for p in outdated {
            let name = p["metadata"]["name"].as_str().unwrap_or_default().to_string();
            if w.finalize(&ObjKey::new(Res::Pod, &c.namespace, &name)) {
                w.react(format!("DaemonSet {}/{}: rolling update replaces pod {name}", c.namespace, c.name));
            }
        }
    }
}
