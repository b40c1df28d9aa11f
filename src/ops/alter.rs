//! `ALTER TABLE ... SET/UNSET TBLPROPERTIES`: changing table properties of an existing
//! table in one commit, with the protocol upgrade the new properties require
//! (PROTOCOL.md "Table Features", "Deletion Vectors", "Change Data Feed",
//! "Column Mapping", "Append-only Tables").

use std::collections::HashMap;

use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::Metadata;
use alluvium_txlog::column_mapping::{ColumnMappingMode, assign_column_mapping};
use alluvium_txlog::features::upgrade_protocol;
use alluvium_txlog::properties::{
    APPEND_ONLY, COLUMN_MAPPING_MAX_ID, COLUMN_MAPPING_MODE, CONSTRAINT_PREFIX, ENABLE_CDC_LEGACY,
    ENABLE_CDF, ENABLE_ICT, FEATURE_PREFIX, MIN_READER_VERSION, MIN_WRITER_VERSION,
    TableProperties, is_known_property, nearest_known_property,
};
use alluvium_txlog::row_tracking;
use alluvium_txlog::schema::{COLUMN_MAPPING_PHYSICAL_NAME, DataType, StructField, StructType};
use alluvium_txlog::table::TableFeature;

use crate::commit::{WriteOptions, WriteOutcome, outcome_if_done};
use crate::ops::create::check_properties;
use crate::report::CommitSummary;
use crate::{Error, Result, Snapshot, Table};

impl Table {
    /// Sets the properties `set` (key-value pairs, in the shape [`create`](Self::create)
    /// takes: a map or a list of pairs, [`NO_PROPERTIES`](crate::NO_PROPERTIES) for none)
    /// and removes the keys `unset`, in one commit
    /// (operation `SET TBLPROPERTIES`, or `UNSET TBLPROPERTIES` when nothing is set), with
    /// the protocol the resulting properties need:
    /// * `delta.enableDeletionVectors=true`: the `deletionVectors` reader and writer
    ///   feature (reader 3 / writer 7, a legacy table's implied features listed too);
    /// * `delta.enableChangeDataFeed=true`: writer 4 on a legacy table, else the
    ///   `changeDataFeed` writer feature;
    /// * `delta.columnMapping.mode=name` (from `none`): reader 2 / writer 5 (or the
    ///   `columnMapping` feature), every field gets an id and its current name as physical
    ///   name (existing data files store columns under those names);
    /// * `delta.appendOnly=true`: writer 2 (or the `appendOnly` feature);
    /// * `delta.enableRowTracking=true`: the `rowTracking` and `domainMetadata` writer
    ///   features, generated materialised column names, and every live file without row
    ///   ids re-added (`dataChange=false`) so the commit gives it fresh ones (SPEC.md §27);
    /// * `delta.feature.<name>=supported`: that feature.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown `delta.*` key, a value that does not parse
    /// (as [`create`](Self::create) checks them), an unset key that is not set, a column
    /// mapping change other than `none` to `name`, and properties whose feature `alter`
    /// cannot enable (in-commit timestamps, protocol versions, CHECK constraints); commit
    /// errors (a concurrent metadata change conflicts).
    pub fn set_properties<K, V>(
        &self,
        set: impl IntoIterator<Item = (K, V)>,
        unset: &[&str],
    ) -> Result<CommitSummary>
    where
        K: Into<String>,
        V: Into<String>,
    {
        self.set_properties_with(set, unset, &WriteOptions::default())?
            .into_committed("SET TBLPROPERTIES")
    }

