//! Typed access to the table properties (`metaData.configuration`) that drive engine
//! behaviour (PROTOCOL.md and Delta's table-properties documentation).
//!
//! Every accessor falls back to the documented default when a property is absent, and also
//! when it is malformed: a bad value must not make a table unreadable. Writers validate the
//! values they set with [`validate_property`], which refuses exactly the values the
//! accessors would ignore.

use std::collections::HashMap;

use crate::column_mapping::ColumnMappingMode;

// Every `delta.*` table property name is spelled here, once; the rule modules
// (`column_mapping`, `row_tracking`, `iceberg_compat`, `type_widening`) re-export theirs
// under their old names. `.ci/check_vocabulary.py` keeps it that way.

/// `delta.columnMapping.mode`: `none`, `name` or `id` (see [`ColumnMappingMode`]).
pub const COLUMN_MAPPING_MODE: &str = "delta.columnMapping.mode";
/// `delta.enableRowTracking`: row ids and commit versions can be relied upon.
pub const ENABLE_ROW_TRACKING: &str = "delta.enableRowTracking";
/// `delta.rowTrackingSuspended`: writers stop assigning row ids.
pub const ROW_TRACKING_SUSPENDED: &str = "delta.rowTrackingSuspended";
/// `delta.rowTracking.materializedRowIdColumnName`: the hidden materialised row-id column.
pub const MATERIALIZED_ROW_ID_COLUMN: &str = "delta.rowTracking.materializedRowIdColumnName";
/// `delta.rowTracking.materializedRowCommitVersionColumnName`: the hidden materialised
/// row-commit-version column.
pub const MATERIALIZED_ROW_COMMIT_VERSION_COLUMN: &str =
    "delta.rowTracking.materializedRowCommitVersionColumnName";
/// `delta.enableTypeWidening`: writers may widen column types.
pub const ENABLE_TYPE_WIDENING: &str = "delta.enableTypeWidening";
/// `delta.enableIcebergCompatV1`.
pub const ENABLE_ICEBERG_COMPAT_V1: &str = "delta.enableIcebergCompatV1";
/// `delta.enableIcebergCompatV2`.
pub const ENABLE_ICEBERG_COMPAT_V2: &str = "delta.enableIcebergCompatV2";
/// `delta.enableIcebergCompatV3` (not supported: writes are refused while it is set).
pub const ENABLE_ICEBERG_COMPAT_V3: &str = "delta.enableIcebergCompatV3";
/// `delta.universalFormat.enabledFormats`: the formats UniForm keeps in step (`iceberg`).
pub const UNIVERSAL_FORMAT_ENABLED_FORMATS: &str = "delta.universalFormat.enabledFormats";
/// `delta.autoOptimize.optimizeWrite` (accepted, not interpreted).
pub const OPTIMIZE_WRITE: &str = "delta.autoOptimize.optimizeWrite";
/// `delta.compatibility.symlinkFormatManifest.enabled` (accepted, not interpreted).
pub const SYMLINK_FORMAT_MANIFEST: &str = "delta.compatibility.symlinkFormatManifest.enabled";
/// `delta.tuneFileSizesForRewrites` (accepted, not interpreted).
pub const TUNE_FILE_SIZES_FOR_REWRITES: &str = "delta.tuneFileSizesForRewrites";
/// Prefix of `delta.constraints.<name>`: a CHECK constraint's SQL expression.
pub const CONSTRAINT_PREFIX: &str = "delta.constraints.";

/// The properties that turn on Iceberg compatibility (V1, V2, V3).
pub const ICEBERG_COMPAT_PROPERTIES: [&str; 3] = [
    ENABLE_ICEBERG_COMPAT_V1,
    ENABLE_ICEBERG_COMPAT_V2,
    ENABLE_ICEBERG_COMPAT_V3,
];

