//! Log checks of `verify`: contiguity, every commit parses, every checkpoint reads back and
//! equals the replay of its commits (and every other complete form of its version equals
//! it), every log compaction is whole and (while its commits
//! exist) agrees with them, and `_last_checkpoint` tells the truth. The commits' `cdc`
//! actions are gathered on the way for the change-data check.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use alluvium_storage::ObjectStore;
use alluvium_txlog::LogError;
use alluvium_txlog::actions::{Action, Cdc, Metadata};
use alluvium_txlog::checkpoint::{
    CheckpointFiles, LAST_CHECKPOINT_LIMIT, LastCheckpointHint, json_checksum, read_checkpoint,
};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_compaction::compare_with_commits;
use alluvium_txlog::log_path::{
    CheckpointKind, LAST_CHECKPOINT, LogFile, LogFileKind, Version, log_path,
};
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::replay::{Replay, TableState};
use alluvium_txlog::segment::{
    check_compaction, checkpoint_forms, complete_checkpoints, list_log_from,
};
use alluvium_txlog::table::TableFeature;
use serde_json::Value;

use super::{Finding, FindingKind, VerifyReport};
use crate::Result;

/// Most differing files named in one checkpoint-mismatch finding.
const EXAMPLES: usize = 3;

/// What one checkpoint held, for checking `_last_checkpoint` against it.
struct CheckpointCounts {
    actions: usize,
    adds: usize,
    /// The table uses V2 checkpoints: a checkpoint may carry sidecars (even one with a
    /// classic name), whose own actions and sizes writers count differently.
    v2: bool,
}

/// A `cdc` action of a commit, with the commit's version and time (its in-commit
/// timestamp, else the file's modification time).
pub(super) struct ChangeDataRef {
    pub version: Version,
    pub commit_ms: i64,
    pub cdc: Cdc,
}

/// What the log check learnt for the later checks.
pub(super) struct LogFacts {
    /// The version checked.
    pub version: Version,
    /// The `cdc` actions of the commits up to it that parsed.
    pub change_data: Vec<ChangeDataRef>,
}

/// Checks the log up to `target` (the latest version when `None`) and returns the version
/// checked with the commits' change-data references.
pub(super) fn check_log(
    store: &dyn ObjectStore,
    target: Option<u64>,
    report: &mut VerifyReport,
) -> Result<LogFacts> {
    let listing = list_log_from(store, 0)?;
    let commits: BTreeMap<Version, &LogFile> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| (f.version, f))
        .collect();
    let checkpoints = complete_checkpoints(&listing);
    let Some(latest) = commits
        .keys()
        .next_back()
        .copied()
        .max(checkpoints.keys().next_back().copied())
    else {
        return Err(LogError::TableNotFound {
            location: store.root_uri(),
        }
        .into());
    };
    let end = match target {
        Some(t) if t > latest => {
            return Err(LogError::VersionNotFound {
                version: t,
                reason: format!("the latest version is {latest}"),
            }
            .into());
        }
        Some(t) => t,
        None => latest,
    };
    check_contiguous(&commits, &checkpoints, end, report);
    check_incomplete_checkpoints(&listing, &checkpoints, end, report);
    let mut change_data = Vec::new();
    let checked = Checkpoints {
        preferred: &checkpoints,
        others: other_forms(&listing, &checkpoints),
    };
    let counts =
        check_commits_and_checkpoints(store, &commits, &checked, end, report, &mut change_data);
    check_compactions(store, &listing, &commits, end, report);
    if target.is_none() {
        check_last_checkpoint(store, &listing, &checkpoints, &counts, latest, report);
    }
    Ok(LogFacts {
        version: end,
        change_data,
    })
}

/// Reads a commit (or compaction) file and decodes its actions.
fn read_actions(
    store: &dyn ObjectStore,
    f: &LogFile,
) -> std::result::Result<Vec<Action>, LogError> {
    store
        .get(&f.meta.path)
        .map_err(LogError::from)
        .and_then(|bytes| decode_commit(f.meta.path.as_str(), &bytes))
}