    /// [`set_properties`](Self::set_properties) with write options: the commit carries
    /// `options`' commitInfo fields, and with an application transaction it is made once
    /// (a repeat of a recorded version is [`WriteOutcome::Skipped`], nothing committed), as
    /// the data writes are (SPEC.md §22).
    ///
    /// # Errors
    /// As [`set_properties`](Self::set_properties).
    pub fn set_properties_with<K, V>(
        &self,
        set: impl IntoIterator<Item = (K, V)>,
        unset: &[&str],
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        K: Into<String>,
        V: Into<String>,
    {
        // Collected in the caller's order, so that the first bad key is the one reported.
        let set: Vec<(String, String)> =
            set.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        if set.is_empty() && unset.is_empty() {
            return Err(Error::InvalidArgument(
                "alter: nothing to set or unset".into(),
            ));
        }
        let snapshot = self.read_snapshot(options)?;
        self.set_properties_on(&snapshot, set, unset, options)
    }

    /// [`set_properties`](Self::set_properties) on `snapshot`, already read (and checked
    /// as a write's read snapshot is), with `set` not empty or `unset` not empty.
    fn set_properties_on(
        &self,
        snapshot: &Snapshot,
        set: Vec<(String, String)>,
        unset: &[&str],
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        let operation = if set.is_empty() {
            "UNSET TBLPROPERTIES"
        } else {
            "SET TBLPROPERTIES"
        };
        let mut txn = Transaction::new(snapshot.inner(), operation);
        // A retried job is skipped before its change is checked against the table it
        // already changed (an unset key would no longer be set).
        if let Some(done) = outcome_if_done(&mut txn, snapshot, options) {
            return Ok(done);
        }
        let mut requested: HashMap<String, String> = HashMap::new();
        for (k, v) in &set {
            let k = k.trim();
            if !is_known_property(k) {
                let hint = nearest_known_property(k)
                    .map(|n| format!(" (did you mean {n}?)"))
                    .unwrap_or_default();
                return Err(Error::InvalidArgument(format!(
                    "unknown table property {k}{hint}: delta.* keys must be Delta table properties"
                )));
            }
            if k.starts_with(CONSTRAINT_PREFIX) {
                // Adding one must check the existing rows first (PROTOCOL.md "CHECK
                // Constraints"), which add_constraint does.
                return Err(Error::InvalidArgument(format!(
                    "table property {k} cannot be set directly: add the constraint with add_constraint, which checks the existing rows first"
                )));
            }
            if k == MIN_READER_VERSION || k == MIN_WRITER_VERSION || k == ENABLE_ICT {
                return Err(Error::InvalidArgument(format!(
                    "table property {k} cannot be changed by alter"
                )));
            }
            requested.insert(k.to_string(), v.trim().to_string());
        }
        check_properties(&requested)?;
        let mut md = snapshot.metadata().clone();
        let old_mode = snapshot.column_mapping();
        for k in unset {
            let k = k.trim();
            if k.eq_ignore_ascii_case(COLUMN_MAPPING_MODE) && old_mode != ColumnMappingMode::None {
                return Err(Error::InvalidArgument(
                    "column mapping cannot be turned off by unsetting delta.columnMapping.mode"
                        .into(),
                ));
            }
            if md.configuration.remove(k).is_none() {
                return Err(Error::InvalidArgument(format!(
                    "cannot unset table property {k}: it is not set"
                )));
            }
        }
        let mut features: Vec<TableFeature> = Vec::new();
        for (k, v) in &requested {
            if let Some(name) = k.strip_prefix(FEATURE_PREFIX) {
                if !(v.eq_ignore_ascii_case("supported") || v.eq_ignore_ascii_case("enabled")) {
                    return Err(Error::InvalidArgument(format!(
                        "table property {k}={v}: must be supported"
                    )));
                }
                features.push(TableFeature::from_name(name));
            } else {
                md.configuration.insert(k.clone(), v.clone());
            }
        }
        let on = |key: &str| {
            md.configuration
                .get(key)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        };
        if TableProperties(&md.configuration).deletion_vectors() {
            features.push(TableFeature::DeletionVectors);
        }
        if on(ENABLE_CDF) || on(ENABLE_CDC_LEGACY) {
            features.push(TableFeature::ChangeDataFeed);
        }
        if on(APPEND_ONLY) {
            features.push(TableFeature::AppendOnly);
        }
        let new_mode = md
            .configuration
            .get(COLUMN_MAPPING_MODE)
            .and_then(|v| ColumnMappingMode::parse(v))
            .unwrap_or(ColumnMappingMode::None);
        if new_mode != old_mode {
            if !(old_mode == ColumnMappingMode::None && new_mode == ColumnMappingMode::Name) {
                return Err(Error::InvalidArgument(format!(
                    "column mapping can only be enabled in name mode on an existing table (from {old_mode:?} to {new_mode:?})"
                )));
            }
            let mut schema = snapshot.schema().clone();
            enable_name_mapping(&mut md, &mut schema);
            md.schema_string = schema.to_json();
        }
        if new_mode != ColumnMappingMode::None {
            features.push(TableFeature::ColumnMapping);
        }
        if row_tracking::is_requested(&md.configuration) {
            row_tracking::assign_materialized_columns(&mut md.configuration);
            features.push(TableFeature::RowTracking);
        }
        // Row tracking keeps its high-water mark in a domain (PROTOCOL.md "Row Tracking").
        if features.contains(&TableFeature::RowTracking) {
            features.insert(0, TableFeature::DomainMetadata);
        }
        // A clustered table's clustering columns must keep their statistics (SPEC §29 CL2).
        alluvium_txlog::clustering::check_statistics(
            snapshot.protocol(),
            &md,
            snapshot.schema(),
            |d| snapshot.state().domains().get(d),
        )
        .map_err(|e| Error::InvalidArgument(format!("alter: {e}")))?;
        let protocol = upgrade_protocol(snapshot.protocol(), &features);

        if set.is_empty() {
            txn.set_parameter("propKeys", serde_json::to_string(unset).unwrap_or_default());
            txn.set_parameter("ifExists", false);
        } else {
            let shown: std::collections::BTreeMap<&String, &String> = requested.iter().collect();
            txn.set_parameter(
                "properties",
                serde_json::to_string(&shown).unwrap_or_default(),
            );
        }
        // Enabling row tracking on a table with files: the files without row ids are
        // re-added (dataChange=false) in the same commit, so the commit loop gives them
        // fresh ids (PROTOCOL.md "Writer Requirements for Row Tracking", backfill). They
        // are recorded as read (a concurrent removal conflicts instead of being undone),
        // and never deleted when the commit fails: they are the table's data.
        let backfill = row_tracking::is_enabled(&protocol, &md.configuration)
            && !row_tracking::is_enabled(snapshot.protocol(), &snapshot.metadata().configuration);
        if backfill {
            txn.set_discard_on_failure(false);
            let mut backfilled = 0u64;
            for a in snapshot.files().filter(|a| a.base_row_id().is_none()) {
                txn.read_file(a);
                let mut a = a.to_add();
                a.data_change = false;
                txn.add_file(a);
                backfilled += 1;
            }
            if backfilled > 0 {
                txn.set_metric("numFilesBackfilled", backfilled);
            }
        }
        if &protocol != snapshot.protocol() {
            txn.set_protocol(protocol);
        }
        let iceberg = alluvium_iceberg::sync_after_commit(&md.configuration);
        txn.set_metadata(md);
        let (commit, committed) = self.commit_publishing(txn)?;
        let mut post = self.post_commit(commit.version);
        if iceberg {
            post.iceberg_sync =
                Some(self.iceberg_after_commit(commit.version, Some(snapshot.inner())));
        }
        let mut summary = CommitSummary::new(commit, post);
        summary.snapshot = committed;
        Ok(WriteOutcome::Committed(Box::new(summary)))
    }
}

impl Table {
    /// Adds table features (their Delta names: `deletionVectors`, `changeDataFeed`,
    /// `appendOnly`, ...) to the protocol as supported, without enabling what they govern
    /// (deltalake's `alter.add_feature`): [`set_properties`](Self::set_properties) of
    /// `delta.feature.<name>=supported` for each, one commit. When the protocol must be
    /// raised for them (a legacy table goes to writer 7 to list features; a reader-writer
    /// feature needs reader 3) and `allow_protocol_versions_increase` is false, nothing is
    /// committed.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for no feature, or a raise not allowed (naming both
    /// protocols); [`set_properties`](Self::set_properties)' errors, a feature alluvium
    /// cannot write among them.
    pub fn add_features(
        &self,
        names: &[&str],
        allow_protocol_versions_increase: bool,
    ) -> Result<CommitSummary> {
        self.add_features_with(
            names,
            allow_protocol_versions_increase,
            &WriteOptions::default(),
        )?
        .into_committed("ADD FEATURE")
    }

