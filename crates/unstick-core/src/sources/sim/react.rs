//! How a simulated cluster reacts to time passing: one pass of Ceph expiry, the control plane
//! ([`super::controllers`]) and the kubelets ([`super::kubelet`]) at the world's current time.

use super::world::{CONTROLLER_LABEL, World};
use super::{controllers, kubelet, rollout};

impl World {
    /// Lets kubelets, controllers and Ceph react to the current (simulated) time: expires
    /// blocklist entries, releases a lost node's pods under the out-of-service taint (1.26+),
    /// finishes kubelet operations and deleted pods, replaces missing pods, detaches released
    /// volumes, mounts volumes for waiting pods, and replaces the outdated pods of RollingUpdate
    /// DaemonSets ([`super::rollout`]).
    pub fn step(&mut self) {
        let now = self.clock.now();
        self.ceph.expire(now);
        controllers::out_of_service(self, now);
        kubelet::finish_operations(self, now);
        kubelet::stop_pods(self, now);
        kubelet::finish_deleted_pods(self, now);
        controllers::controllers(self, now);
        controllers::detach_released(self, now);
        kubelet::mount_waiting_pods(self, now);
        let daemonsets: Vec<(String, String)> = self
            .controllers
            .iter()
            .filter(|c| c.kind == "DaemonSet")
            .map(|c| (c.namespace.clone(), c.name.clone()))
            .collect();
        for k in rollout::outdated(&self.store, &daemonsets, CONTROLLER_LABEL) {
            if self.finalize(&k) {
                self.react(format!("DaemonSet rolling update: pod {}/{} replaced", k.ns, k.name));
            }
        }
    }
}
