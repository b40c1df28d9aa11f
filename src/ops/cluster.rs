//! `ALTER TABLE ... CLUSTER BY (a, b)` / `CLUSTER BY NONE` (PROTOCOL.md "Clustered Table";
//! SPEC.md §29): changing a table's clustering columns in one commit, without rewriting
//! data. The columns live in the `delta.clustering` domain (physical names); the table gets
//! the `clustering` and `domainMetadata` writer features. OPTIMIZE then clusters the files
//! not yet clustered (`alluvium_compaction::optimize`).

use alluvium_mvcc::Transaction;
use alluvium_txlog::clustering::{self, LEGACY_DOMAIN, check_columns, physical_path};
use alluvium_txlog::features::upgrade_protocol;
use alluvium_txlog::schema::DataType;
use alluvium_txlog::stats::FileStats;
use alluvium_txlog::table::TableFeature;
use serde_json::{Value, json};

use crate::commit::WriteOptions;
use crate::report::CommitSummary;
use crate::{Error, Result, Table};

impl Table {
    /// Sets the clustering columns to `columns` (logical top-level column names; empty =
    /// `CLUSTER BY NONE`) in one commit (operation `CLUSTER BY`, parameters
    /// `oldClusteringColumns` / `newClusteringColumns` as Delta Spark records them). Data
    /// files are not rewritten: files clustered by the old columns stay as they are, and
    /// later OPTIMIZE runs cluster the unclustered ones by the new columns. A table that is
    /// not clustered yet gets the `clustering` and `domainMetadata` writer features.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a partitioned table, more than four columns, a column
    /// not in the schema, nested, repeated, of a type without an order, or without
    /// statistics (by the table's statistics settings, or in a live file's statistics:
    /// PROTOCOL.md requires every file to have statistics for the clustering columns);
    /// unsupported writer features; commit errors (a concurrent change of the clustering
    /// columns conflicts).
    pub fn cluster_by(&self, columns: &[&str]) -> Result<CommitSummary> {
        let snapshot = self.read_snapshot(&WriteOptions::default())?;
        let schema = snapshot.schema();
        let mode = snapshot.column_mapping();
        let names: Vec<String> = columns.iter().map(|c| c.trim().to_string()).collect();
        if names.iter().any(String::is_empty) {
            return Err(Error::InvalidArgument(
                "cluster by: an empty column name".into(),
            ));
        }
        if let Some(c) = names.iter().find(|c| c.contains('.')) {
            return Err(Error::InvalidArgument(format!(
                "cluster by: `{c}` is a nested column; alluvium clusters by top-level columns only"
            )));
        }
        check_columns(
            schema,
            snapshot.partition_columns(),
            &snapshot.metadata().configuration,
            &names,
        )
        .map_err(|e| Error::InvalidArgument(format!("cluster by: {}", detail(&e))))?;
        let mut paths = Vec::new();
        let mut logical = Vec::new();
        for c in &names {
            let (path, field) = physical_path(schema, mode, c).ok_or_else(|| {
                Error::InvalidArgument(format!("cluster by: `{c}` is not in the table schema"))
            })?;
            if matches!(field.data_type, DataType::Struct(_)) {
                return Err(Error::InvalidArgument(format!(
                    "cluster by: `{c}` is a struct"
                )));
            }
            logical.push(field.name.clone());
            paths.push(path);
        }
        let old = clustering::clustering_columns(snapshot.protocol(), |d| {
            snapshot.state().domains().get(d)
        })?
        .unwrap_or_default();
        let old_names = clustering::logical_names(schema, mode, &old)?;
        // PROTOCOL.md: a newly added clustering column must have statistics in every file.
        for (name, path) in logical.iter().zip(&paths) {
            if old.contains(path) {
                continue;
            }
            for add in snapshot.files() {
                if !has_stats_for(add.stats().as_deref(), path) {
                    return Err(Error::InvalidArgument(format!(
                        "cluster by: data file {} has no statistics for `{name}`; every file must have them before `{name}` can be a clustering column",
                        add.path()
                    )));
                }
            }
        }
        let legacy = snapshot
            .protocol()
            .supports_writer_feature(&TableFeature::Liquid)
            && !snapshot
                .protocol()
                .supports_writer_feature(&TableFeature::Clustering);
        let protocol = if legacy {
            snapshot.protocol().clone()
        } else {
            upgrade_protocol(
                snapshot.protocol(),
                &[TableFeature::DomainMetadata, TableFeature::Clustering],
            )
        };
        let mut txn = Transaction::new(snapshot.inner(), "CLUSTER BY");
        txn.set_parameter("oldClusteringColumns", old_names.join(","));
        txn.set_parameter("newClusteringColumns", logical.join(","));
        if legacy {
            // Databricks' preview feature keeps its own domain and form.
            let cols: Vec<Value> = paths.iter().map(|p| json!({ "physicalName": p })).collect();
            txn.set_domain(alluvium_txlog::actions::DomainMetadata {
                domain: LEGACY_DOMAIN.into(),
                configuration: json!({ "clusteringColumns": cols, "domainName": LEGACY_DOMAIN })
                    .to_string(),
                removed: false,
            });
        } else {
            txn.set_domain(clustering::domain_action(&paths));
        }
        if &protocol != snapshot.protocol() {
            txn.set_protocol(protocol);
        }
        let iceberg = alluvium_iceberg::sync_after_commit(&snapshot.metadata().configuration);
        let (commit, committed) = self.commit_publishing(txn)?;
        let mut post = self.post_commit(commit.version);
        if iceberg {
            post.iceberg_sync =
                Some(self.iceberg_after_commit(commit.version, Some(snapshot.inner())));
        }
        let mut summary = CommitSummary::new(commit, post);
        summary.snapshot = committed;
        Ok(summary)
    }

    /// The clustering columns of the latest version (logical names): `None` when the table
    /// is not clustered, empty when it is clustered by nothing.
    ///
    /// # Errors
    /// Loading the snapshot; an unreadable clustering domain.
    pub fn clustering_columns(&self) -> Result<Option<Vec<String>>> {
        let snapshot = self.snapshot()?;
        let Some(paths) = clustering::clustering_columns(snapshot.protocol(), |d| {
            snapshot.state().domains().get(d)
        })?
        else {
            return Ok(None);
        };
        Ok(Some(clustering::logical_names(
            snapshot.schema(),
            snapshot.column_mapping(),
            &paths,
        )?))
    }
}

/// The detail of a refusal, without the feature-name prefix.
fn detail(e: &alluvium_txlog::LogError) -> String {
    match e {
        alluvium_txlog::LogError::UnsupportedFeature {
            detail: Some(d), ..
        } => d.clone(),
        other => other.to_string(),
    }
}

/// Whether a file's statistics cover the column at physical `path` (its null count at
/// least: min/max are absent for all-null columns).
fn has_stats_for(stats: Option<&str>, path: &[String]) -> bool {
    let Some(stats) = stats.and_then(FileStats::parse) else {
        return false;
    };
    let Some(mut v) = stats.null_count.as_ref().map(|m| Value::Object(m.clone())) else {
        return false;
    };
    for p in path {
        match v.get(p) {
            Some(next) => v = next.clone(),
            None => return false,
        }
    }
    true
}
