//! Memory of the Kubernetes model (issue 13), measured with a counting global allocator: bytes
//! live after building the model from a generated `kubectl get … -o json` List, with the old
//! full k8s-openapi types (managedFields and the last-applied annotation stripped, as the old
//! watcher did) and with the slim types of `unstick_core::model::objects` (events bounded), per kind
//! and per pod; and the peak while streaming the list from a file as `diagnose --bundle` does.
//!
//! The objects: `support/kube_list.rs`.
//!
//! ```text
//! cargo bench --bench model_memory                      # 10k pods / 500 nodes / 2k volumes / 5k events
//! cargo bench --bench model_memory -- 50000 2500 10000 10000
//! cargo bench --bench model_memory -- --write-bundle DIR [PODS NODES VOLUMES EVENTS]
//! ```
//! `--write-bundle` writes DIR/kube.json (and a manifest) for measuring
//! `/usr/bin/time -v unstick diagnose --bundle DIR --no-ceph`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails by panicking")]

#[path = "support/counting.rs"]
mod counting;
#[path = "support/kube_list.rs"]
mod kube_list;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use counting::{Counting, PEAK, freed, live, mb};
use kube_list::{NOW, Shape, generate};
use serde_json::Value;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The old model: k8s-openapi's full types, managedFields and last-applied stripped.
#[derive(Default)]
struct Full {
    nodes: Vec<Arc<k8s_openapi::api::core::v1::Node>>,
    pods: Vec<Arc<k8s_openapi::api::core::v1::Pod>>,
    pvcs: Vec<Arc<k8s_openapi::api::core::v1::PersistentVolumeClaim>>,
    pvs: Vec<Arc<k8s_openapi::api::core::v1::PersistentVolume>>,
    vas: Vec<Arc<k8s_openapi::api::storage::v1::VolumeAttachment>>,
    events: Vec<Arc<k8s_openapi::api::core::v1::Event>>,
}

fn full_of<T: serde::de::DeserializeOwned + kube::Resource>(v: &Value) -> Arc<T> {
    use kube::ResourceExt;
    let mut o: T = serde_json::from_value(v.clone()).unwrap();
    o.managed_fields_mut().clear();
    o.annotations_mut().remove("kubectl.kubernetes.io/last-applied-configuration");
    Arc::new(o)
}

fn full(text: &str) -> Full {
    let doc: Value = serde_json::from_str(text).unwrap();
    let mut f = Full::default();
    for v in doc["items"].as_array().unwrap() {
        match v["kind"].as_str().unwrap() {
            "Node" => f.nodes.push(full_of(v)),
            "Pod" => f.pods.push(full_of(v)),
            "PersistentVolumeClaim" => f.pvcs.push(full_of(v)),
            "PersistentVolume" => f.pvs.push(full_of(v)),
            "VolumeAttachment" => f.vas.push(full_of(v)),
            _ => f.events.push(full_of(v)),
        }
    }
    f
}

/// Bytes live in a store of `objs`' copies (moved in, as a watcher's event is stored) beyond
/// the objects themselves (each in an `Arc`, as a snapshot holds them): what keying and the
/// table cost.
fn store_overhead<K: Clone>(objs: &[Arc<K>], fill: impl FnOnce(Vec<K>) -> Box<dyn std::any::Any>) -> isize {
    let copies: Vec<K> = objs.iter().map(|o| (**o).clone()).collect();
    let n = objs.len() as isize;
    let size = std::mem::size_of::<K>() as isize;
    let base = live();
    let store = fill(copies);
    // the objects' own heap moved in; the Vec's buffer (n * size) was freed, n Arcs allocated
    let overhead = live() - base + n * size - n * (size + 16);
    drop(store);
    overhead
}

