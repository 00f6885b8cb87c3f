//! Training on an embedded scenario: the console runs unchanged on a [`Sim`]; this module holds
//! what only training adds: the briefing, goals checked on the simulation's full state, hints that
//! unlock over simulated time, and the [`debrief::Debrief`] at the end.

pub mod debrief;

use std::path::PathBuf;

use jiff::Timestamp;

use crate::clock::SharedClock;
use crate::config::DiagnoseConfig;
use crate::remedy::journal::StepType;
use crate::remedy::run::StepState;
use crate::sources::sim::Sim;
use crate::sources::sim::scenario::{GoalSpec, Scenario};

/// Where the trainee is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// The briefing screen; simulated time is stopped.
    Briefing,
    /// Working on the incident.
    Running,
    /// Every goal met: the debrief is shown.
    Debrief(Box<debrief::Debrief>),
}

/// A playbook step as the console last saw it (for the debrief).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepSeen {
    /// Incident id + step id (`<incident>/stale-lock/3`).
    pub id: String,
    /// Step kind.
    pub kind: StepType,
    /// Step title.
    pub title: String,
    /// Its state.
    pub state: StepState,
    /// Real time the state was first seen.
    pub at: Timestamp,
}

/// Training state of the console.
pub struct Training {
    /// The scenario.
    pub scenario: Scenario,
    /// Its simulation.
    pub sim: Sim,
    /// Briefing, running or debrief.
    pub phase: Phase,
    /// Real and simulated time when the briefing was closed.
    pub started: Option<(Timestamp, Timestamp)>,
    /// Each goal's state at the last check.
    pub goals: Vec<bool>,
    /// Hints unlocked so far.
    pub unlocked: usize,
    /// Hints the trainee has looked at (`h`).
    pub hints_read: usize,
    /// The "hint unlocked" banner last put in the console's notice line (cleared from it by `h`).
    pub hint_notice: Option<String>,
    /// Refusals and failures of attempted actions: `(real time, why)`.
    pub refused: Vec<(Timestamp, crate::remedy::run::refusal::Refusal)>,
    /// Playbook steps seen.
    pub seen: Vec<StepSeen>,
    /// The incident journals of this training session.
    pub journal_base: PathBuf,
    /// When the next goal check may run (see [`GOAL_CHECK_SHARE`]); `None`: at once.
    next_goal_check: Option<std::time::Instant>,
    /// Real time, the trainee's (the journal's and the session log's clock); the simulation keeps
    /// its own.
    wall: SharedClock,
}

/// A goal check (a full snapshot, lineage and diagnosis of the simulation, on the UI task) that
/// took longer than this is followed by a pause of [`GOAL_CHECK_SHARE`] times its cost, so a
/// 10k-node scenario keeps the console answering keys; small scenarios check on every tick.
pub const GOAL_CHECK_FREE: std::time::Duration = std::time::Duration::from_millis(20);

/// How many times its own cost the console waits after an expensive goal check.
pub const GOAL_CHECK_SHARE: u32 = 4;

impl Training {
    /// A training session on `sim` (built from `scenario` with speed 0: time starts when the
    /// briefing is closed), journaling under `journal_base`; real times (start, finish, refusals,
    /// steps seen) are read from `wall`.
    pub fn new(scenario: Scenario, sim: Sim, journal_base: PathBuf, wall: SharedClock) -> Self {
        let goals = vec![false; scenario.goals.len()];
        Training {
            scenario,
            sim,
            phase: Phase::Briefing,
            started: None,
            goals,
            unlocked: 0,
            hints_read: 0,
            hint_notice: None,
            refused: vec![],
            seen: vec![],
            journal_base,
            wall,
            next_goal_check: None,
        }
    }

    /// Checks the goals unless an expensive check ran too recently; returns whether it checked.
    fn recheck_goals(&mut self, cfg: &DiagnoseConfig) -> bool {
        let start = std::time::Instant::now();
        if self.next_goal_check.is_some_and(|t| start < t) {
            return false;
        }
        self.goals = goals_met(&self.sim, &self.scenario.goals, cfg);
        let cost = start.elapsed();
        self.next_goal_check = (cost > GOAL_CHECK_FREE).then(|| start + cost + cost * GOAL_CHECK_SHARE);
        true
    }

    /// Something the trainee did may have changed the goals (a remediation answer arrived): the
    /// next goal check runs at once, whatever the throttle after an expensive one says.
    pub fn goals_may_have_changed(&mut self) {
        self.next_goal_check = None;
    }

