//! Commit timestamps and time travel by timestamp (PROTOCOL.md "In-Commit Timestamps";
//! Delta's history rules).
//!
//! The timestamp of version v is its in-commit timestamp when the table has them enabled at
//! v, otherwise the modification time of `v.json`. File times are made monotonic before
//! searching: scanning upwards, a time not after its predecessor's becomes the predecessor's
//! plus one millisecond.

use alluvium_storage::{ObjectStore, StoreRef};
use alluvium_txlog::LogError;
use alluvium_txlog::actions::Action;
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFile, LogFileKind, Version, commit_path};
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::segment::{earliest_readable_version, list_log_from};

use super::{SnapshotReport, load};
use crate::Result;

/// The commit timestamp of one version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitTimestamp {
    /// The version.
    pub version: Version,
    /// Its timestamp, in milliseconds since the epoch.
    pub timestamp_ms: i64,
    /// True if it is an in-commit timestamp rather than a file time.
    pub in_commit: bool,
}

/// True if in-commit timestamps are the timestamps of `version` under `props`.
pub(crate) fn ict_applies(props: &TableProperties<'_>, version: Version) -> bool {
    props.in_commit_timestamps() && props.ict_enablement_version().is_none_or(|e| version >= e)
}

fn read_ict(store: &dyn ObjectStore, version: Version) -> Result<Option<i64>> {
    let path = commit_path(version);
    let bytes = store.get(&path)?;
    let actions = decode_commit(path.as_str(), &bytes)?;
    Ok(actions.iter().find_map(|a| match a {
        Action::CommitInfo(ci) => ci.in_commit_timestamp(),
        _ => None,
    }))
}

/// The timestamps of the listed commits at or after `from`, ascending. In-commit
/// timestamps are read from the commit files where they apply (per the latest metadata in
/// `props`); file times are monotonized.
///
/// # Errors
/// Storage and decoding errors for commit files that must be read.
pub fn commit_timestamps(
    store: &dyn ObjectStore,
    listing: &[LogFile],
    props: &TableProperties<'_>,
    from: Version,
) -> Result<Vec<CommitTimestamp>> {
    let mut out: Vec<CommitTimestamp> = Vec::new();
    for f in listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit && f.version >= from)
    {
        let ict = if ict_applies(props, f.version) {
            read_ict(store, f.version)?
        } else {
            None
        };
        let (ts, in_commit) = match ict {
            Some(t) => (t, true),
            None => {
                let mut t = f.meta.last_modified_ms;
                if let Some(prev) = out.last()
                    && t <= prev.timestamp_ms
                {
                    t = prev.timestamp_ms + 1;
                }
                (t, false)
            }
        };
        out.push(CommitTimestamp {
            version: f.version,
            timestamp_ms: ts,
            in_commit,
        });
    }
    Ok(out)
}

/// The latest version whose commit timestamp is at or before `ts_ms`.
pub(super) fn version_at(
    store: &StoreRef,
    ts_ms: i64,
    report: &mut SnapshotReport,
) -> Result<Version> {
    let latest = load::load_version(store.clone(), None, report)?;
    report.list_calls += 1;
    let listing = list_log_from(store.as_ref(), 0)?;
    let earliest = earliest_readable_version(&listing).unwrap_or(0);
    let props = latest.properties();
    let commits: Vec<&LogFile> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit && f.version >= earliest)
        .collect();
    let out_of_range = |reason: String| LogError::TimestampOutOfRange {
        timestamp_ms: ts_ms,
        reason,
    };
    if commits.is_empty() {
        return Err(out_of_range("the log has no commit files to date versions by".into()).into());
    }
    // In-commit timestamps are monotonic by construction: binary search them, reading one
    // commit per probe, over the versions where they apply.
    if props.in_commit_timestamps() {
        let ict_start = props
            .ict_enablement_version()
            .unwrap_or(earliest)
            .max(earliest);
        let ict_commits: Vec<&&LogFile> =
            commits.iter().filter(|f| f.version >= ict_start).collect();
        if let Some(first) = ict_commits.first() {
            let first_ts = match props.ict_enablement_timestamp() {
                Some(t) if first.version == ict_start => t,
                _ => read_ict(store.as_ref(), first.version)?.unwrap_or(i64::MIN),
            };
            if ts_ms >= first_ts {
                let (mut lo, mut hi) = (0usize, ict_commits.len() - 1);
                while lo < hi {
                    let mid = lo + (hi - lo).div_ceil(2);
                    let t = read_ict(store.as_ref(), ict_commits[mid].version)?.unwrap_or(i64::MAX);
                    if t <= ts_ms { lo = mid } else { hi = mid - 1 }
                }
                return Ok(ict_commits[lo].version);
            }
        }
    }
    let stamps = commit_timestamps(
        store.as_ref(),
        &listing,
        &TableProperties(&Default::default()),
        earliest,
    )?;
    let stamps: Vec<_> = match (props.in_commit_timestamps(), props.ict_enablement_version()) {
        (true, Some(e)) => stamps.into_iter().filter(|s| s.version < e).collect(),
        (true, None) => Vec::new(),
        _ => stamps,
    };
    let Some(first) = stamps.first() else {
        return Err(out_of_range("it is before the first commit".into()).into());
    };
    if ts_ms < first.timestamp_ms {
        return Err(out_of_range(format!(
            "the earliest readable version {} was committed at {} ({} ms)",
            first.version,
            chrono::DateTime::from_timestamp_millis(first.timestamp_ms)
                .map_or_else(String::new, |t| t
                    .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                    .to_string()),
            first.timestamp_ms
        ))
        .into());
    }
    let idx = stamps.partition_point(|s| s.timestamp_ms <= ts_ms);
    Ok(stamps[idx.saturating_sub(1)].version)
}