/// Reads every log compaction file up to `end`: one that does not parse or is not whole
/// ([`check_compaction`]) is reported unreadable; one whose commits are all listed and
/// readable is compared with them ([`compare_with_commits`]), as readers compare it.
/// Readers replay the commits instead of either, so the table reads right; but the file
/// is damage, and would be trusted once its commits were cleaned up by another engine.
fn check_compactions(
    store: &dyn ObjectStore,
    listing: &[LogFile],
    commits: &BTreeMap<Version, &LogFile>,
    end: Version,
    report: &mut VerifyReport,
) {
    let root = TableRoot::new(store.root_uri());
    for f in listing {
        let LogFileKind::Compaction { end: last } = f.kind else {
            continue;
        };
        if last > end {
            continue;
        }
        report.compactions_checked += 1;
        let location = f.meta.path.as_str();
        let actions = match read_actions(store, f).and_then(|a| check_compaction(f, &a).map(|()| a))
        {
            Ok(a) => a,
            Err(e) => {
                report.findings.push(Finding::new(
                    FindingKind::UnreadableCompaction,
                    location,
                    e.to_string(),
                ));
                continue;
            }
        };
        let covered: Option<Vec<Vec<Action>>> = (f.version..=last)
            .map(|v| commits.get(&v).and_then(|c| read_actions(store, c).ok()))
            .collect();
        // With a commit gone (or unreadable, reported as such) there is nothing to compare.
        let Some(covered) = covered else {
            continue;
        };
        if let Err(why) = compare_with_commits(&root, &actions, covered.iter().map(Vec::as_slice)) {
            report.findings.push(Finding::new(
                FindingKind::CompactionMismatch,
                location,
                format!(
                    "disagrees with commits {} to {last} (readers use the commits): {why}",
                    f.version
                ),
            ));
        }
    }
}

/// Reports each run of missing versions up to `end` that no checkpoint at or above its end
/// stands in for. A missing prefix or gap below a checkpoint is what log cleanup leaves
/// behind (the versions are gone, the table is whole); anything else makes every later
/// version unreadable.
fn check_contiguous(
    commits: &BTreeMap<Version, &LogFile>,
    checkpoints: &BTreeMap<Version, CheckpointFiles>,
    end: Version,
    report: &mut VerifyReport,
) {
    let present: BTreeSet<Version> = commits.range(..=end).map(|(v, _)| *v).collect();
    let mut runs: Vec<(Version, Version)> = Vec::new();
    let mut next = 0;
    for &v in &present {
        if v > next {
            runs.push((next, v - 1));
        }
        next = v + 1;
    }
    if next <= end {
        runs.push((next, end));
    }
    for (first, last) in runs {
        if checkpoints.range(last..=end).next().is_some() {
            continue;
        }
        let what = if first == last {
            format!("version {first} is missing")
        } else {
            format!("versions {first} to {last} are missing")
        };
        report.findings.push(Finding::new(
            FindingKind::NonContiguousLog,
            "_delta_log",
            format!("{what} and no checkpoint at or above version {last} stands in for them"),
        ));
    }
}

/// Reports checkpoint files of versions that have no complete checkpoint (parts missing or
/// empty).
fn check_incomplete_checkpoints(
    listing: &[LogFile],
    checkpoints: &BTreeMap<Version, CheckpointFiles>,
    end: Version,
    report: &mut VerifyReport,
) {
    let mut seen = BTreeSet::new();
    for f in listing {
        if matches!(f.kind, LogFileKind::Checkpoint(_))
            && f.version <= end
            && !checkpoints.contains_key(&f.version)
            && seen.insert(f.version)
        {
            report.findings.push(Finding::new(
                FindingKind::UnreadableCheckpoint,
                f.meta.path.as_str(),
                format!(
                    "the checkpoint of version {} is incomplete (a part is missing or empty)",
                    f.version
                ),
            ));
        }
    }
}

/// The complete checkpoints of each version: the form readers use, and the other complete
/// forms beside it (a rerun or a killed `checkpoint` leaves a classic and a multi-part one
/// of one version). Another engine may prefer another form, so each must hold the same
/// state.
struct Checkpoints<'a> {
    preferred: &'a BTreeMap<Version, CheckpointFiles>,
    others: BTreeMap<Version, Vec<CheckpointFiles>>,
}

