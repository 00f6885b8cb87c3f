//! All IO: the Kubernetes API (watchers + their stores) and the Ceph CLIs. Knows nothing of
//! the UI; results are owned messages.

pub mod ceph;
pub mod describe;
pub mod kind;
pub mod kube;
pub mod kube_client;
mod kube_stores;
pub mod sim;
pub mod store;
pub mod unchanged;
pub mod watched;