/// `delta.checkpointInterval`.
pub const CHECKPOINT_INTERVAL: &str = "delta.checkpointInterval";
/// `delta.logRetentionDuration`.
pub const LOG_RETENTION: &str = "delta.logRetentionDuration";
/// `delta.deletedFileRetentionDuration`.
pub const DELETED_FILE_RETENTION: &str = "delta.deletedFileRetentionDuration";
/// `delta.setTransactionRetentionDuration`.
pub const SET_TXN_RETENTION: &str = "delta.setTransactionRetentionDuration";
/// `delta.enableExpiredLogCleanup`.
pub const ENABLE_EXPIRED_LOG_CLEANUP: &str = "delta.enableExpiredLogCleanup";
/// `delta.appendOnly`.
pub const APPEND_ONLY: &str = "delta.appendOnly";
/// `delta.enableInCommitTimestamps`.
pub const ENABLE_ICT: &str = "delta.enableInCommitTimestamps";
/// `delta.inCommitTimestampEnablementVersion`.
pub const ICT_ENABLEMENT_VERSION: &str = "delta.inCommitTimestampEnablementVersion";
/// `delta.inCommitTimestampEnablementTimestamp`.
pub const ICT_ENABLEMENT_TIMESTAMP: &str = "delta.inCommitTimestampEnablementTimestamp";
/// `delta.dataSkippingNumIndexedCols`.
pub const NUM_INDEXED_COLS: &str = "delta.dataSkippingNumIndexedCols";
/// `delta.dataSkippingStatsColumns`.
pub const STATS_COLUMNS: &str = "delta.dataSkippingStatsColumns";
/// `delta.checkpoint.writeStatsAsJson`.
pub const WRITE_STATS_AS_JSON: &str = "delta.checkpoint.writeStatsAsJson";
/// `delta.checkpoint.writeStatsAsStruct`.
pub const WRITE_STATS_AS_STRUCT: &str = "delta.checkpoint.writeStatsAsStruct";
/// `delta.checkpointPolicy`.
pub const CHECKPOINT_POLICY: &str = "delta.checkpointPolicy";
/// `delta.targetFileSize`.
pub const TARGET_FILE_SIZE: &str = "delta.targetFileSize";
/// `delta.enableChangeDataFeed`.
pub const ENABLE_CDF: &str = "delta.enableChangeDataFeed";
/// `delta.enableDeletionVectors`.
pub const ENABLE_DELETION_VECTORS: &str = "delta.enableDeletionVectors";
/// `delta.randomizeFilePrefixes`: put new files under random directory prefixes.
pub const RANDOMIZE_FILE_PREFIXES: &str = "delta.randomizeFilePrefixes";
/// `delta.randomPrefixLength`: length of those prefixes (default 2).
pub const RANDOM_PREFIX_LENGTH: &str = "delta.randomPrefixLength";
/// `delta.isolationLevel`.
pub const ISOLATION_LEVEL: &str = "delta.isolationLevel";
/// `delta.autoOptimize.autoCompact`.
pub const AUTO_COMPACT: &str = "delta.autoOptimize.autoCompact";
/// `delta.enableChangeDataCapture`: the older spelling of [`ENABLE_CDF`], still honoured.
pub const ENABLE_CDC_LEGACY: &str = "delta.enableChangeDataCapture";
/// `delta.columnMapping.maxColumnId`: the largest column id assigned so far.
pub const COLUMN_MAPPING_MAX_ID: &str = "delta.columnMapping.maxColumnId";
/// `delta.parquet.compression.codec`: the codec of new data files.
pub const PARQUET_COMPRESSION_CODEC: &str = "delta.parquet.compression.codec";
/// `alluvium.parquet.dataPageRowLimit`: the most rows a Parquet data page of a new data file
/// holds (alluvium's own property; other engines ignore it). Small pages let a point lookup
/// that selects pages through the page index decode a few hundred rows instead of a whole
/// column chunk; unset, pages are cut by size only (the Parquet writer's default).
pub const DATA_PAGE_ROW_LIMIT: &str = "alluvium.parquet.dataPageRowLimit";
/// `delta.requireCheckpointProtectionBeforeVersion` (the `checkpointProtection` feature).
pub const REQUIRE_CHECKPOINT_PROTECTION_BEFORE: &str =
    "delta.requireCheckpointProtectionBeforeVersion";
/// `alluvium.autoCompact.minNumFiles`: small files in a partition that trigger
/// auto-compaction (alluvium's own property).
pub const AUTO_COMPACT_MIN_NUM_FILES: &str = "alluvium.autoCompact.minNumFiles";
/// `delta.minReaderVersion`: requests a reader version when a table is created.
pub const MIN_READER_VERSION: &str = "delta.minReaderVersion";
/// `delta.minWriterVersion`: requests a writer version when a table is created.
pub const MIN_WRITER_VERSION: &str = "delta.minWriterVersion";
/// Prefix of `delta.feature.<name>`: requests a table feature (`supported` or `enabled`).
pub const FEATURE_PREFIX: &str = "delta.feature.";