/// Every complete checkpoint form of each version other than the preferred one
/// ([`checkpoint_forms`] after its first).
fn other_forms(
    listing: &[LogFile],
    preferred: &BTreeMap<Version, CheckpointFiles>,
) -> BTreeMap<Version, Vec<CheckpointFiles>> {
    preferred
        .keys()
        .filter_map(|&v| {
            let others: Vec<CheckpointFiles> =
                checkpoint_forms(listing, v).into_iter().skip(1).collect();
            (!others.is_empty()).then_some((v, others))
        })
        .collect()
}

/// The name of a checkpoint form, for findings (`classic`, `3-part`, `UUID-named`).
fn form_name(kind: &CheckpointKind) -> String {
    match kind {
        CheckpointKind::Classic => "classic".into(),
        CheckpointKind::MultiPart { parts, .. } => format!("{parts}-part"),
        CheckpointKind::Uuid { .. } => "UUID-named".into(),
    }
}

/// Reads the checkpoint `cp` into what it held (its actions and `add` actions counted,
/// `v2` left false) and the state it describes, or the finding that says why it cannot be
/// read.
fn checkpoint_state(
    store: &dyn ObjectStore,
    root: &TableRoot,
    cp: &CheckpointFiles,
) -> std::result::Result<(CheckpointCounts, TableState), Finding> {
    let location = cp.files.first().map_or_else(
        || format!("checkpoint {}", cp.version),
        |m| m.path.to_string(),
    );
    let unreadable =
        |e: LogError| Finding::new(FindingKind::UnreadableCheckpoint, &location, e.to_string());
    let actions = read_checkpoint(store, cp).map_err(unreadable)?;
    let held = CheckpointCounts {
        actions: actions.len(),
        adds: actions
            .iter()
            .filter(|a| matches!(a, Action::Add(_)))
            .count(),
        v2: false,
    };
    let mut replay = Replay::new(root.clone());
    replay.apply_all(actions);
    let state = replay.finish(cp.version).map_err(unreadable)?;
    Ok((held, state))
}

/// Reads every complete checkpoint form of one version, `preferred` first then `others`,
/// and reports each that cannot be read or whose state differs from the form readers use
/// (the first that reads, as the loader falls back). Returns that form, what it held and
/// its state; `None` when no form reads.
fn check_forms<'a>(
    store: &dyn ObjectStore,
    root: &TableRoot,
    preferred: &'a CheckpointFiles,
    others: &'a [CheckpointFiles],
    report: &mut VerifyReport,
) -> Option<(&'a CheckpointFiles, CheckpointCounts, TableState)> {
    let mut used: Option<(&CheckpointFiles, CheckpointCounts, TableState)> = None;
    for cp in std::iter::once(preferred).chain(others) {
        report.checkpoints_checked += 1;
        let (held, state) = match checkpoint_state(store, root, cp) {
            Ok(read) => read,
            Err(finding) => {
                report.findings.push(finding);
                continue;
            }
        };
        let Some((first, _, first_state)) = &used else {
            used = Some((cp, held, state));
            continue;
        };
        let differences = differences(&state, first_state);
        if !differences.is_empty() {
            report.findings.push(Finding::new(
                FindingKind::CheckpointMismatch,
                cp.files.first().map_or_else(String::new, |m| m.path.to_string()),
                format!(
                    "the {} checkpoint of version {} differs from the {} one readers here use (another engine may prefer it): {}",
                    form_name(&cp.kind),
                    cp.version,
                    form_name(&first.kind),
                    differences.join("; ")
                ),
            ));
        }
    }
    used
}

