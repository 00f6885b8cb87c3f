//! All IO: the Kubernetes API (watchers + their stores) and the Ceph CLIs. Knows nothing of
//! the UI; results are owned messages.

pub mod ceph;
pub mod describe;
pub mod kube;
pub mod sim;