/// [`store_overhead`] of the console's watch stores, summed over the six kinds (kube-runtime's
/// reflector store, which they replaced, cost 266 B per object here: 5.6 MB at 10k pods).
fn stores_overhead(snap: &unstick_core::model::Snapshot) -> isize {
    use kube::runtime::watcher::Event as WEvent;
    fn ours<K: unstick_core::sources::kube::store::Keyed + PartialEq + 'static>(v: Vec<K>) -> Box<dyn std::any::Any> {
        let (r, mut w) = unstick_core::sources::kube::store::store::<K>();
        for o in v {
            w.apply(WEvent::Apply(o));
        }
        // as the console holds them: the changes recorded by the list taken
        drop(r.take_changes());
        Box::new((r, w))
    }
    store_overhead(&snap.nodes, ours)
        + store_overhead(&snap.pods, ours)
        + store_overhead(&snap.pvcs, ours)
        + store_overhead(&snap.pvs, ours)
        + store_overhead(&snap.volume_attachments, ours)
        + store_overhead(&snap.events, ours)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let bundle = args.iter().position(|a| a == "--write-bundle").map(|i| {
        args.remove(i);
        std::path::PathBuf::from(args.remove(i))
    });
    let n = |i: usize, d: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let pods = n(0, 10_000);
    let s = Shape { pods, nodes: n(1, pods / 20), volumes: n(2, pods / 5), events: n(3, pods / 2), troubled: 40 };
    let text = generate(&s);
    println!(
        "shape: {} pods / {} nodes / {} PVC+PV+VA / {} events (10% about ReplicaSets); kube.json {}",
        s.pods,
        s.nodes,
        s.volumes,
        s.events,
        mb(text.len() as isize)
    );
    if let Some(dir) = bundle {
        let w = unstick_core::bundle::Writer::create(&dir).unwrap();
        w.put(unstick_core::bundle::KUBE, &text).unwrap();
        let m = unstick_core::bundle::Manifest {
            collected_at: Some(jiff::Timestamp::from_second(NOW).unwrap()),
            ..Default::default()
        };
        w.manifest(&m).unwrap();
        println!("bundle written to {}", dir.display());
        return;
    }

    let base = live();
    let f = full(&text);
    let before_total = live() - base;
    let per = |name: &str, b: isize, count: usize| format!("{name} {} ({} B each)", mb(b), b / count.max(1) as isize);
    let (np, nn, nc, nv, na, ne) =
        (f.pods.len(), f.nodes.len(), f.pvcs.len(), f.pvs.len(), f.vas.len(), f.events.len());
    let Full { nodes, pods: fp, pvcs, pvs, vas, events } = f;
    let before = [freed(fp), freed(nodes), freed(pvcs), freed(pvs), freed(vas), freed(events)];
    println!(
        "before (k8s-openapi full types, managedFields + last-applied stripped): {} live, {} bytes per pod",
        mb(before_total),
        before_total / s.pods as isize
    );
    println!(
        "  {}; {}; {}; {}; {}; {}",
        per("pods", before[0], np),
        per("nodes", before[1], nn),
        per("pvcs", before[2], nc),
        per("pvs", before[3], nv),
        per("vas", before[4], na),
        per("events", before[5], ne)
    );

    let base = live();
    let mut snap = unstick_core::model::Snapshot::default();
    unstick_core::bundle::parse_kube("kube.json", &text, &mut snap).unwrap();
    let dropped = unstick_core::model::event_bound::bound(&mut snap.events);
    snap.events.shrink_to_fit();
    let after_total = live() - base;
    let objects = snap.nodes.len()
        + snap.pods.len()
        + snap.pvcs.len()
        + snap.pvs.len()
        + snap.volume_attachments.len()
        + snap.events.len();
    let our_store = stores_overhead(&snap);
    let counts = (
        snap.pods.len(),
        snap.nodes.len(),
        snap.pvcs.len(),
        snap.pvs.len(),
        snap.volume_attachments.len(),
        snap.events.len(),
    );
    let after = [
        freed(std::mem::take(&mut snap.pods)),
        freed(std::mem::take(&mut snap.nodes)),
        freed(std::mem::take(&mut snap.pvcs)),
        freed(std::mem::take(&mut snap.pvs)),
        freed(std::mem::take(&mut snap.volume_attachments)),
        freed(std::mem::take(&mut snap.events)),
    ];
    println!(
        "after (slim types, {dropped} events dropped by the bound): {} live, {} bytes per pod",
        mb(after_total),
        after_total / s.pods as isize
    );
    println!(
        "  {}; {}; {}; {}; {}; {}",
        per("pods", after[0], counts.0),
        per("nodes", after[1], counts.1),
        per("pvcs", after[2], counts.2),
        per("pvs", after[3], counts.3),
        per("vas", after[4], counts.4),
        per("events", after[5], counts.5)
    );
    println!("ratio after/before: {:.3}", after_total as f64 / before_total as f64);
    println!(
        "watch stores, beyond the objects ({objects} objects): {} ({} B per object)",
        mb(our_store),
        our_store / objects as isize
    );

    // the bundle path: streamed from a file, the text never held whole
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kube.json");
    std::fs::write(&path, &text).unwrap();
    drop(text);
    let base = live();
    PEAK.store(base, Ordering::Relaxed);
    let mut snap = unstick_core::model::Snapshot::default();
    let file = std::fs::File::open(&path).unwrap();
    unstick_core::bundle::parse_kube_reader("kube.json", file, unstick_core::bundle::KUBE_HELD_MAX_BYTES, &mut snap)
        .unwrap();
    println!(
        "streamed from the file: peak {} above the start, {} live after ({} pods)",
        mb(PEAK.load(Ordering::Relaxed) - base),
        mb(live() - base),
        snap.pods.len()
    );
}
