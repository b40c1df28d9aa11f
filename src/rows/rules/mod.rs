//! Column rules: what the table's schema and configuration require of every row a write
//! adds (PROTOCOL.md "Column Invariants", "CHECK Constraints", "Generated Columns",
//! "Default Columns", "Identity Columns", and NOT NULL fields). SPEC.md §28.
//!
//! [`ColumnRules`] is built once per operation from the snapshot it read, before any data
//! file is uploaded: a rule whose expression alluvium cannot parse or type keeps the
//! table refused for writes (a typed [`LogError::UnsupportedFeature`] naming the column or
//! constraint), never guessed. [`ColumnRules::apply`] then runs on every batch the
//! operation writes (appended, overwritten, updated and inserted rows), in this order:
//! 1. defaults for columns the rows do not provide ([`defaults`]);
//! 2. identity values for identity columns they do not provide, refusal of provided
//!    values for `GENERATED ALWAYS` columns ([`identity`]);
//! 3. generated columns computed when not provided, checked when provided
//!    ([`generated`]);
//! 4. NOT NULL on every non-nullable field, nested struct fields included ([`not_null`]);
//! 5. CHECK constraints and legacy column invariants ([`check`]).
//!
//! A violation fails the batch, and with it the operation: nothing is committed.

pub(crate) mod check;
pub(crate) mod defaults;
pub(crate) mod generated;
pub(crate) mod identity;
pub(crate) mod not_null;
pub(crate) mod row;

use std::sync::Arc;

use crate::Snapshot;
use alluvium_mvcc::Transaction;
use alluvium_txlog::FeatureSide;
use alluvium_txlog::LogError;
use alluvium_txlog::schema::{StructField, StructType};
use alluvium_txlog::table::TableFeature;
use arrow_array::RecordBatch;

use crate::{Error, Result};

/// Whether the rows of a batch are new rows (append, overwrite, MERGE insert) or new
/// versions of existing rows (UPDATE, MERGE update).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowKind {
    /// New rows: omitted identity columns get generated values.
    Insert,
    /// Updated rows: identity values are the old rows' own (assigning one is refused when
    /// the operation is planned, see [`ColumnRules::check_assignable`]).
    Update,
}

/// Every rule of one table version, ready to apply to batches.
#[derive(Debug)]
pub(crate) struct ColumnRules {
    schema: StructType,
    defaults: Vec<defaults::DefaultColumn>,
    identity: identity::IdentityColumns,
    generated: Vec<generated::GeneratedColumn>,
    checks: Vec<check::Check>,
}

/// True if a write may omit `field` because a rule gives it a value (identity, generated
/// and default columns): schema enforcement then does not require it in the data.
pub(crate) fn may_omit(field: &StructField) -> bool {
    identity::is_identity(field)
        || field
            .metadata
            .contains_key(generated::GENERATION_EXPRESSION)
        || field.metadata.contains_key(defaults::CURRENT_DEFAULT)
}

/// The typed refusal of a table whose rule alluvium cannot apply exactly.
pub(crate) fn refusal(feature: &str, detail: String) -> Error {
    Error::Log(LogError::UnsupportedFeature {
        side: FeatureSide::Writer,
        feature: feature.to_string(),
        detail: Some(detail),
    })
}

impl ColumnRules {
    /// The rules of the table version `snapshot` read.
    ///
    /// # Errors
    /// [`LogError::UnsupportedFeature`] (writer side) naming the column or constraint
    /// whose expression or identity settings alluvium cannot apply exactly.
    pub(crate) fn for_snapshot(snapshot: &Snapshot) -> Result<Arc<ColumnRules>> {
        Self::new(
            snapshot,
            snapshot.schema(),
            &snapshot.metadata().configuration,
        )
        .map(Arc::new)
    }

