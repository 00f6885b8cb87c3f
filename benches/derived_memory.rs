//! Memory of what the console derives from the model (issue 13), measured with a counting global
//! allocator: bytes live of each structure built over the generated cluster of
//! `support/kube_list.rs` (parsed into the slim types, events bounded as the console keeps them):
//! the lineage, the rules' indexes (`diagnose::Index`, and per kind), the Events pane's index,
//! the Events `Bounder`'s state after a list, the findings and the diagnosis kept between
//! changes, and the whole app after its first snapshot.
//!
//! ```text
//! cargo bench --bench derived_memory                    # 10k pods / 500 nodes / 2k volumes / 5k events
//! cargo bench --bench derived_memory -- 50000 2500 10000 10000
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark fails by panicking")]

#[path = "support/counting.rs"]
mod counting;
#[path = "support/kube_list.rs"]
mod kube_list;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use counting::{Counting, PEAK, freed, live, mb};
use kube::runtime::watcher::Event as WEvent;
use kube_list::{NOW, Shape, generate};
use unstick::theme::Theme;
use unstick::ui::app::{App, Msg};
use unstick_core::config::Config;
use unstick_core::diagnose::{Diagnosis, Index};
use unstick_core::lineage::Lineage;
use unstick_core::model::Snapshot;
use unstick_core::model::event_bound::{Bounder, bound};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Builds `f()`, prints the bytes it holds (and the peak above the start while building, when
/// larger), returns it.
fn show<T>(name: &str, per: usize, f: impl FnOnce() -> T) -> T {
    let base = live();
    PEAK.store(base, Ordering::Relaxed);
    let v = f();
    let (held, peak) = (live() - base, PEAK.load(Ordering::Relaxed) - base);
    let peak = if peak > held + 100_000 { format!(", peak {} while building", mb(peak)) } else { String::new() };
    println!("  {name:<48} {:>9} ({} B per pod){peak}", mb(held), held / per.max(1) as isize);
    v
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let n = |i: usize, d: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let pods = n(0, 10_000);
    let s = Shape { pods, nodes: n(1, pods / 20), volumes: n(2, pods / 5), events: n(3, pods / 2), troubled: 40 };
    let now = jiff::Timestamp::from_second(NOW).unwrap();
    let text = generate(&s);
    let mut snap = Snapshot::default();
    unstick_core::bundle::parse_kube("kube.json", &text, &mut snap).unwrap();
    drop(text);
    let listed: Vec<_> = snap.events.iter().map(|e| (**e).clone()).collect();
    let dropped = bound(&mut snap.events);
    snap.events.shrink_to_fit();
    snap.taken_at = Some(now);
    println!(
        "shape: {} pods / {} nodes / {} PVC+PV+VA / {} events listed, {} kept ({dropped} dropped by the bound)",
        s.pods,
        s.nodes,
        s.volumes,
        listed.len(),
        snap.events.len()
    );
    let per = s.pods;
    let cfg = Config::defaults().diagnose;
    println!("bytes live of each structure, built alone over that snapshot:");
    let lin = show("Lineage::build", per, || Lineage::build(&snap));
    let idx = show("diagnose::Index::build (all kinds)", per, || Index::build(&snap));
    let part = |f: fn(&Snapshot, &mut Snapshot)| {
        let mut p = Snapshot { taken_at: snap.taken_at, ..Default::default() };
        f(&snap, &mut p);
        p
    };
    for (name, p) in [
        ("  of which pods", part(|s, p| p.pods = s.pods.clone())),
        ("  of which nodes", part(|s, p| p.nodes = s.nodes.clone())),
        ("  of which events (digests, by object, scanned)", part(|s, p| p.events = s.events.clone())),
        ("  of which VolumeAttachments", part(|s, p| p.volume_attachments = s.volume_attachments.clone())),
    ] {
        drop(show(name, per, || Index::build(&p)));
    }
    let digests = show("  the EventView digests alone (in a Vec)", per, || {
        snap.events.iter().map(unstick_core::diagnose::events::EventView::of).collect::<Vec<_>>()
    });
    println!(
        "    ({} B each, {} B of it inline)",
        freed(digests) / snap.events.len().max(1) as isize,
        size_of::<unstick_core::diagnose::events::EventView>()
    );
    drop(show("Bounder after a list of every event", per, || {
        let mut b = Bounder::default();
        b.on(WEvent::Init);
        for e in &listed {
            b.on(WEvent::InitApply(e.clone()));
        }
        drop(b.on(WEvent::InitDone));
        b
    }));
    let mut d = Diagnosis::default();
    let found = show("findings of Diagnosis::all (+ its state)", per, || d.all(&snap, &lin, &idx, &cfg, now));
    println!("  ({} findings)", found.len());
    drop((found, d, idx, lin));
    let mut cfg = Config::defaults();
    cfg.ceph.scan_on_start = false;
    let app = show("the console's App after the first snapshot", per, || {
        let mut a = App::new(cfg, Theme::monochrome(), "bench".into(), None, true, now);
        a.update(Msg::Objects(Box::new(Snapshot { ceph: Default::default(), ..snap.clone() })));
        a
    });
    let pointers = (snap.nodes.len()
        + snap.pods.len()
        + snap.pvcs.len()
        + snap.pvs.len()
        + snap.volume_attachments.len()
        + snap.events.len())
        * size_of::<Arc<()>>();
    println!(
        "  (of which {} the snapshot's pointer lists; {} findings)",
        mb(pointers as isize),
        app.data.findings.len()
    );
}