/// Parses every commit up to `end`, replaying them from version 0 while they are all
/// present and readable, and reads every checkpoint up to `end`, comparing it with that
/// replay at its version, and every other complete form of a checkpoint's version with it.
/// Returns what each readable checkpoint held.
fn check_commits_and_checkpoints(
    store: &dyn ObjectStore,
    commits: &BTreeMap<Version, &LogFile>,
    all: &Checkpoints<'_>,
    end: Version,
    report: &mut VerifyReport,
    change_data: &mut Vec<ChangeDataRef>,
) -> HashMap<Version, CheckpointCounts> {
    let root = TableRoot::new(store.root_uri());
    let checkpoints = all.preferred;
    let mut counts = HashMap::new();
    // The replay of versions 0..next, while every commit so far was present and parsed.
    let mut replay = commits.contains_key(&0).then(|| Replay::new(root.clone()));
    let mut next: Version = 0;
    let versions: BTreeSet<Version> = commits
        .range(..=end)
        .map(|(v, _)| *v)
        .chain(checkpoints.range(..=end).map(|(v, _)| *v))
        .collect();
    for v in versions {
        if let Some(f) = commits.get(&v) {
            report.commits_checked += 1;
            let parsed = read_actions(store, f);
            if let Ok(actions) = &parsed {
                let commit_ms = actions
                    .iter()
                    .find_map(|a| match a {
                        Action::CommitInfo(ci) => ci.in_commit_timestamp(),
                        _ => None,
                    })
                    .unwrap_or(f.meta.last_modified_ms);
                change_data.extend(actions.iter().filter_map(|a| match a {
                    Action::Cdc(c) => Some(ChangeDataRef {
                        version: v,
                        commit_ms,
                        cdc: c.clone(),
                    }),
                    _ => None,
                }));
            }
            match parsed {
                Ok(actions) if v == next => {
                    if let Some(r) = replay.as_mut() {
                        r.apply_all(actions);
                    }
                    next = v + 1;
                }
                Ok(_) => replay = None,
                Err(e) => {
                    replay = None;
                    report.findings.push(Finding::new(
                        FindingKind::UnreadableCommit,
                        f.meta.path.as_str(),
                        e.to_string(),
                    ));
                }
            }
        } else {
            replay = None;
        }
        let Some(preferred) = checkpoints.get(&v) else {
            continue;
        };
        let others = all.others.get(&v).map_or(&[][..], Vec::as_slice);
        // The form readers use: the preferred one, or (that one unreadable) the first other
        // form that reads, as the loader falls back.
        let Some((cp, mut held, checkpoint_state)) =
            check_forms(store, &root, preferred, others, report)
        else {
            continue;
        };
        let location = cp
            .files
            .first()
            .map_or_else(|| format!("checkpoint {v}"), |m| m.path.to_string());
        held.v2 = checkpoint_state
            .protocol()
            .supports_reader_feature(&TableFeature::V2Checkpoint);
        // `_last_checkpoint` is checked against what the preferred form held.
        if cp.files == preferred.files {
            counts.insert(v, held);
        }
        // Compare only where the commits up to the checkpoint are all still there.
        let Some(r) = replay.take().filter(|_| next == v + 1) else {
            continue;
        };
        match r.finish(v) {
            Ok(replayed) => {
                report.checkpoints_compared += 1;
                let differences = differences(&checkpoint_state, &replayed);
                if !differences.is_empty() {
                    report.findings.push(Finding::new(
                        FindingKind::CheckpointMismatch,
                        location,
                        format!(
                            "differs from the replay of commits 0 to {v}: {}",
                            differences.join("; ")
                        ),
                    ));
                }
                replay = Some(Replay::from_state(replayed));
            }
            // The commits themselves lack a protocol or metadata: nothing to compare with
            // (version 0 without them is reported by the snapshot load).
            Err(_) => replay = None,
        }
    }
    counts
}