    /// The rules of `snapshot`'s table with this (possibly evolved) schema and
    /// configuration.
    ///
    /// Generated, identity and default columns only count where the protocol supports
    /// their feature (PROTOCOL.md: the metadata has its meaning "when supported"; a DBR 8.0
    /// table with a `delta.generationExpression` at writer 2 is a plain table, as Delta
    /// Spark reads it). CHECK constraints and invariants are enforced whatever the
    /// protocol says: enforcing them can only refuse rows, never change them.
    ///
    /// # Errors
    /// As [`for_snapshot`](Self::for_snapshot).
    pub(crate) fn new(
        snapshot: &Snapshot,
        schema: &StructType,
        configuration: &std::collections::HashMap<String, String>,
    ) -> Result<ColumnRules> {
        Self::of_table(
            snapshot.protocol(),
            snapshot.partition_columns(),
            snapshot.column_mapping(),
            schema,
            configuration,
        )
    }

    /// The rules of a table with this protocol, partitioning, column mapping, schema and
    /// configuration (a table being created has no snapshot yet).
    ///
    /// # Errors
    /// As [`for_snapshot`](Self::for_snapshot).
    pub(crate) fn of_table(
        protocol: &alluvium_txlog::actions::Protocol,
        partitions: &[String],
        mode: alluvium_txlog::column_mapping::ColumnMappingMode,
        schema: &StructType,
        configuration: &std::collections::HashMap<String, String>,
    ) -> Result<ColumnRules> {
        let supports = |f: TableFeature| protocol.supports_writer_feature(&f);
        Ok(ColumnRules {
            schema: schema.clone(),
            defaults: if supports(TableFeature::AllowColumnDefaults) {
                defaults::collect(schema, partitions, mode)?
            } else {
                Vec::new()
            },
            identity: if supports(TableFeature::IdentityColumns) {
                identity::IdentityColumns::collect(schema)?
            } else {
                identity::IdentityColumns::collect(&StructType::new(Vec::new()))?
            },
            generated: if supports(TableFeature::GeneratedColumns) {
                generated::collect(schema, partitions, mode)?
            } else {
                Vec::new()
            },
            checks: check::collect(schema, partitions, configuration, mode)?,
        })
    }

    /// Refuses an UPDATE or MERGE assignment to `column` that the rules forbid: identity
    /// columns are never updated (Delta Spark refuses it too).
    ///
    /// # Errors
    /// [`Error::IdentityColumnViolation`] naming the column.
    pub(crate) fn check_assignable(&self, column: &str) -> Result<()> {
        self.identity.check_assignable(column)
    }

    /// True if `column` is an identity column.
    pub(crate) fn is_identity(&self, column: &str) -> bool {
        self.identity.contains(column)
    }

    /// True if `column` is a generated column.
    pub(crate) fn is_generated(&self, column: &str) -> bool {
        self.generated
            .iter()
            .any(|g| g.name.eq_ignore_ascii_case(column))
    }

    /// Applies every rule to `batch` (already conformed to the table's logical schema; the
    /// columns `provided` says the rows did not provide hold nulls) and returns the rows
    /// to write.
    ///
    /// # Errors
    /// [`Error::ConstraintViolation`], [`Error::NotNullViolation`],
    /// [`Error::GeneratedColumnMismatch`], [`Error::IdentityColumnViolation`] naming the
    /// rule and an example row; evaluation errors of the rules' expressions.
    pub(crate) fn apply(
        &self,
        batch: RecordBatch,
        provided: &dyn Fn(&str) -> bool,
        kind: RowKind,
    ) -> Result<RecordBatch> {
        if batch.num_rows() == 0 {
            return Ok(batch);
        }
        let mut batch = batch;
        for d in &self.defaults {
            if !provided(&d.name) {
                batch = d.fill(&batch)?;
            }
        }
        if kind == RowKind::Insert {
            batch = self.identity.fill(&batch, provided)?;
        }
        for g in &self.generated {
            batch = g.apply(&batch, provided(&g.name))?;
        }
        not_null::check(&self.schema, &batch)?;
        for c in &self.checks {
            c.check(&batch)?;
        }
        Ok(batch)
    }

    /// Stages the identity columns' new high-water marks (the values generated so far by
    /// this operation) in `txn`'s metadata, on top of any metadata change already staged.
    /// Nothing is staged when no value was generated.
    pub(crate) fn stage_identity(&self, snapshot: &Snapshot, txn: &mut Transaction) -> Result<()> {
        self.identity.stage(snapshot, txn)
    }
}