    /// Now in real time (the trainee's clock, not the simulation's).
    pub fn wall_now(&self) -> Timestamp {
        self.wall.now()
    }

    /// Closes the briefing: simulated time starts running at the scenario's speed.
    pub fn begin(&mut self, speed: f64) {
        if self.phase != Phase::Briefing {
            return;
        }
        self.sim.set_speed(speed);
        self.started = Some((self.wall.now(), self.sim.now()));
        self.phase = Phase::Running;
    }

    /// Simulated seconds since the start.
    pub fn elapsed_sim(&self) -> i64 {
        self.started.map(|(_, s)| (self.sim.now() - s).get_seconds()).unwrap_or(0)
    }

    /// Unlocks hints whose time has come; true when a new one unlocked.
    pub fn unlock_hints(&mut self) -> bool {
        let t = self.elapsed_sim();
        let n = self.scenario.hints.iter().filter(|h| h.after.0 <= t).count();
        let new = n > self.unlocked;
        self.unlocked = self.unlocked.max(n);
        new
    }

    /// Re-checks the goals on the simulation (or keeps the last result while an expensive check
    /// pauses, see [`GOAL_CHECK_FREE`]); true when all hold (the debrief is not opened).
    pub fn goals_hold(&mut self, cfg: &DiagnoseConfig) -> bool {
        self.recheck_goals(cfg);
        self.goals.iter().all(|g| *g)
    }

    /// Re-checks the goals on the simulation (not while an expensive check pauses); when all hold,
    /// computes the debrief and returns true.
    pub fn check(&mut self, cfg: &DiagnoseConfig) -> bool {
        if self.phase != Phase::Running {
            return false;
        }
        if !self.recheck_goals(cfg) || !self.goals.iter().all(|g| *g) {
            return false;
        }
        let (started, _) = self.started.unwrap_or((self.wall.now(), self.sim.now()));
        let d = debrief::debrief(debrief::Input {
            scenario: &self.scenario,
            started,
            finished: self.wall.now(),
            sim_seconds: self.elapsed_sim(),
            hints_unlocked: self.unlocked,
            journals: debrief::journals(&self.journal_base),
            seen: self.seen.clone(),
            refused: self.refused.clone(),
        });
        self.phase = Phase::Debrief(Box::new(d));
        true
    }

    /// Notes a playbook step's state (first time it is seen in that state).
    pub fn saw_step(&mut self, id: String, kind: StepType, title: &str, state: &StepState) {
        if let Some(s) = self.seen.iter_mut().find(|s| s.id == id) {
            if s.state != *state {
                s.state = state.clone();
                s.at = self.wall.now();
            }
            return;
        }
        self.seen.push(StepSeen { id, kind, title: title.into(), state: state.clone(), at: self.wall.now() });
    }

    /// The debrief, once every goal is met.
    pub fn debrief(&self) -> Option<&debrief::Debrief> {
        match &self.phase {
            Phase::Debrief(d) => Some(d),
            _ => None,
        }
    }
}

/// Which goals hold on the simulation's full state now.
pub fn goals_met(sim: &Sim, goals: &[GoalSpec], cfg: &DiagnoseConfig) -> Vec<bool> {
    let w = sim.world();
    let now = w.clock.now();
    let snap = w.snapshot();
    drop(w);
    let blocklist = snap.ceph.blocklist.as_ref().and_then(|b| b.value.as_ref().ok()).cloned().unwrap_or_default();
    let lin = crate::lineage::Lineage::build(&snap);
    let findings = crate::diagnose::run(&snap, &lin, cfg, now);
    goals
        .iter()
        .map(|g| {
            if let Some(p) = &g.pod_running {
                let (ns, prefix) = p.split_once('/').unwrap_or(("", p));
                snap.pods.iter().any(|pod| {
                    pod.metadata.namespace.as_deref() == Some(ns)
                        && pod.metadata.name.as_deref().is_some_and(|n| n.starts_with(prefix))
                        && pod.metadata.deletion_timestamp.is_none()
                        && pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                })
            } else if let Some(p) = &g.finding_gone {
                let p = crate::remedy::playbook::pattern_of(p).unwrap_or(p);
                !findings.iter().any(|f| f.pattern.to_string() == p)
            } else if let Some(node) = &g.node_unfenced {
                let ips = snap
                    .nodes
                    .iter()
                    .filter(|n| n.metadata.name.as_deref() == Some(node))
                    .flat_map(|n| crate::model::kube::internal_ips(n))
                    .collect::<Vec<_>>();
                !blocklist.iter().any(|b| ips.iter().any(|ip| b.covers_whole_host(*ip)))
            } else {
                false
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