/// How a checkpoint's state differs from the replayed one (empty if it does not).
fn differences(checkpoint: &TableState, replayed: &TableState) -> Vec<String> {
    let mut out = Vec::new();
    if checkpoint.protocol() != replayed.protocol() {
        out.push("protocol differs".to_string());
    }
    let (m, r) = (checkpoint.metadata(), replayed.metadata());
    let same_schema = same_json(&m.schema_string, &r.schema_string);
    if m != r
        && !(same_schema
            && Metadata {
                schema_string: r.schema_string.clone(),
                ..m.clone()
            } == *r)
    {
        let fields: Vec<&str> = [
            ("id", m.id != r.id),
            ("name", m.name != r.name),
            ("description", m.description != r.description),
            ("format", m.format != r.format),
            (
                "schemaString",
                !same_json(&m.schema_string, &r.schema_string),
            ),
            (
                "partitionColumns",
                m.partition_columns != r.partition_columns,
            ),
            ("createdTime", m.created_time != r.created_time),
            ("configuration", m.configuration != r.configuration),
        ]
        .into_iter()
        .filter_map(|(name, differs)| differs.then_some(name))
        .collect();
        out.push(format!("metaData differs ({})", fields.join(", ")));
    }
    let files = |s: &TableState| -> BTreeMap<(String, Option<String>), i64> {
        s.files()
            .map(|a| {
                (
                    (
                        a.path().to_string(),
                        a.deletion_vector().map(|d| d.unique_id()),
                    ),
                    a.size(),
                )
            })
            .collect()
    };
    let (in_checkpoint, in_commits) = (files(checkpoint), files(replayed));
    let only = |a: &BTreeMap<(String, Option<String>), i64>,
                b: &BTreeMap<(String, Option<String>), i64>| {
        a.keys()
            .filter(|k| !b.contains_key(*k))
            .map(|(p, _)| p.clone())
            .collect::<Vec<_>>()
    };
    for (what, paths) in [
        ("only in the checkpoint", only(&in_checkpoint, &in_commits)),
        (
            "missing from the checkpoint",
            only(&in_commits, &in_checkpoint),
        ),
    ] {
        if !paths.is_empty() {
            out.push(format!(
                "{} live file(s) {what} ({})",
                paths.len(),
                examples(&paths)
            ));
        }
    }
    let resized: Vec<String> = in_checkpoint
        .iter()
        .filter(|(k, size)| in_commits.get(*k).is_some_and(|s| s != *size))
        .map(|((p, _), _)| p.clone())
        .collect();
    if !resized.is_empty() {
        out.push(format!(
            "{} file(s) with another size ({})",
            resized.len(),
            examples(&resized)
        ));
    }
    // A checkpoint may drop transaction identifiers older than
    // delta.setTransactionRetentionDuration, so with that set, missing ones are fine.
    let may_expire = TableProperties(&replayed.metadata().configuration)
        .set_transaction_retention_ms()
        .is_some();
    let (cp_txns, txns) = (checkpoint.app_transactions(), replayed.app_transactions());
    let bad_txns: Vec<String> = txns
        .iter()
        .filter(|(app, t)| match cp_txns.get(*app) {
            Some(c) => c.version != t.version,
            None => !may_expire,
        })
        .map(|(app, _)| app.clone())
        .chain(
            cp_txns
                .keys()
                .filter(|app| !txns.contains_key(*app))
                .cloned(),
        )
        .collect();
    if !bad_txns.is_empty() {
        out.push(format!(
            "application transaction(s) differ ({})",
            examples(&bad_txns)
        ));
    }
    if checkpoint.domains() != replayed.domains() {
        out.push("domain metadata differs".to_string());
    }
    out
}

