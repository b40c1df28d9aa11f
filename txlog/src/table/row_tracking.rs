//! Row tracking (PROTOCOL.md "Row Tracking"): when the feature is supported, whether it is
//! enabled, the `delta.rowTracking` domain holding the row-id high-water mark, and the
//! names of the hidden materialised row-id and row-commit-version columns.
//!
//! This module only reads and builds the log-side values; the commit loop (`alluvium_mvcc`)
//! assigns `baseRowId` / `defaultRowCommitVersion` at commit time, and the data-file layer
//! reads and writes the materialised columns.

use std::collections::HashMap;

use crate::actions::{Add, DomainMetadata, Metadata, Protocol};
pub use crate::properties::{
    ENABLE_ROW_TRACKING as ENABLE,
    MATERIALIZED_ROW_COMMIT_VERSION_COLUMN as MATERIALIZED_ROW_COMMIT_VERSION,
    MATERIALIZED_ROW_ID_COLUMN as MATERIALIZED_ROW_ID, ROW_TRACKING_SUSPENDED as SUSPENDED,
};
use crate::schema::{COLUMN_MAPPING_PHYSICAL_NAME, StructType};
use crate::stats::FileStats;
use crate::table::TableFeature;
use crate::{LogError, Result};

/// The writer feature's name ([`TableFeature::RowTracking`]).
pub const FEATURE: &str = TableFeature::RowTracking.as_str();
/// The domain holding the high-water mark (PROTOCOL.md "Writer Requirements for Row
/// Tracking").
pub const DOMAIN: &str = "delta.rowTracking"; // vocabulary: a domain name, not a property
/// The key of the high-water mark in the domain's configuration.
pub const HIGH_WATER_MARK_KEY: &str = "rowIdHighWaterMark";
/// The prefix of generated materialised row-id column names.
pub const ROW_ID_COLUMN_PREFIX: &str = "_row-id-col-";
/// The prefix of generated materialised row-commit-version column names.
pub const ROW_COMMIT_VERSION_COLUMN_PREFIX: &str = "_row-commit-version-col-";

fn is_true(configuration: &HashMap<String, String>, key: &str) -> bool {
    configuration
        .get(key)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Whether writers must assign row ids and commit versions: the protocol supports
/// `rowTracking` and `delta.rowTrackingSuspended` is not `true`.
pub fn must_assign(protocol: &Protocol, configuration: &HashMap<String, String>) -> bool {
    protocol.supports_writer_feature(&TableFeature::RowTracking)
        && !is_true(configuration, SUSPENDED)
}

/// Whether row tracking is enabled (`delta.enableRowTracking=true` on a table supporting
/// the feature): every live file has row ids, and writers preserve them.
pub fn is_enabled(protocol: &Protocol, configuration: &HashMap<String, String>) -> bool {
    protocol.supports_writer_feature(&TableFeature::RowTracking) && is_true(configuration, ENABLE)
}

/// Whether the configuration asks for row tracking (`delta.enableRowTracking=true`).
pub fn is_requested(configuration: &HashMap<String, String>) -> bool {
    is_true(configuration, ENABLE)
}

/// The names of the hidden materialised columns, as the table configuration gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaterializedColumns {
    /// The physical column holding preserved row ids.
    pub row_id: String,
    /// The physical column holding preserved row commit versions.
    pub row_commit_version: String,
}

/// The materialised column names of the configuration, when both are set.
pub fn materialized_columns(
    configuration: &HashMap<String, String>,
) -> Option<MaterializedColumns> {
    Some(MaterializedColumns {
        row_id: configuration.get(MATERIALIZED_ROW_ID)?.clone(),
        row_commit_version: configuration.get(MATERIALIZED_ROW_COMMIT_VERSION)?.clone(),
    })
}