/// Whether `key` requests protocol features ([`FEATURE_PREFIX`], [`MIN_READER_VERSION`],
/// [`MIN_WRITER_VERSION`]) rather than configures the table: such keys are consumed when
/// the protocol is chosen and not stored.
pub fn is_protocol_request(key: &str) -> bool {
    key.starts_with(FEATURE_PREFIX) || key == MIN_READER_VERSION || key == MIN_WRITER_VERSION
}

const MS_PER_DAY: i64 = 24 * 3600 * 1000;

/// Typed view of a table's configuration.
#[derive(Debug, Clone, Copy)]
pub struct TableProperties<'a>(pub &'a HashMap<String, String>);

impl TableProperties<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(|s| s.trim())
    }

    fn flag(&self, key: &str, default: bool) -> bool {
        match self.get(key).map(str::to_ascii_lowercase).as_deref() {
            Some("true") => true,
            Some("false") => false,
            _ => default,
        }
    }

    fn interval(&self, key: &str, default_ms: i64) -> i64 {
        self.get(key)
            .and_then(|v| parse_interval_ms(v).ok())
            .unwrap_or(default_ms)
    }

    /// Commits between checkpoints (default 10).
    pub fn checkpoint_interval(&self) -> u64 {
        self.get(CHECKPOINT_INTERVAL)
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|v| *v > 0)
            .unwrap_or(10)
    }

    /// How long log files are kept (default 30 days).
    pub fn log_retention_ms(&self) -> i64 {
        self.interval(LOG_RETENTION, 30 * MS_PER_DAY)
    }

    /// How long tombstones are kept and VACUUM's threshold (default 7 days).
    pub fn deleted_file_retention_ms(&self) -> i64 {
        self.interval(DELETED_FILE_RETENTION, 7 * MS_PER_DAY)
    }

    /// How long `txn` entries are kept (no default: forever).
    pub fn set_transaction_retention_ms(&self) -> Option<i64> {
        self.get(SET_TXN_RETENTION)
            .and_then(|v| parse_interval_ms(v).ok())
    }

    /// Whether log cleanup runs after checkpoints (default true).
    pub fn enable_expired_log_cleanup(&self) -> bool {
        self.flag(ENABLE_EXPIRED_LOG_CLEANUP, true)
    }

    /// Whether the table is append-only.
    pub fn append_only(&self) -> bool {
        self.flag(APPEND_ONLY, false)
    }

    /// Whether in-commit timestamps are enabled.
    pub fn in_commit_timestamps(&self) -> bool {
        self.flag(ENABLE_ICT, false)
    }

    /// The version from which in-commit timestamps are present.
    pub fn ict_enablement_version(&self) -> Option<u64> {
        self.get(ICT_ENABLEMENT_VERSION)
            .and_then(|v| v.parse().ok())
    }

    /// The in-commit timestamp of the enablement version.
    pub fn ict_enablement_timestamp(&self) -> Option<i64> {
        self.get(ICT_ENABLEMENT_TIMESTAMP)
            .and_then(|v| v.parse().ok())
    }

    /// Number of leading leaf columns with statistics (default 32; -1 = all).
    pub fn num_indexed_cols(&self) -> i64 {
        self.get(NUM_INDEXED_COLS)
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|v| *v >= -1)
            .unwrap_or(32)
    }

    /// Explicit statistics columns (overrides the count), as written (comma-separated,
    /// possibly backtick-quoted names).
    pub fn stats_columns(&self) -> Option<Vec<String>> {
        let v = self.get(STATS_COLUMNS)?;
        Some(split_column_list(v))
    }

    /// Keeps, of `leaves` (the leaf columns of a table's data columns in schema order,
    /// partition columns excluded, each with its logical path), those that get statistics:
    /// the leaves under a `delta.dataSkippingStatsColumns` entry (names compared
    /// case-insensitively, backtick-quoted parts may hold dots) when it is set, else the
    /// first `delta.dataSkippingNumIndexedCols` leaves (all for -1). The one rule shared by
    /// the statistics writer and the checks that rely on which columns have statistics.
    pub fn retain_stats_leaves<T>(&self, leaves: &mut Vec<T>, logical: impl Fn(&T) -> &[String]) {
        if let Some(cols) = self.stats_columns() {
            let wanted: Vec<Vec<String>> = cols.iter().map(|c| column_path(c)).collect();
            leaves.retain(|leaf| {
                let path = logical(leaf);
                wanted.iter().any(|w| {
                    w.len() <= path.len()
                        && w.iter().zip(path).all(|(a, b)| a.eq_ignore_ascii_case(b))
                })
            });
        } else {
            let n = self.num_indexed_cols();
            if n >= 0 {
                leaves.truncate(usize::try_from(n).unwrap_or(0));
            }
        }
    }

    /// Whether checkpoints carry `add.stats` as JSON (default true).
    pub fn write_stats_as_json(&self) -> bool {
        self.flag(WRITE_STATS_AS_JSON, true)
    }

    /// Whether checkpoints carry `stats_parsed`/`partitionValues_parsed` (default false).
    pub fn write_stats_as_struct(&self) -> bool {
        self.flag(WRITE_STATS_AS_STRUCT, false)
    }

    /// Whether V2 checkpoints are requested (`delta.checkpointPolicy = v2`).
    pub fn v2_checkpoint_policy(&self) -> bool {
        self.get(CHECKPOINT_POLICY)
            .is_some_and(|v| v.eq_ignore_ascii_case("v2"))
    }

    /// Target size of data files in bytes, if set.
    pub fn target_file_size(&self) -> Option<u64> {
        self.get(TARGET_FILE_SIZE)
            .and_then(|v| v.parse().ok())
            .filter(|v| *v > 0)
    }

    /// Whether change data feed is enabled.
    pub fn change_data_feed(&self) -> bool {
        self.flag(ENABLE_CDF, false) || self.flag(ENABLE_CDC_LEGACY, false)
    }

    /// The first Iceberg-compatibility property set to true, if any.
    pub fn iceberg_compat(&self) -> Option<&'static str> {
        ICEBERG_COMPAT_PROPERTIES
            .into_iter()
            .find(|k| self.flag(k, false))
    }

    /// Whether writers may create deletion vectors.
    pub fn deletion_vectors(&self) -> bool {
        self.flag(ENABLE_DELETION_VECTORS, false)
    }

    /// The length of the random directory prefix of new files (deletion vectors) when
    /// `delta.randomizeFilePrefixes` is true (`delta.randomPrefixLength`, default 2);
    /// `None` when prefixes are off.
    pub fn random_prefix_length(&self) -> Option<usize> {
        if !self.flag(RANDOMIZE_FILE_PREFIXES, false) {
            return None;
        }
        Some(
            self.get(RANDOM_PREFIX_LENGTH)
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|n| (1..=64).contains(n))
                .unwrap_or(2),
        )
    }

    /// Whether auto-compaction is enabled.
    pub fn auto_compact(&self) -> bool {
        self.flag(AUTO_COMPACT, false)
    }

    // The three below read the value exactly as written (untrimmed), as their callers
    // always have.

    /// [`AUTO_COMPACT_MIN_NUM_FILES`], if set to a number.
    pub fn auto_compact_min_num_files(&self) -> Option<usize> {
        self.0.get(AUTO_COMPACT_MIN_NUM_FILES)?.parse().ok()
    }

    /// [`COLUMN_MAPPING_MAX_ID`]: the largest column id assigned so far (0 if unset).
    pub fn column_mapping_max_id(&self) -> i64 {
        self.0
            .get(COLUMN_MAPPING_MAX_ID)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// [`REQUIRE_CHECKPOINT_PROTECTION_BEFORE`], if set to a version.
    pub fn require_checkpoint_protection_before(&self) -> Option<u64> {
        self.0
            .get(REQUIRE_CHECKPOINT_PROTECTION_BEFORE)?
            .parse()
            .ok()
    }
}

