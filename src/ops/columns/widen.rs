//! `ALTER TABLE ... ALTER COLUMN ... TYPE`: widening a column's type without rewriting data
//! (PROTOCOL.md "Type Widening"). Old files keep the narrower type; readers widen their
//! values (`alluvium-datafile`'s `read::widening`).

use alluvium_mvcc::Transaction;
use alluvium_txlog::features::upgrade_protocol;
use alluvium_txlog::schema::{DataType, PrimitiveType};
use alluvium_txlog::table::TableFeature;
use alluvium_txlog::type_widening::{self, ENABLE};

use super::{find_field, refuse_dependents};
use crate::commit::WriteOptions;
use crate::report::CommitSummary;
use crate::{Error, Result, Table};

impl Table {
    /// Changes the type of the top-level column `name` to the wider type `to`, in one commit
    /// (operation `CHANGE COLUMN`, parameter `column`), without rewriting data. Allowed are
    /// the type changes of PROTOCOL.md "Type Widening":
    /// `byte` → `short` → `integer` → `long`, `float` → `double`, `byte`/`short`/`integer`
    /// → `double`, `date` → `timestamp_ntz`, a decimal to one with at least as many integer
    /// and fraction digits, an integer type to a decimal that holds every value of it.
    ///
    /// As the protocol requires, the change is recorded in the field's
    /// `delta.typeChanges` (earlier changes kept), the table supports the `typeWidening`
    /// feature (the protocol is upgraded to reader 3 / writer 7 with it in both lists when
    /// it does not) and has `delta.enableTypeWidening=true` (set in the same commit when it
    /// is not set).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the table has no such column, the column is not of a
    /// primitive type, the change is not a supported widening (or, with IcebergCompat, not
    /// one Iceberg supports), `delta.enableTypeWidening` is `false`, the column is a
    /// partition column and the change is `date` → `timestamp_ntz` (its partition values
    /// are dates), or a CHECK constraint or generation expression reads the column;
    /// unsupported writer features; commit conflicts.
    pub fn change_column_type(&self, name: &str, to: PrimitiveType) -> Result<CommitSummary> {
        let snapshot = self.read_snapshot(&WriteOptions::default())?;
        let field = find_field(&snapshot, name)?;
        let column = field.name.clone();
        let Some(from) = field.data_type.as_primitive() else {
            return Err(Error::InvalidArgument(format!(
                "column `{column}` is of type {}: only columns of primitive types can change type",
                field.data_type
            )));
        };
        if from == to {
            return Err(Error::InvalidArgument(format!(
                "column `{column}` is already of type {}",
                to.name()
            )));
        }
        if !type_widening::is_supported(from, to) {
            return Err(Error::InvalidArgument(format!(
                "cannot change column `{column}` from {} to {}: Delta's type widening allows byte → short → integer → long, float → double, byte/short/integer → double, date → timestamp_ntz and wider decimals",
                from.name(),
                to.name()
            )));
        }
        if snapshot.properties().iceberg_compat().is_some()
            && !type_widening::iceberg_supports(from, to)
        {
            return Err(Error::InvalidArgument(format!(
                "cannot change column `{column}` from {} to {}: Iceberg compatibility allows only integer widening, float → double and decimal precision increases",
                from.name(),
                to.name()
            )));
        }
        let is_partition = snapshot
            .partition_columns()
            .iter()
            .any(|p| p.eq_ignore_ascii_case(&column));
        if is_partition && from == PrimitiveType::Date {
            return Err(Error::InvalidArgument(format!(
                "cannot change partition column `{column}` from date to {}: its partition values are dates",
                to.name()
            )));
        }
        let mut md = snapshot.metadata().clone();
        if md
            .configuration
            .get(ENABLE)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("false"))
        {
            return Err(Error::InvalidArgument(format!(
                "cannot change the type of `{column}`: the table sets {ENABLE}=false"
            )));
        }
        refuse_dependents(&snapshot, &column, "change the type of")?;
        md.configuration.insert(ENABLE.into(), "true".into());
        let mut schema = snapshot.schema().clone();
        let mut shown = serde_json::Value::Null;
        for f in &mut schema.fields {
            if f.name == column {
                type_widening::record_change(f, from, to);
                f.data_type = DataType::Primitive(to);
                shown = serde_json::json!({
                    "name": f.name,
                    "type": to.name(),
                    "nullable": f.nullable,
                    "metadata": f.metadata,
                });
            }
        }
        md.schema_string = schema.to_json();
        let protocol = if snapshot
            .protocol()
            .supports_writer_feature(&TableFeature::TypeWidening)
            || snapshot
                .protocol()
                .supports_writer_feature(&TableFeature::TypeWideningPreview)
        {
            snapshot.protocol().clone()
        } else {
            upgrade_protocol(snapshot.protocol(), &[TableFeature::TypeWidening])
        };
        alluvium_txlog::features::check_write_supported(&protocol, &md, &schema)?;
        let mut txn = Transaction::new(snapshot.inner(), "CHANGE COLUMN");
        txn.set_parameter("column", shown.to_string());
        if &protocol != snapshot.protocol() {
            txn.set_protocol(protocol);
        }
        txn.set_metadata(md);
        self.commit_with_policy(txn)
    }
}
