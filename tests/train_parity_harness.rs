//! Training parity against the static seeds (`cluster seed NNN`): each seed scenario shows a
//! trainee the findings and playbooks the harness shows when statically seeded with its seed, a
//! fast check of the seeds that other fast tests use. The comparison with the incidents the real
//! controllers and node agents make (`cluster incident NNN`) runs inside each live incident test,
//! on the incident that test made (`tests/live_incidents_harness.rs`,
//! `tests/live_incidents_more_harness.rs`); what is compared and why: `tests/common/parity.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

mod common;

use common::parity::{Differences, static_seed};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the harness: tests/run-all (see tests/common/mod.rs)"]
async fn static_seeds_match_their_scenarios() {
    let h = common::harness();
    let _reseed = common::remedy::Reseed;
    for name in ["stale-lock", "lost-node-multi-attach", "dead-node-watcher", "same-node-restage"] {
        static_seed(&h, name, Differences::default()).await;
    }
    // seed 003 has no replacement pod (SEED.md: "new pod: none"); the scenario and the live incident
    // have one, blocked by Multi-Attach, which makes their unmap-busy critical
    static_seed(&h, "unmap-busy", Differences { severities: &[("unmap-busy", &["warning"])], ..Default::default() })
        .await;
}