/// Checks a value a writer is about to set for a property the engine interprets: the
/// accessors above would silently replace anything refused here by the default (for
/// example `delta.checkpointInterval=0`, a negative `delta.targetFileSize`, a negative
/// retention, `delta.appendOnly=yes`), so accepting it would store a setting that does
/// not do what it says. Keys the engine does not interpret are accepted as they are.
///
/// # Errors
/// Why the value is refused.
pub fn validate_property(key: &str, value: &str) -> Result<(), String> {
    let v = value.trim();
    let integer = || v.parse::<i64>().map_err(|_| "not an integer".to_string());
    match key {
        CHECKPOINT_INTERVAL => match integer()? {
            n if n > 0 => Ok(()),
            _ => Err("must be a positive number of commits".into()),
        },
        TARGET_FILE_SIZE => match integer()? {
            n if n > 0 => Ok(()),
            _ => Err("must be a positive number of bytes".into()),
        },
        NUM_INDEXED_COLS => match integer()? {
            n if n >= -1 => Ok(()),
            _ => Err("must be -1 (all columns) or a number of columns".into()),
        },
        ICT_ENABLEMENT_VERSION => v
            .parse::<u64>()
            .map(|_| ())
            .map_err(|_| "not a version".into()),
        ICT_ENABLEMENT_TIMESTAMP => integer().map(|_| ()),
        LOG_RETENTION | DELETED_FILE_RETENTION | SET_TXN_RETENTION => {
            parse_interval_ms(v).map(|_| ())
        }
        RANDOM_PREFIX_LENGTH => match integer()? {
            n if (1..=64).contains(&n) => Ok(()),
            _ => Err("must be a number of characters from 1 to 64".into()),
        },
        APPEND_ONLY
        | RANDOMIZE_FILE_PREFIXES
        | ENABLE_CDF
        | ENABLE_CDC_LEGACY
        | ENABLE_DELETION_VECTORS
        | ENABLE_ICT
        | ENABLE_EXPIRED_LOG_CLEANUP
        | WRITE_STATS_AS_JSON
        | WRITE_STATS_AS_STRUCT
        | AUTO_COMPACT
        | ENABLE_ROW_TRACKING
        | ROW_TRACKING_SUSPENDED => {
            if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") {
                Ok(())
            } else {
                Err("not true or false".into())
            }
        }
        CHECKPOINT_POLICY => {
            if v.eq_ignore_ascii_case("classic") || v.eq_ignore_ascii_case("v2") {
                Ok(())
            } else {
                Err("must be classic or v2".into())
            }
        }
        // Untrimmed: the mode is read exactly as written (`ColumnMappingMode::of`).
        COLUMN_MAPPING_MODE => ColumnMappingMode::parse(value)
            .map(|_| ())
            .ok_or_else(|| "must be none, name or id".into()),
        _ => Ok(()),
    }
}