    /// [`add_features`](Self::add_features) with write options, as
    /// [`set_properties_with`](Self::set_properties_with) takes them.
    ///
    /// # Errors
    /// As [`add_features`](Self::add_features).
    pub fn add_features_with(
        &self,
        names: &[&str],
        allow_protocol_versions_increase: bool,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        if names.is_empty() {
            return Err(Error::InvalidArgument(
                "add_features needs at least one feature".into(),
            ));
        }
        let snapshot = self.read_snapshot(options)?;
        let now = snapshot.protocol();
        let features: Vec<TableFeature> =
            names.iter().map(|n| TableFeature::from_name(n)).collect();
        let then = upgrade_protocol(now, &features);
        if !allow_protocol_versions_increase
            && (then.min_reader_version > now.min_reader_version
                || then.min_writer_version > now.min_writer_version)
        {
            return Err(Error::InvalidArgument(format!(
                "adding {} raises the protocol from reader {} / writer {} to reader {} / writer {}: allow the protocol versions to increase",
                names.join(", "),
                now.min_reader_version,
                now.min_writer_version,
                then.min_reader_version,
                then.min_writer_version
            )));
        }
        // The snapshot the check read: one listing of the log, and the check holds for
        // the version the commit is based on.
        let set = names
            .iter()
            .map(|n| (format!("{FEATURE_PREFIX}{n}"), "supported".to_string()))
            .collect();
        self.set_properties_on(&snapshot, set, &[], options)
    }
}

/// Turns column mapping on in name mode for a table whose mode was `none`: every field
/// keeps its current name as physical name (the name existing data files store it under)
/// and gets an id above `delta.columnMapping.maxColumnId`, which is raised; the property
/// `delta.columnMapping.mode=name` is set. The caller writes `schema` into `md` (after its
/// own changes) and upgrades the protocol to support `columnMapping` (PROTOCOL.md "Writer
/// Requirements for Column Mapping": reader 2 / writer 5, or the feature in both lists).
pub(crate) fn enable_name_mapping(md: &mut Metadata, schema: &mut StructType) {
    keep_names_as_physical(&mut schema.fields);
    let max_id = TableProperties(&md.configuration).column_mapping_max_id();
    let max = assign_column_mapping(schema, max_id);
    md.configuration
        .insert(COLUMN_MAPPING_MAX_ID.into(), max.to_string());
    md.configuration
        .insert(COLUMN_MAPPING_MODE.into(), "name".into());
}

/// Gives every field without a physical name its current name as physical name: the
/// names existing data files store the columns under.
fn keep_names_as_physical(fields: &mut [StructField]) {
    for f in fields.iter_mut() {
        if f.physical_name().is_none() {
            f.metadata.insert(
                COLUMN_MAPPING_PHYSICAL_NAME.into(),
                serde_json::Value::String(f.name.clone()),
            );
        }
        match &mut f.data_type {
            DataType::Struct(s) => keep_names_as_physical(&mut s.fields),
            DataType::Array(a) => {
                if let DataType::Struct(s) = &mut a.element_type {
                    keep_names_as_physical(&mut s.fields);
                }
            }
            DataType::Map(m) => {
                if let DataType::Struct(s) = &mut m.value_type {
                    keep_names_as_physical(&mut s.fields);
                }
            }
            DataType::Primitive(_) | DataType::Geospatial(_) => {}
        }
    }
}