/// Fresh, unique materialised column names (`_row-id-col-<uuid>`,
/// `_row-commit-version-col-<uuid>`): the names cannot collide with a user column.
pub fn new_materialized_columns() -> MaterializedColumns {
    MaterializedColumns {
        row_id: format!(
            "{ROW_ID_COLUMN_PREFIX}{}",
            alluvium_storage::ids::new_uuid()
        ),
        row_commit_version: format!(
            "{ROW_COMMIT_VERSION_COLUMN_PREFIX}{}",
            alluvium_storage::ids::new_uuid()
        ),
    }
}

/// Adds generated materialised column names to `configuration` when it enables row
/// tracking and does not name them yet. Returns whether it changed anything.
pub fn assign_materialized_columns(configuration: &mut HashMap<String, String>) -> bool {
    if !is_requested(configuration) {
        return false;
    }
    let mut changed = false;
    let fresh = new_materialized_columns();
    if !configuration.contains_key(MATERIALIZED_ROW_ID) {
        configuration.insert(MATERIALIZED_ROW_ID.into(), fresh.row_id);
        changed = true;
    }
    if !configuration.contains_key(MATERIALIZED_ROW_COMMIT_VERSION) {
        configuration.insert(
            MATERIALIZED_ROW_COMMIT_VERSION.into(),
            fresh.row_commit_version,
        );
        changed = true;
    }
    changed
}

/// Checks the metadata of a table enabling row tracking (PROTOCOL.md "Writer Requirements
/// for Row Tracking", enablement): both materialised column names are set, distinct, and
/// equal to no column of the schema (logical or physical name, case-insensitively), and
/// row tracking is not suspended.
///
/// # Errors
/// [`LogError::Invalid`] naming the property or the clashing column.
pub fn check_enablement(metadata: &Metadata, schema: &StructType) -> Result<()> {
    let conf = &metadata.configuration;
    if is_true(conf, SUSPENDED) {
        return Err(LogError::Invalid(format!(
            "{ENABLE}=true cannot be set together with {SUSPENDED}=true"
        )));
    }
    let Some(cols) = materialized_columns(conf) else {
        return Err(LogError::Invalid(format!(
            "{ENABLE}=true needs {MATERIALIZED_ROW_ID} and {MATERIALIZED_ROW_COMMIT_VERSION}"
        )));
    };
    if cols.row_id.eq_ignore_ascii_case(&cols.row_commit_version) {
        return Err(LogError::Invalid(format!(
            "{MATERIALIZED_ROW_ID} and {MATERIALIZED_ROW_COMMIT_VERSION} are both `{}`",
            cols.row_id
        )));
    }
    for f in &schema.fields {
        let physical = f
            .metadata
            .get(COLUMN_MAPPING_PHYSICAL_NAME)
            .and_then(|v| v.as_str())
            .unwrap_or(&f.name);
        for name in [&cols.row_id, &cols.row_commit_version] {
            if name.eq_ignore_ascii_case(&f.name) || name.eq_ignore_ascii_case(physical) {
                return Err(LogError::Invalid(format!(
                    "the materialised row-tracking column `{name}` clashes with column `{}`",
                    f.name
                )));
            }
        }
    }
    Ok(())
}

/// The high-water mark recorded in the domains (`None`: no row id assigned yet).
///
/// # Errors
/// [`LogError::Invalid`] for a `delta.rowTracking` domain whose configuration is not
/// `{"rowIdHighWaterMark": <long>}`.
pub fn high_water_mark<'a>(
    domains: impl IntoIterator<Item = &'a DomainMetadata>,
) -> Result<Option<i64>> {
    for d in domains {
        if d.domain == DOMAIN && !d.removed {
            return parse_high_water_mark(&d.configuration).map(Some);
        }
    }
    Ok(None)
}

/// Parses the configuration of a `delta.rowTracking` domain.
///
/// # Errors
/// [`LogError::Invalid`] when it is not a JSON object with a long `rowIdHighWaterMark`.
pub fn parse_high_water_mark(configuration: &str) -> Result<i64> {
    serde_json::from_str::<serde_json::Value>(configuration)
        .ok()
        .and_then(|v| v.get(HIGH_WATER_MARK_KEY).and_then(|h| h.as_i64()))
        .ok_or_else(|| {
            LogError::Invalid(format!(
                "domain {DOMAIN} has configuration {configuration:?}, not {{\"{HIGH_WATER_MARK_KEY}\": <long>}}"
            ))
        })
}