/// The `delta.*` table properties Delta defines (Delta's table-properties documentation
/// and PROTOCOL.md), which `alter` accepts; any other `delta.*` key is a typo or a
/// property of a newer Delta and is refused there. Keys outside `delta.` are the user's.
pub const KNOWN_DELTA_PROPERTIES: &[&str] = &[
    APPEND_ONLY,
    AUTO_COMPACT,
    OPTIMIZE_WRITE,
    CHECKPOINT_INTERVAL,
    CHECKPOINT_POLICY,
    WRITE_STATS_AS_JSON,
    WRITE_STATS_AS_STRUCT,
    COLUMN_MAPPING_MODE,
    COLUMN_MAPPING_MAX_ID,
    SYMLINK_FORMAT_MANIFEST,
    NUM_INDEXED_COLS,
    STATS_COLUMNS,
    DELETED_FILE_RETENTION,
    ENABLE_CDF,
    ENABLE_CDC_LEGACY,
    ENABLE_DELETION_VECTORS,
    ENABLE_EXPIRED_LOG_CLEANUP,
    ENABLE_ICT,
    ICT_ENABLEMENT_VERSION,
    ICT_ENABLEMENT_TIMESTAMP,
    ISOLATION_LEVEL,
    LOG_RETENTION,
    MIN_READER_VERSION,
    MIN_WRITER_VERSION,
    RANDOMIZE_FILE_PREFIXES,
    RANDOM_PREFIX_LENGTH,
    SET_TXN_RETENTION,
    TARGET_FILE_SIZE,
    TUNE_FILE_SIZES_FOR_REWRITES,
    PARQUET_COMPRESSION_CODEC,
    ENABLE_ROW_TRACKING,
    ROW_TRACKING_SUSPENDED,
    ENABLE_TYPE_WIDENING,
    UNIVERSAL_FORMAT_ENABLED_FORMATS,
    ICEBERG_COMPAT_PROPERTIES[0],
    ICEBERG_COMPAT_PROPERTIES[1],
    ICEBERG_COMPAT_PROPERTIES[2],
    REQUIRE_CHECKPOINT_PROTECTION_BEFORE,
];

