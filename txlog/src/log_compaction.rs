//! A log compaction file checked against the commits it covers (PROTOCOL.md "Log
//! Compaction Files").
//!
//! A whole compaction of commits `x..=y` is their action reconciliation: for each key
//! (a logical file: canonical path and deletion-vector id; a `txn` application; a domain;
//! the protocol; the metadata) the newest action of the range, `remove` tombstones
//! included, `commitInfo` and `cdc` left out. So its reconciled keys are exactly the
//! commits' reconciled keys, each with the same outcome. A compaction cut at a line
//! boundary parses and looks whole on its own ([`crate::segment::check_compaction`] cannot
//! tell) but lacks some keys; compared with the commits, it is caught. Readers use the
//! commits instead, and `verify` reports it.
//!
//! Only what a cut or a wrong writer changes is compared: which keys there are, whether a
//! file is live (`add`) or a tombstone (`remove`) and the size an `add` records, a `txn`'s
//! version, whether a domain is removed. Statistics, tags and the like may be re-encoded by
//! a compaction writer and are not compared.

use std::collections::BTreeMap;

use crate::actions::Action;
use crate::path::{TableRoot, canonical_path};

/// A reconciliation key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Protocol,
    Metadata,
    /// Canonical path, deletion-vector id.
    File(String, Option<String>),
    Txn(String),
    Domain(String),
}

/// What the newest action of a key says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Present,
    /// An `add` of this size.
    Live(i64),
    Tombstone,
    /// A `txn` at this version.
    TxnAt(i64),
    /// A domain's `removed` flag.
    Domain(bool),
}

fn key_of(root: &TableRoot, action: &Action) -> Option<(Key, Outcome)> {
    let file = |path: &str, dv: Option<String>| Key::File(canonical_path(path, root).into(), dv);
    Some(match action {
        Action::Protocol(_) => (Key::Protocol, Outcome::Present),
        Action::Metadata(_) => (Key::Metadata, Outcome::Present),
        Action::Add(a) => (
            file(&a.path, a.deletion_vector.as_deref().map(|d| d.unique_id())),
            Outcome::Live(a.size),
        ),
        Action::Remove(r) => (
            file(&r.path, r.deletion_vector.as_deref().map(|d| d.unique_id())),
            Outcome::Tombstone,
        ),
        Action::Txn(t) => (Key::Txn(t.app_id.clone()), Outcome::TxnAt(t.version)),
        Action::DomainMetadata(d) => (Key::Domain(d.domain.clone()), Outcome::Domain(d.removed)),
        Action::CommitInfo(_)
        | Action::Cdc(_)
        | Action::CheckpointMetadata(_)
        | Action::Sidecar(_) => return None,
    })
}

/// The reconciliation of actions applied in the order given (the last of a key wins).
fn reconcile<'a>(
    root: &TableRoot,
    actions: impl Iterator<Item = &'a Action>,
) -> BTreeMap<Key, Outcome> {
    let mut out = BTreeMap::new();
    for a in actions {
        if let Some((k, o)) = key_of(root, a) {
            out.insert(k, o);
        }
    }
    out
}

fn describe(k: &Key) -> String {
    match k {
        Key::Protocol => "the protocol".into(),
        Key::Metadata => "the metaData".into(),
        Key::File(p, None) => format!("file {p}"),
        Key::File(p, Some(dv)) => format!("file {p} (deletion vector {dv})"),
        Key::Txn(app) => format!("the txn of application {app}"),
        Key::Domain(d) => format!("domain {d}"),
    }
}

/// Most keys named in one disagreement.
const EXAMPLES: usize = 3;