/// Whether two JSON texts hold the same value (a checkpoint writer may re-serialize the
/// schema with other spacing or key order).
fn same_json(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (serde_json::from_str::<Value>(a), serde_json::from_str::<Value>(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

fn examples(items: &[String]) -> String {
    let mut sorted: Vec<&String> = items.iter().collect();
    sorted.sort();
    let shown: Vec<&str> = sorted.iter().take(EXAMPLES).map(|s| s.as_str()).collect();
    if items.len() > EXAMPLES {
        format!("{}, ...", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// The complete checkpoint of version `v` in the form a hint naming `parts` parts
/// describes, when that form is there: the multi-part set of that many parts, or (no part
/// count, or one) the classic file. Several forms of one version coexist after a rerun or
/// a killed `checkpoint` (a classic and a multi-part one); the hint describes whichever
/// was written last, which need not be the one readers prefer.
fn described_form(listing: &[LogFile], v: Version, parts: Option<u32>) -> Option<CheckpointFiles> {
    let of_version: Vec<&LogFile> = listing
        .iter()
        .filter(|f| f.version == v && f.meta.size > 0)
        .collect();
    match parts {
        Some(n) if n > 1 => {
            let mut set: BTreeMap<u32, &LogFile> = BTreeMap::new();
            for f in &of_version {
                if let LogFileKind::Checkpoint(CheckpointKind::MultiPart { part, parts }) = f.kind
                    && parts == n
                {
                    set.insert(part, f);
                }
            }
            set.keys().copied().eq(1..=n).then(|| CheckpointFiles {
                version: v,
                kind: CheckpointKind::MultiPart { part: 1, parts: n },
                files: set.values().map(|f| f.meta.clone()).collect(),
            })
        }
        _ => of_version
            .iter()
            .find(|f| matches!(f.kind, LogFileKind::Checkpoint(CheckpointKind::Classic)))
            .map(|f| CheckpointFiles {
                version: v,
                kind: CheckpointKind::Classic,
                files: vec![f.meta.clone()],
            }),
    }
}

/// Checks `_last_checkpoint` (absent is fine: it is only a hint) against the checkpoints
/// listed and what they held.
fn check_last_checkpoint(
    store: &dyn ObjectStore,
    listing: &[LogFile],
    checkpoints: &BTreeMap<Version, CheckpointFiles>,
    counts: &HashMap<Version, CheckpointCounts>,
    latest: Version,
    report: &mut VerifyReport,
) {
    let path = log_path(LAST_CHECKPOINT);
    let mut lie = |detail: String| {
        report.findings.push(Finding::new(
            FindingKind::LastCheckpoint,
            path.as_str(),
            detail,
        ));
    };
    // Bounded as readers bound it: a larger file is no hint to them (and must not be read
    // whole here either).
    let bytes = match store.get_limited(&path, LAST_CHECKPOINT_LIMIT) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return,
        Err(e) => return lie(format!("cannot be read: {e}")),
    };
    let value: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => return lie(format!("is not JSON: {e}")),
    };
    if let Some(stored) = value.get("checksum").and_then(Value::as_str)
        && stored != json_checksum(&value)
    {
        lie(format!(
            "checksum {stored} does not match its contents ({})",
            json_checksum(&value)
        ));
    }
    let hint: LastCheckpointHint = match serde_json::from_value(value) {
        Ok(h) => h,
        Err(e) => return lie(format!("is not a checkpoint description: {e}")),
    };
    let v = hint.version;
    if v > latest {
        return lie(format!(
            "names version {v}, beyond the latest version {latest}"
        ));
    }
    let Some(best) = checkpoints.get(&v) else {
        return lie(format!(
            "names the checkpoint of version {v}, which is missing or incomplete"
        ));
    };
    // The form the hint describes, when another complete form of the version sits beside
    // the one readers prefer; its actions were not read, so only its files are compared.
    let described = described_form(listing, v, hint.parts)
        .filter(|d| d.files != best.files && !matches!(best.kind, CheckpointKind::Uuid { .. }));
    let read = described.is_none();
    let cp = described.as_ref().unwrap_or(best);
    let multi_part = match cp.kind {
        CheckpointKind::MultiPart { parts, .. } => Some(parts),
        _ => None,
    };
    if let Some(parts) = hint.parts
        && multi_part.unwrap_or(1) != parts
    {
        lie(format!(
            "says the checkpoint of version {v} has {parts} part(s); it has {}",
            cp.files.len()
        ));
    }
    // Sizes and action counts are only unambiguous for checkpoints without sidecars (for
    // V2 ones, writers differ on whether sidecars and their actions count).
    if matches!(cp.kind, CheckpointKind::Uuid { .. }) || counts.get(&v).is_none_or(|c| c.v2) {
        return;
    }
    if let Some(bytes) = hint.size_in_bytes {
        let actual: u64 = cp.files.iter().map(|m| m.size).sum();
        if u64::try_from(bytes).ok() != Some(actual) {
            lie(format!(
                "says the checkpoint of version {v} is {bytes} bytes; its files hold {actual}"
            ));
        }
    }
    let Some(held) = counts.get(&v).filter(|_| read) else {
        // Unreadable (reported with the checkpoint itself), or not the form read.
        return;
    };
    if let Some(size) = hint.size
        && usize::try_from(size).ok() != Some(held.actions)
    {
        lie(format!(
            "says the checkpoint of version {v} holds {size} actions; it holds {}",
            held.actions
        ));
    }
    if let Some(adds) = hint.num_of_add_files
        && usize::try_from(adds).ok() != Some(held.adds)
    {
        lie(format!(
            "says the checkpoint of version {v} holds {adds} add actions; it holds {}",
            held.adds
        ));
    }
}