/// Whether `key` is a known `delta.*` property, spelled exactly (see
/// [`KNOWN_DELTA_PROPERTIES`]; a mis-cased key would escape validation and be ignored by the
/// accessors, so it counts as unknown; keys under
/// `delta.feature.` and `delta.constraints.` count as known). Keys outside `delta.` are
/// always accepted.
pub fn is_known_property(key: &str) -> bool {
    if !key.starts_with("delta.") {
        return true;
    }
    key.starts_with(FEATURE_PREFIX)
        || key.starts_with(CONSTRAINT_PREFIX)
        || KNOWN_DELTA_PROPERTIES.contains(&key)
}

/// The known `delta.*` property nearest to `key` (case-insensitive edit distance), when it
/// is close enough to be a typo of it: at most a third of the key's length away, or the
/// same key in another case. For messages refusing an unknown key.
pub fn nearest_known_property(key: &str) -> Option<&'static str> {
    let key = key.to_ascii_lowercase();
    let (best, distance) = KNOWN_DELTA_PROPERTIES
        .iter()
        .map(|k| (*k, edit_distance(&key, &k.to_ascii_lowercase())))
        .min_by_key(|(_, d)| *d)?;
    (distance <= (key.len() / 3).max(1)).then_some(best)
}

/// Levenshtein distance of two strings, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Splits a comma-separated column list, honouring backtick quoting (`` `a,b`.c ``).
pub fn split_column_list(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in v.chars() {
        match c {
            '`' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => {
                out.push(cur.trim().to_string());
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Parses a Spark calendar interval such as `interval 7 days`, `30 days`,
/// `interval 2 days 3 hours` or `1 week` into milliseconds. Months and years (variable
/// length) and negative values are refused.
///
/// # Errors
/// A message describing the problem.
pub fn parse_interval_ms(text: &str) -> Result<i64, String> {
    let lower = text.trim().to_ascii_lowercase();
    let body = lower.strip_prefix("interval").unwrap_or(&lower).trim();
    let words: Vec<&str> = body.split_whitespace().collect();
    if words.is_empty() || !words.len().is_multiple_of(2) {
        return Err(format!("invalid interval {text:?}"));
    }
    let mut total: i64 = 0;
    for pair in words.chunks(2) {
        let n: i64 = pair[0]
            .parse()
            .map_err(|_| format!("invalid interval {text:?}"))?;
        if n < 0 {
            return Err(format!("negative interval {text:?}"));
        }
        let unit_ms: i64 = match pair[1].trim_end_matches('s') {
            "microsecond" => {
                total = total.saturating_add(n / 1000);
                continue;
            }
            "millisecond" => 1,
            "second" => 1000,
            "minute" => 60_000,
            "hour" => 3_600_000,
            "day" => MS_PER_DAY,
            "week" => 7 * MS_PER_DAY,
            other => return Err(format!("unsupported interval unit {other:?} in {text:?}")),
        };
        total = total.saturating_add(n.saturating_mul(unit_ms));
    }
    Ok(total)
}

/// The parts of a column name as written in a property (`a.b`, with backtick-quoted parts
/// that may hold dots: `` `a.b`.c ``).
fn column_path(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in name.chars() {
        match c {
            '`' => quoted = !quoted,
            '.' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_properties_are_spelled_exactly_and_user_keys_pass() {
        assert!(is_known_property(ENABLE_DELETION_VECTORS));
        assert!(is_known_property("delta.feature.deletionVectors"));
        assert!(is_known_property("team.owner"));
        assert!(!is_known_property("delta.enableDeletionVector"));
        assert!(!is_known_property("delta.appendonly"));
    }

    #[test]
    fn iceberg_compat_names_the_first_version_set_to_true() {
        let conf = |kv: &[(&str, &str)]| -> HashMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let c = conf(&[("delta.enableIcebergCompatV1", "false")]);
        assert_eq!(TableProperties(&c).iceberg_compat(), None);
        let c = conf(&[("delta.enableIcebergCompatV2", "TRUE")]);
        assert_eq!(
            TableProperties(&c).iceberg_compat(),
            Some("delta.enableIcebergCompatV2")
        );
        let c = conf(&[("delta.enableIcebergCompatV3", "true")]);
        assert_eq!(
            TableProperties(&c).iceberg_compat(),
            Some("delta.enableIcebergCompatV3")
        );
    }

    #[test]
    fn random_prefixes_only_when_asked_for() {
        let conf = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(TableProperties(&conf(&[])).random_prefix_length(), None);
        let on = conf(&[(RANDOMIZE_FILE_PREFIXES, "true")]);
        assert_eq!(TableProperties(&on).random_prefix_length(), Some(2));
        let five = conf(&[
            (RANDOMIZE_FILE_PREFIXES, "true"),
            (RANDOM_PREFIX_LENGTH, "5"),
        ]);
        assert_eq!(TableProperties(&five).random_prefix_length(), Some(5));
        assert!(validate_property(RANDOM_PREFIX_LENGTH, "0").is_err());
        assert!(validate_property(RANDOMIZE_FILE_PREFIXES, "maybe").is_err());
    }

    /// The properties the facade, datafile and compaction read are spelled here once, and
    /// their accessors keep the callers' reading (untrimmed, default when malformed).
    #[test]
    fn engine_read_properties_have_their_names_and_readings() {
        let conf: HashMap<String, String> = [
            ("alluvium.autoCompact.minNumFiles", "7"),
            ("delta.columnMapping.maxColumnId", "12"),
            ("delta.requireCheckpointProtectionBeforeVersion", "30"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let p = TableProperties(&conf);
        assert_eq!(p.auto_compact_min_num_files(), Some(7));
        assert_eq!(p.column_mapping_max_id(), 12);
        assert_eq!(p.require_checkpoint_protection_before(), Some(30));

        let bad: HashMap<String, String> = [
            (AUTO_COMPACT_MIN_NUM_FILES, " 7"),
            (COLUMN_MAPPING_MAX_ID, "x"),
            (REQUIRE_CHECKPOINT_PROTECTION_BEFORE, "-1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let p = TableProperties(&bad);
        assert_eq!(p.auto_compact_min_num_files(), None);
        assert_eq!(p.column_mapping_max_id(), 0);
        assert_eq!(p.require_checkpoint_protection_before(), None);
        assert_eq!(PARQUET_COMPRESSION_CODEC, "delta.parquet.compression.codec");

        for key in [
            "delta.feature.deletionVectors",
            "delta.minReaderVersion",
            "delta.minWriterVersion",
        ] {
            assert!(is_protocol_request(key), "{key}");
        }
        for key in [
            "delta.appendOnly",
            "delta.features",
            "delta.minReaderVersions",
        ] {
            assert!(!is_protocol_request(key), "{key}");
        }
    }

    /// Validation refuses exactly the column-mapping modes readers would not honour: a
    /// padded ` name ` used to pass validation and then read as no column mapping.
    #[test]
    fn column_mapping_mode_is_validated_as_it_is_read() {
        for ok in ["none", "name", "id", "NAME", "Id"] {
            assert!(validate_property(COLUMN_MAPPING_MODE, ok).is_ok(), "{ok}");
            assert!(ColumnMappingMode::parse(ok).is_some(), "{ok}");
        }
        for bad in [" name ", "name ", "names", ""] {
            assert!(
                validate_property(COLUMN_MAPPING_MODE, bad).is_err(),
                "{bad:?}"
            );
            assert_eq!(ColumnMappingMode::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn intervals() {
        assert_eq!(
            parse_interval_ms("interval 7 days").unwrap(),
            7 * MS_PER_DAY
        );
        assert_eq!(parse_interval_ms("30 days").unwrap(), 30 * MS_PER_DAY);
        assert_eq!(
            parse_interval_ms("interval 1 week").unwrap(),
            7 * MS_PER_DAY
        );
        assert_eq!(
            parse_interval_ms("INTERVAL 2 days 3 hours").unwrap(),
            2 * MS_PER_DAY + 3 * 3_600_000
        );
        assert_eq!(parse_interval_ms("interval 0 seconds").unwrap(), 0);
        for bad in [
            "",
            "interval",
            "7",
            "interval 1 month",
            "interval -1 days",
            "x days",
        ] {
            assert!(parse_interval_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defaults_and_malformed_values() {
        let mut m = HashMap::new();
        let p = TableProperties(&m);
        assert_eq!(p.checkpoint_interval(), 10);
        assert_eq!(p.deleted_file_retention_ms(), 7 * MS_PER_DAY);
        assert!(p.enable_expired_log_cleanup());
        m.insert(CHECKPOINT_INTERVAL.to_string(), "zero".to_string());
        m.insert(LOG_RETENTION.to_string(), "interval 1 month".to_string());
        let p = TableProperties(&m);
        assert_eq!(p.checkpoint_interval(), 10);
        assert_eq!(p.log_retention_ms(), 30 * MS_PER_DAY);
    }

    #[test]
    fn validation_refuses_what_accessors_would_ignore() {
        for (k, v) in [
            (CHECKPOINT_INTERVAL, "0"),
            (CHECKPOINT_INTERVAL, "-5"),
            (CHECKPOINT_INTERVAL, "ten"),
            (TARGET_FILE_SIZE, "0"),
            (TARGET_FILE_SIZE, "-1"),
            (NUM_INDEXED_COLS, "-2"),
            (LOG_RETENTION, "interval -1 days"),
            (DELETED_FILE_RETENTION, "-1 hours"),
            (SET_TXN_RETENTION, "interval 1 month"),
            (APPEND_ONLY, "yes"),
            (ENABLE_EXPIRED_LOG_CLEANUP, "1"),
            (AUTO_COMPACT, "on"),
            (CHECKPOINT_POLICY, "v3"),
            (ICT_ENABLEMENT_VERSION, "-1"),
            ("delta.columnMapping.mode", "names"),
        ] {
            assert!(validate_property(k, v).is_err(), "{k}={v}");
            // Each refused value is one the accessors replace by a default.
        }
        for (k, v) in [
            (CHECKPOINT_INTERVAL, "1"),
            (TARGET_FILE_SIZE, " 1048576 "),
            (NUM_INDEXED_COLS, "-1"),
            (NUM_INDEXED_COLS, "0"),
            (LOG_RETENTION, "interval 0 seconds"),
            (APPEND_ONLY, "TRUE"),
            (CHECKPOINT_POLICY, "v2"),
            ("user.anything", "-1"),
        ] {
            assert!(validate_property(k, v).is_ok(), "{k}={v}");
        }
    }

    #[test]
    fn column_lists() {
        assert_eq!(
            split_column_list("a, b ,`c,d`.e"),
            vec!["a", "b", "`c,d`.e"]
        );
    }

    #[test]
    fn stats_leaves_follow_the_column_list_or_the_count() {
        let leaves = || -> Vec<Vec<String>> {
            [
                vec!["a.b"],
                vec!["a", "b"],
                vec!["s", "x"],
                vec!["s", "y"],
                vec!["z"],
            ]
            .iter()
            .map(|p| p.iter().map(|s| s.to_string()).collect())
            .collect()
        };
        let kept = |conf: &[(&str, &str)]| {
            let conf: HashMap<String, String> = conf
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let mut l = leaves();
            TableProperties(&conf).retain_stats_leaves(&mut l, |p| p.as_slice());
            l.into_iter().map(|p| p.join("/")).collect::<Vec<_>>()
        };
        // A backtick-quoted name keeps its dot; a struct name keeps every leaf under it.
        assert_eq!(
            kept(&[(STATS_COLUMNS, "`a.b`, S")]),
            vec!["a.b", "s/x", "s/y"]
        );
        assert_eq!(kept(&[(STATS_COLUMNS, "a.b")]), vec!["a/b"]);
        assert_eq!(kept(&[(NUM_INDEXED_COLS, "2")]), vec!["a.b", "a/b"]);
        assert_eq!(kept(&[(NUM_INDEXED_COLS, "-1")]).len(), 5);
        assert_eq!(kept(&[]).len(), 5);
    }

    #[test]
    fn typos_of_known_properties_are_suggested() {
        assert_eq!(
            nearest_known_property("delta.enableDeletionVector"),
            Some(ENABLE_DELETION_VECTORS)
        );
        assert_eq!(
            nearest_known_property("delta.enablechangedatafeed"),
            Some(ENABLE_CDF)
        );
        assert_eq!(
            nearest_known_property("delta.logRetentionDurations"),
            Some(LOG_RETENTION)
        );
        assert_eq!(nearest_known_property("delta.somethingElseEntirely"), None);
    }
}