/// Whether the compaction's actions (`compaction`, as the file lists them: the first action
/// of a key wins, as replay applies a compaction) reconcile to what the commits it covers
/// (`commits`, in version order) reconcile to.
///
/// # Errors
/// One line saying how they differ: the counts of reconciled keys, the keys only one side
/// has and the keys whose outcome differs, a few of each named.
pub fn compare_with_commits<'a>(
    root: &TableRoot,
    compaction: &[Action],
    commits: impl IntoIterator<Item = &'a [Action]>,
) -> Result<(), String> {
    let from_commits = reconcile(root, commits.into_iter().flatten());
    let from_compaction = reconcile(root, compaction.iter().rev());
    if from_commits == from_compaction {
        return Ok(());
    }
    let names = |keys: Vec<&Key>| -> String {
        let mut shown: Vec<String> = keys.iter().take(EXAMPLES).map(|k| describe(k)).collect();
        if keys.len() > EXAMPLES {
            shown.push("...".into());
        }
        shown.join(", ")
    };
    let missing: Vec<&Key> = from_commits
        .keys()
        .filter(|k| !from_compaction.contains_key(*k))
        .collect();
    let extra: Vec<&Key> = from_compaction
        .keys()
        .filter(|k| !from_commits.contains_key(*k))
        .collect();
    let differ: Vec<&Key> = from_commits
        .iter()
        .filter(|(k, o)| from_compaction.get(*k).is_some_and(|c| c != *o))
        .map(|(k, _)| k)
        .collect();
    let mut parts = vec![format!(
        "it reconciles to {} key(s), its commits to {}",
        from_compaction.len(),
        from_commits.len()
    )];
    if !missing.is_empty() {
        parts.push(format!(
            "{} missing from it ({})",
            missing.len(),
            names(missing)
        ));
    }
    if !extra.is_empty() {
        parts.push(format!(
            "{} not in its commits ({})",
            extra.len(),
            names(extra)
        ));
    }
    if !differ.is_empty() {
        parts.push(format!(
            "{} with another outcome ({})",
            differ.len(),
            names(differ)
        ));
    }
    Err(parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{Add, Remove, SetTransaction};

    fn add(path: &str, size: i64) -> Action {
        Action::Add(Add::builder(path, size, 1).build())
    }

    fn remove(path: &str) -> Action {
        Action::Remove(Remove::from_add(
            &Add::builder(path, 1, 1).build(),
            10,
            true,
        ))
    }

    fn txn(app: &str, version: i64) -> Action {
        Action::Txn(SetTransaction {
            app_id: app.into(),
            version,
            last_updated: None,
        })
    }

    #[test]
    fn a_whole_reconciliation_agrees_and_a_cut_one_does_not() {
        let root = TableRoot::new("file:///t");
        let commits = [
            vec![add("a", 1), add("b", 2), txn("app", 1)],
            vec![remove("a"), add("c", 3), txn("app", 2)],
        ];
        // Newest first, as writers list them; the tombstone of `a` is kept.
        let whole = vec![txn("app", 2), add("c", 3), remove("a"), add("b", 2)];
        assert_eq!(
            compare_with_commits(&root, &whole, commits.iter().map(Vec::as_slice)),
            Ok(())
        );
        // Every spelling of a path is one file.
        let spelled = vec![txn("app", 2), add("c", 3), remove("/t/a"), add("b", 2)];
        assert_eq!(
            compare_with_commits(&root, &spelled, commits.iter().map(Vec::as_slice)),
            Ok(())
        );
        // Cut after its second line.
        let e = compare_with_commits(&root, &whole[..2], commits.iter().map(Vec::as_slice))
            .unwrap_err();
        assert!(e.contains("2 key(s), its commits to 4"), "{e}");
        assert!(e.contains("missing from it (file a, file b)"), "{e}");
        // A stale txn version and a resized file.
        let wrong = vec![txn("app", 1), add("c", 4), remove("a"), add("b", 2)];
        let e = compare_with_commits(&root, &wrong, commits.iter().map(Vec::as_slice)).unwrap_err();
        assert!(e.contains("2 with another outcome"), "{e}");
    }
}
