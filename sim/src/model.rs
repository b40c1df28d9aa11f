//! What the actors were told: the model the oracle checks the table against. It is built
//! from the answers the engine gave (acknowledged, definitely failed, unknown), never from
//! the engine's code.

use std::collections::{BTreeMap, BTreeSet};

use crate::actors::Outcome;

/// What is known about one row id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Row {
    /// Its append is under way (a stop now leaves it unknown).
    Pending,
    /// Inserted by an acknowledged write: present exactly once, unless deleted.
    Acked,
    /// Inserted by a write whose outcome is unknown: present at most once.
    Unknown,
    /// Its write definitely failed: absent.
    Failed,
    /// Deleted by an acknowledged DELETE: absent for ever.
    Deleted,
    /// A DELETE of it has an unknown outcome: present at most once.
    MaybeDeleted,
}

/// One application's (`appId`'s) transaction versions.
#[derive(Debug, Clone, Default)]
pub(crate) struct App {
    /// The last acknowledged version.
    pub(crate) acked: Option<i64>,
    /// Versions after it whose outcome is unknown.
    pub(crate) unknown: Vec<i64>,
}

/// The shared model of one run.
#[derive(Debug, Default)]
pub(crate) struct Model {
    pub(crate) rows: BTreeMap<i64, Row>,
    pub(crate) apps: BTreeMap<String, App>,
    /// The values each row may hold (one unless an outcome was unknown).
    pub(crate) values: BTreeMap<i64, BTreeSet<i64>>,
    /// What readers saw: (version, sorted rows).
    pub(crate) reads: Vec<(u64, Vec<(i64, i64)>)>,
    /// The last version each multi-threaded application (the group's) handed out.
    pub(crate) next_versions: BTreeMap<String, i64>,
    /// The events the state actor put, in the order it put them, with their puts' outcomes.
    pub(crate) kv: Vec<crate::kv::KvEvent>,
    /// How many state puts and syncs ended how.
    pub(crate) kv_counts: crate::kv::KvCounts,
}

impl Model {
    pub(crate) fn set(&mut self, ids: &[i64], to: Row) {
        for id in ids {
            self.rows.insert(*id, to);
        }
    }

    /// The value rows `ids` are inserted with.
    pub(crate) fn set_value(&mut self, ids: &[i64], v: i64) {
        for id in ids {
            self.values.insert(*id, BTreeSet::from([v]));
        }
    }

    /// An UPDATE or MERGE of row `id` that maps its value with `f` ended with `outcome`.
    pub(crate) fn apply(&mut self, id: i64, outcome: Outcome, f: impl Fn(i64) -> i64) {
        let Some(values) = self.values.get_mut(&id) else {
            return;
        };
        let mapped: BTreeSet<i64> = values.iter().map(|v| f(*v)).collect();
        match outcome {
            Outcome::Acked => *values = mapped,
            Outcome::Unknown => values.extend(mapped),
            Outcome::Failed => {}
        }
    }

    /// Marks unknown what is still pending (a stopped run).
    pub(crate) fn settle_pending(&mut self) {
        for e in &mut self.kv {
            if e.outcome.is_none() {
                e.outcome = Some(Outcome::Unknown);
            }
        }
        for r in self.rows.values_mut() {
            if *r == Row::Pending {
                *r = Row::Unknown;
            }
        }
    }

    /// Ids an acknowledged write inserted and no DELETE touched.
    pub(crate) fn acked_ids(&self) -> Vec<i64> {
        self.rows
            .iter()
            .filter(|(_, r)| **r == Row::Acked)
            .map(|(id, _)| *id)
            .collect()
    }

    /// The next version of `app`, whose threads draw their versions from this one counter.
    pub(crate) fn next_app_version(&mut self, app: &str) -> i64 {
        let n = self.next_versions.entry(app.to_string()).or_insert(0);
        *n += 1;
        *n
    }

    pub(crate) fn app_acked(&mut self, app: &str, version: i64) {
        let a = self.apps.entry(app.to_string()).or_default();
        a.acked = Some(a.acked.map_or(version, |v| v.max(version)));
        a.unknown.retain(|v| *v > version);
    }

    pub(crate) fn app_unknown(&mut self, app: &str, version: i64) {
        let a = self.apps.entry(app.to_string()).or_default();
        if !a.unknown.contains(&version) {
            a.unknown.push(version);
        }
    }
}