/// The `delta.rowTracking` domain recording `high_water_mark`.
pub fn domain(high_water_mark: i64) -> DomainMetadata {
    DomainMetadata {
        domain: DOMAIN.into(),
        configuration: serde_json::json!({ HIGH_WATER_MARK_KEY: high_water_mark }).to_string(),
        removed: false,
    }
}

/// The physical row count of a file (`stats.numRecords`), which its fresh row ids span.
///
/// # Errors
/// [`LogError::Invalid`] naming the file when its statistics do not record it: ids
/// cannot be assigned without it.
pub fn num_records(add: &Add) -> Result<i64> {
    add.stats
        .as_deref()
        .and_then(FileStats::parse)
        .and_then(|s| s.num_records)
        .filter(|n| *n >= 0)
        .ok_or_else(|| {
            LogError::Invalid(format!(
                "file {} has no stats.numRecords: row ids cannot be assigned to it",
                add.path
            ))
        })
}

/// The highest fresh row id a file's `baseRowId` covers (`baseRowId + numRecords - 1`),
/// when it has one and its row count is known.
pub fn last_row_id(add: &Add) -> Option<i64> {
    let base = add.base_row_id?;
    let n = num_records(add).ok()?;
    Some(base + n - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(kv: &[(&str, &str)]) -> HashMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn proto(features: &[&str]) -> Protocol {
        Protocol {
            min_reader_version: 1,
            min_writer_version: 7,
            reader_features: None,
            writer_features: Some(features.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn supported_means_assign_unless_suspended() {
        let p = proto(&["rowTracking", "domainMetadata"]);
        assert!(must_assign(&p, &conf(&[])));
        assert!(!is_enabled(&p, &conf(&[])));
        assert!(is_enabled(&p, &conf(&[(ENABLE, "true")])));
        assert!(!must_assign(&p, &conf(&[(SUSPENDED, "true")])));
        assert!(!must_assign(&proto(&["domainMetadata"]), &conf(&[])));
    }

    #[test]
    fn the_write_gate_takes_row_tracking_only_with_domain_metadata() {
        use crate::features::check_write_supported;
        let schema = StructType::new(vec![]);
        let m = meta(conf(&[(ENABLE, "true")]));
        check_write_supported(&proto(&["rowTracking", "domainMetadata"]), &m, &schema).unwrap();
        let e = check_write_supported(&proto(&["rowTracking"]), &m, &schema).unwrap_err();
        assert!(e.to_string().contains("domainMetadata"), "{e}");
    }

    #[test]
    fn high_water_mark_round_trips_and_rejects_garbage() {
        let d = domain(41);
        assert_eq!(high_water_mark([&d]).unwrap(), Some(41));
        assert_eq!(high_water_mark(std::iter::empty()).unwrap(), None);
        let bad = DomainMetadata {
            domain: DOMAIN.into(),
            configuration: "{}".into(),
            removed: false,
        };
        assert!(high_water_mark([&bad]).is_err());
    }

    fn meta(configuration: HashMap<String, String>) -> Metadata {
        Metadata {
            configuration,
            ..Metadata::with_properties(&[])
        }
    }

    #[test]
    fn enabling_names_distinct_columns_that_clash_with_nothing() {
        let mut c = conf(&[(ENABLE, "true")]);
        assert!(assign_materialized_columns(&mut c));
        assert!(!assign_materialized_columns(&mut c));
        let schema = StructType::new(vec![]);
        let m = meta(c.clone());
        check_enablement(&m, &schema).unwrap();
        let mut clash = c.clone();
        clash.insert(
            MATERIALIZED_ROW_COMMIT_VERSION.into(),
            c[MATERIALIZED_ROW_ID].clone(),
        );
        let m = meta(clash);
        assert!(check_enablement(&m, &schema).is_err());
    }
}
