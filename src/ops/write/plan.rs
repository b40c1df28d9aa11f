//! The plan of a batch write (append, overwrite, `replaceWhere`): decided once the first
//! batch's schema is known and before any file is written or read. It holds the mode, the
//! partitioning, the schema decision (enforcement, and evolution with schema merging), the
//! bound `replaceWhere` predicate and how the rows it replaces are removed. Building it
//! reads nothing, so it is unit-tested from schemas alone.

use std::fmt;

use alluvium_expr::{Expr, Predicate, bind};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{StructField, StructType};
use arrow_schema::Schema;

use crate::Result;
use crate::rows::input;

/// What a write does to the table's rows.
#[derive(Debug, Clone)]
pub(crate) enum WriteMode {
    Append,
    /// Overwrite everything, or the rows matching a predicate (parsed, and as written).
    Overwrite(Option<(Expr, String)>),
}

/// How the rows an overwrite replaces leave the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removal {
    /// An append removes nothing.
    Nothing,
    /// Every file of the snapshot is removed.
    WholeTable,
    /// `replaceWhere` on a table that writes deletion vectors: the matching rows are deleted
    /// as DELETE deletes them.
    DeletionVectors,
    /// `replaceWhere` otherwise: files with a matching row are removed, those matching in
    /// part rewritten without those rows (recorded as `delete` changes on a change-data-feed
    /// table, and the new rows as `insert`).
    CopyOnWrite,
}

/// What the table contributes to a write plan.
pub(crate) struct WriteTable<'a> {
    pub schema: &'a StructType,
    pub partition_columns: &'a [String],
    pub column_mapping: ColumnMappingMode,
    /// Rows are deleted with deletion vectors (else by copy-on-write).
    pub deletion_vectors: bool,
}

/// A batch write, planned: see the module docs.
#[derive(Debug)]
pub(crate) struct WritePlan {
    pub mode: WriteMode,
    pub partition_columns: Vec<String>,
    /// The table schema the rows are written with (evolved when `new_columns`).
    pub schema: StructType,
    /// Input columns added to the table (schema merging).
    pub new_columns: Vec<String>,
    /// The `replaceWhere` predicate, bound to `schema`, and as written.
    pub replace_where: Option<(Predicate, String)>,
    pub removal: Removal,
}

impl WritePlan {
    /// Plans a write of rows whose first batch has the schema `first` (`None`: no rows) to
    /// the table `table` describes. `evolve` gives the table schema with new fields added,
    /// recording the change for the commit.
    ///
    /// # Errors
    /// [`Error::SchemaMismatch`](crate::Error::SchemaMismatch) for input the table cannot
    /// take (missing NOT NULL columns, other types, extra columns without schema merging);
    /// a `replaceWhere` predicate that does not bind.
    pub(crate) fn new(
        table: &WriteTable<'_>,
        first: Option<&Schema>,
        mode: WriteMode,
        merge_schema: bool,
        evolve: &mut dyn FnMut(&StructType, Vec<StructField>) -> StructType,
    ) -> Result<WritePlan> {
        let mut schema = table.schema.clone();
        let mut new_columns = Vec::new();
        if let Some(first) = first {
            let new_fields =
                input::check_schema(&schema, first, table.partition_columns, merge_schema)?;
            if !new_fields.is_empty() {
                new_columns = new_fields.iter().map(|f| f.name.clone()).collect();
                schema = evolve(&schema, new_fields);
            }
        }
        let replace_where = match &mode {
            WriteMode::Overwrite(Some((e, text))) => Some((
                bind(e, &schema, table.partition_columns, table.column_mapping)?,
                text.clone(),
            )),
            _ => None,
        };
        let removal = match (&mode, table.deletion_vectors) {
            (WriteMode::Append, _) => Removal::Nothing,
            (WriteMode::Overwrite(None), _) => Removal::WholeTable,
            (WriteMode::Overwrite(Some(_)), true) => Removal::DeletionVectors,
            (WriteMode::Overwrite(Some(_)), false) => Removal::CopyOnWrite,
        };
        Ok(WritePlan {
            mode,
            partition_columns: table.partition_columns.to_vec(),
            schema,
            new_columns,
            replace_where,
            removal,
        })
    }

    /// The commit's `operationParameters`, as Delta writes them for `WRITE`: `mode`
    /// (`Append` / `Overwrite`), `partitionBy` (a JSON list) and, for `replaceWhere`,
    /// `predicate` (a JSON list holding the predicate as written).
    pub(crate) fn parameters(&self) -> Vec<(&'static str, String)> {
        let mode = match self.mode {
            WriteMode::Append => "Append",
            WriteMode::Overwrite(_) => "Overwrite",
        };
        let mut out = vec![
            ("mode", mode.to_string()),
            (
                "partitionBy",
                serde_json::to_string(&self.partition_columns).unwrap_or_default(),
            ),
        ];
        if let Some((_, text)) = &self.replace_where {
            out.push((
                "predicate",
                serde_json::to_string(&vec![text]).unwrap_or_default(),
            ));
        }
        out
    }
}

impl fmt::Display for WritePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.replace_where {
            Some((_, text)) => writeln!(f, "WRITE replaceWhere {text}")?,
            None => match self.mode {
                WriteMode::Append => writeln!(f, "WRITE append")?,
                WriteMode::Overwrite(_) => writeln!(f, "WRITE overwrite")?,
            },
        }
        if !self.partition_columns.is_empty() {
            writeln!(f, "  partitioned by: {}", self.partition_columns.join(", "))?;
        }
        if !self.new_columns.is_empty() {
            writeln!(f, "  new columns: {}", self.new_columns.join(", "))?;
        }
        let removal = match self.removal {
            Removal::Nothing => "nothing",
            Removal::WholeTable => "every file",
            Removal::DeletionVectors => "matching rows, with deletion vectors",
            Removal::CopyOnWrite => "matching rows, by rewriting their files",
        };
        write!(f, "  removes: {removal}")
    }
}

#[cfg(test)]
mod tests {
    use alluvium_expr::parse_expr;
    use alluvium_txlog::schema::{DataType, PrimitiveType};
    use arrow_schema::Field;

    use super::*;

    fn table_schema() -> StructType {
        StructType::new(vec![
            StructField::new("id", DataType::Primitive(PrimitiveType::Long), true),
            StructField::new("p", DataType::Primitive(PrimitiveType::String), true),
        ])
    }

    fn input(extra: bool) -> Schema {
        let mut fields = vec![
            Field::new("id", arrow_schema::DataType::Int64, true),
            Field::new("p", arrow_schema::DataType::Utf8, true),
        ];
        if extra {
            fields.push(Field::new("x", arrow_schema::DataType::Int32, true));
        }
        Schema::new(fields)
    }

    fn plan(
        mode: WriteMode,
        first: Option<&Schema>,
        merge_schema: bool,
        dv: bool,
    ) -> Result<WritePlan> {
        let schema = table_schema();
        let partitions = vec!["p".to_string()];
        let table = WriteTable {
            schema: &schema,
            partition_columns: &partitions,
            column_mapping: ColumnMappingMode::None,
            deletion_vectors: dv,
        };
        let mut evolve = |s: &StructType, new: Vec<StructField>| {
            let mut s = s.clone();
            s.fields.extend(new);
            s
        };
        WritePlan::new(&table, first, mode, merge_schema, &mut evolve)
    }

    #[test]
    fn an_append_removes_nothing_and_records_its_mode_and_partitioning() {
        let p = plan(WriteMode::Append, Some(&input(false)), false, false).unwrap();
        assert_eq!(p.removal, Removal::Nothing);
        assert!(p.replace_where.is_none() && p.new_columns.is_empty());
        assert_eq!(
            p.parameters(),
            vec![
                ("mode", "Append".to_string()),
                ("partitionBy", r#"["p"]"#.to_string())
            ]
        );
        assert!(p.to_string().contains("partitioned by: p"));
    }

    #[test]
    fn overwrites_remove_every_file_or_the_matching_rows() {
        let p = plan(WriteMode::Overwrite(None), None, false, true).unwrap();
        assert_eq!(p.removal, Removal::WholeTable);
        let replace = || {
            let text = "p = 'a' AND id > 3";
            WriteMode::Overwrite(Some((parse_expr(text).unwrap(), text.to_string())))
        };
        let p = plan(replace(), Some(&input(false)), false, true).unwrap();
        assert_eq!(p.removal, Removal::DeletionVectors);
        let (pred, text) = p.replace_where.as_ref().unwrap();
        let mut cols: Vec<String> = pred.columns().iter().map(|c| c.path.join(".")).collect();
        cols.sort();
        assert_eq!(cols, vec!["id", "p"]);
        assert_eq!(text, "p = 'a' AND id > 3");
        let params: Vec<(&str, String)> = p.parameters();
        assert_eq!(
            params.last(),
            Some(&("predicate", r#"["p = 'a' AND id > 3"]"#.to_string()))
        );
        let p = plan(replace(), Some(&input(false)), false, false).unwrap();
        assert_eq!(p.removal, Removal::CopyOnWrite);
        assert!(p.to_string().contains("rewriting"), "{p}");
        // A predicate over a column the table lacks does not plan.
        let bad = WriteMode::Overwrite(Some((parse_expr("nope = 1").unwrap(), "nope = 1".into())));
        assert!(plan(bad, Some(&input(false)), false, false).is_err());
    }

    #[test]
    fn the_schema_decision_is_taken_on_the_first_batch() {
        let extra = input(true);
        let e = plan(WriteMode::Append, Some(&extra), false, false).unwrap_err();
        assert!(e.to_string().contains('x'), "{e}");
        let p = plan(WriteMode::Append, Some(&extra), true, false).unwrap();
        assert_eq!(p.new_columns, vec!["x"]);
        assert!(p.schema.field("x").is_some());
        // A predicate may name the new column.
        let text = "x > 1";
        let mode = WriteMode::Overwrite(Some((parse_expr(text).unwrap(), text.to_string())));
        let p = plan(mode, Some(&extra), true, false).unwrap();
        assert!(p.replace_where.is_some());
        // No rows: nothing to check or evolve.
        let p = plan(WriteMode::Append, None, false, false).unwrap();
        assert_eq!(p.schema, table_schema());
    }
}
