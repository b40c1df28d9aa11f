//! `alluvium create`, `append`, `overwrite`, `delete`, `alter`: each prints one line saying
//! what it did, or with `--json` one JSON object (`summary.rs`). The input of `append` and
//! `overwrite` is streamed into the table, with a progress bar on a terminal for large
//! files.

use std::time::Instant;

use alluvium::MvccError;
use alluvium::{Error, PrimitiveType, Result, Table, WriteOptions, WriteOutcome};
use alluvium::{StructType, arrow_schema};
use arrow::datatypes::Schema;
use clap::Args;

use super::input::{file_size, infer_schema, open_input};
use super::open;
use super::progress::{LARGE_INPUT, bytes_bar, with_spinner};
use super::summary::{JsonFlag, Outcome, bytes, count};

/// Arguments of `create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Take the schema from this file: `.parquet`, `.csv` or `.jsonl` data, or a `.json`
    /// Delta schema (`{"type":"struct","fields":[...]}`).
    #[arg(long)]
    schema_from: String,
    /// Partition columns.
    #[arg(long, value_delimiter = ',')]
    partition_by: Vec<String>,
    /// Table properties, `key=value` (repeatable).
    #[arg(long = "property", value_parser = parse_property)]
    properties: Vec<(String, String)>,
    /// Replace the table if one exists (CREATE OR REPLACE TABLE): a new, empty table with
    /// this schema, partitioning and these properties only, committed on the same log, so
    /// earlier versions stay readable.
    #[arg(long)]
    replace: bool,
}

/// Arguments of `append`.
#[derive(Debug, Args)]
pub struct AppendArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Data file: `.parquet`, `.csv` or `.jsonl`.
    file: String,
    /// Create the table from the file's schema if it does not exist.
    #[arg(long)]
    create: bool,
    /// Partition columns (with --create).
    #[arg(long, value_delimiter = ',')]
    partition_by: Vec<String>,
    /// Add new columns of the file to the table schema.
    #[arg(long)]
    merge_schema: bool,
    /// Idempotent write: the application id (with --app-version).
    #[arg(long, requires = "app_version")]
    app_id: Option<String>,
    /// Idempotent write: the application's version of this data.
    #[arg(long, requires = "app_id")]
    app_version: Option<i64>,
}

/// Arguments of `overwrite`.
#[derive(Debug, Args)]
pub struct OverwriteArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Data file: `.parquet`, `.csv` or `.jsonl`.
    file: String,
    /// Replace only the rows matching this predicate (every new row must match it).
    #[arg(long, conflicts_with = "overwrite_schema")]
    filter: Option<String>,
    /// Replace the table's schema with the file's too (Delta's overwriteSchema); CSV
    /// columns are then typed from the file, not from the table.
    #[arg(long)]
    overwrite_schema: bool,
    /// With --overwrite-schema: the new partition columns, comma-separated (default: the
    /// table's).
    #[arg(long, value_delimiter = ',', requires = "overwrite_schema")]
    partition_by: Option<Vec<String>>,
}

/// Arguments of `delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Delete the rows matching this predicate.
    #[arg(long)]
    filter: String,
}

/// Arguments of `alter`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("column_change").multiple(false)
    .conflicts_with_all(["set", "unset", "cluster_by", "add_constraint", "drop_constraint"])))]
pub struct AlterArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Set a table property, `key=value` (repeatable); the protocol is upgraded as the
    /// property requires.
    #[arg(long = "set-property", value_parser = parse_property)]
    set: Vec<(String, String)>,
    /// Remove a table property (repeatable).
    #[arg(long = "unset-property")]
    unset: Vec<String>,
    /// Change the clustering columns without rewriting data: `a,b` (at most four top-level
    /// columns with statistics), or `none`; the table becomes a clustered table (OPTIMIZE
    /// then clusters the files not yet clustered). Not combined with property changes.
    #[arg(long = "cluster-by", conflicts_with_all = ["set", "unset", "add_constraint", "drop_constraint"])]
    cluster_by: Option<String>,
    /// Add a CHECK constraint `NAME EXPR` (every existing row is checked first; the
    /// protocol is upgraded to support `checkConstraints`).
    #[arg(long = "add-constraint", num_args = 2, value_names = ["NAME", "EXPR"],
          conflicts_with_all = ["set", "unset", "drop_constraint"])]
    add_constraint: Option<Vec<String>>,
    /// Drop the CHECK constraint NAME.
    #[arg(long = "drop-constraint", value_name = "NAME",
          conflicts_with_all = ["set", "unset"])]
    drop_constraint: Option<String>,
    /// Add a column at the end: `"name TYPE [NOT NULL] [COMMENT '…']"` (NOT NULL only on a
    /// table without data; existing rows read NULL).
    #[arg(
        long = "add-column",
        value_name = "DEFINITION",
        group = "column_change"
    )]
    add_column: Option<String>,
    /// Rename a column (through column mapping, turned on in name mode if the table has
    /// none; data files are not rewritten).
    #[arg(long = "rename-column", num_args = 2, value_names = ["OLD", "NEW"], group = "column_change")]
    rename_column: Option<Vec<String>>,
    /// Drop a column (through column mapping, as --rename-column; not a partition or
    /// clustering column, nor one a constraint or generated column reads).
    #[arg(long = "drop-column", value_name = "NAME", group = "column_change")]
    drop_column: Option<String>,
    /// Widen a column's type (Delta's type widening: byte → short → int → long,
    /// float → double, int → double, date → timestamp_ntz, wider decimals).
    #[arg(long = "change-type", num_args = 2, value_names = ["COLUMN", "TYPE"], group = "column_change")]
    change_type: Option<Vec<String>>,
}

fn parse_property(s: &str) -> std::result::Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .ok_or_else(|| format!("expected key=value, got {s:?}"))
}

/// The line of a write that added rows: `appended 1000 rows in 2 files (1.2 MiB)`.
fn rows_written(verb: &str, o: &Outcome) -> String {
    format!(
        "{verb} {} in {} ({})",
        count(o.metric_u64("numOutputRows"), "row"),
        count(o.metric_u64("numFiles"), "file"),
        bytes(o.metric_u64("numOutputBytes"))
    )
}

/// Prints what an append or overwrite did (or why it did nothing).
pub(crate) fn print_write(
    o: &WriteOutcome,
    operation: &str,
    started: Instant,
    line: impl Fn(&Outcome) -> String,
    json: bool,
) {
    match o {
        WriteOutcome::Committed(r) => {
            let out = Outcome::new(operation, started).commit(r);
            let text = line(&out);
            out.line(text).emit(json);
        }
        WriteOutcome::Skipped {
            app_id,
            recorded_version,
            table_version,
        } => Outcome::new(operation, started)
            .line(format!(
                "skipped: application {app_id} already committed its version {recorded_version} (table version {table_version})"
            ))
            .field("skipped", true)
            .field("table_version", *table_version)
            .emit(json),
    }
}

fn table_arrow_schema(table: &Table) -> Result<Option<Schema>> {
    match table.snapshot() {
        Ok(s) => Ok(Some(arrow_schema(s.schema())?)),
        Err(e)
            if matches!(
                e.as_log_error(),
                Some(alluvium::LogError::TableNotFound { .. })
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

pub fn create(a: CreateArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let props = a.properties;
    let delta_schema = if a.schema_from.to_ascii_lowercase().ends_with(".json")
        && !a.schema_from.ends_with(".jsonl")
    {
        let text = std::fs::read_to_string(&a.schema_from).map_err(|e| Error::Io {
            context: a.schema_from.clone(),
            source: e,
        })?;
        Some(StructType::from_json(&text)?)
    } else {
        None
    };
    let parts = &a.partition_by;
    let (operation, verb, outcome) = match (delta_schema, a.replace) {
        (Some(schema), false) => (
            "CREATE TABLE",
            "created",
            WriteOutcome::Committed(Box::new(table.create_with_schema(schema, parts, props)?)),
        ),
        (None, false) => {
            let schema = infer_schema(&a.schema_from)?;
            let report = table.create(&schema, parts, props)?;
            (
                "CREATE TABLE",
                "created",
                WriteOutcome::Committed(Box::new(report)),
            )
        }
        (Some(schema), true) => {
            let o = table.replace_with_schema(schema, parts, props, &WriteOptions::default())?;
            ("CREATE OR REPLACE TABLE", "replaced", o)
        }
        (None, true) => {
            let schema = infer_schema(&a.schema_from)?;
            let o = table.replace(&schema, parts, props, &WriteOptions::default())?;
            ("CREATE OR REPLACE TABLE", "replaced", o)
        }
    };
    let columns = table.snapshot().map_or(0, |s| s.schema().fields.len());
    let partitioned = match a.partition_by.is_empty() {
        true => String::new(),
        false => format!(", partitioned by {}", a.partition_by.join(", ")),
    };
    let line = format!(
        "{verb} table {} ({}{partitioned})",
        table.uri(),
        count(columns as u64, "column")
    );
    print_write(&outcome, operation, started, |_| line.clone(), a.out.json);
    Ok(())
}

/// A progress bar for writing `path` when it is large enough to take a while.
fn input_progress(path: &str, what: &str) -> Option<indicatif::ProgressBar> {
    let size = file_size(path);
    (size >= LARGE_INPUT).then(|| bytes_bar(size, what))
}

/// The refusal of a write to a table that does not exist, with the flag that creates it.
fn missing_table(table: &Table, create_hint: bool) -> Error {
    let hint = match create_hint {
        true => ": use --create to create it from the file's schema",
        false => ": create it first (alluvium create, or append --create)",
    };
    Error::InvalidArgument(format!("no Delta table at {}{hint}", table.uri()))
}

/// A schema mismatch of an append gets the flag that adds the new columns.
fn merge_schema_hint(e: Error) -> Error {
    match e {
        Error::SchemaMismatch(m) if !m.contains("--merge-schema") => Error::SchemaMismatch(
            format!("{m} (to add the file's new columns to the table, use --merge-schema)"),
        ),
        e => e,
    }
}

pub fn append(a: AppendArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let known = table_arrow_schema(&table)?;
    if known.is_none() && !a.create {
        return Err(missing_table(&table, true));
    }
    let progress = input_progress(&a.file, "append");
    let input = open_input(&a.file, known.as_ref(), progress.clone())?;
    if known.is_none() {
        match table.create(&input.schema, &a.partition_by, alluvium::NO_PROPERTIES) {
            Ok(_) => {}
            // Another process created it first: append to it.
            Err(Error::Mvcc(MvccError::TableAlreadyExists { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    let options = WriteOptions::default()
        .with_merge_schema(a.merge_schema)
        .with_app_transaction(
            a.app_id
                .zip(a.app_version)
                .map(|(id, v)| alluvium::AppTransaction::new(id, v)),
        );
    let result = table.append(input.batches, &options);
    if let Some(p) = progress {
        p.finish_and_clear();
    }
    let done = result.map_err(merge_schema_hint)?;
    print_write(
        &done,
        "WRITE",
        started,
        |o| rows_written("appended", o),
        a.out.json,
    );
    Ok(())
}

pub fn overwrite(a: OverwriteArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let known = table_arrow_schema(&table)?.ok_or_else(|| missing_table(&table, false))?;
    let progress = input_progress(&a.file, "overwrite");
    let input = open_input(
        &a.file,
        (!a.overwrite_schema).then_some(&known),
        progress.clone(),
    )?;
    let result = if a.overwrite_schema {
        table.overwrite_with_schema(
            &input.schema,
            input.batches,
            a.partition_by.as_deref(),
            &WriteOptions::default(),
        )
    } else {
        table.overwrite_str(input.batches, a.filter.as_deref(), &WriteOptions::default())
    };
    if let Some(p) = progress {
        p.finish_and_clear();
    }
    let done = result?;
    let filter = a.filter.clone();
    let schema_too = a.overwrite_schema;
    print_write(
        &done,
        "WRITE",
        started,
        |o| {
            let what = match &filter {
                Some(f) => format!("replaced the rows matching {f}"),
                None if schema_too => "overwrote the table and its schema".to_string(),
                None => "overwrote the table".to_string(),
            };
            format!(
                "{what}: {}, {} removed",
                rows_written("wrote", o),
                count(o.to_json()["files_removed"].as_u64().unwrap_or(0), "file")
            )
        },
        a.out.json,
    );
    Ok(())
}

pub fn delete(a: DeleteArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let files = table.snapshot().map_or(0, |s| s.num_files());
    let done = with_spinner(format!("delete: {}", count(files as u64, "file")), || {
        table.delete_str(&a.filter, &WriteOptions::default())
    })?;
    super::dml::print_dml(&done, "DELETE", started, a.out.json);
    Ok(())
}

/// The column type of `--change-type`.
fn parse_type(text: &str) -> Result<PrimitiveType> {
    text.parse::<PrimitiveType>().map_err(|_| {
        Error::InvalidArgument(format!(
            "unknown type {text:?}: use a Delta or SQL type name (long/bigint, int, short, byte, double, float, decimal(p,s), date, timestamp_ntz, ...)"
        ))
    })
}

pub fn alter(a: AlterArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let (operation, line, report) = if let Some(spec) = &a.cluster_by {
        let columns: Vec<&str> = if spec.trim().eq_ignore_ascii_case("none") {
            Vec::new()
        } else {
            spec.split(',').map(str::trim).collect()
        };
        let line = match columns.is_empty() {
            true => "the table is clustered by no column".to_string(),
            false => format!("the table is clustered by {}", columns.join(", ")),
        };
        ("CLUSTER BY", line, table.cluster_by(&columns)?)
    } else if let Some(c) = &a.add_constraint {
        let [name, expr] = c.as_slice() else {
            return Err(Error::InvalidArgument(
                "--add-constraint takes NAME and EXPR".into(),
            ));
        };
        (
            "ADD CONSTRAINT",
            format!("added constraint {name} CHECK ({expr}); every existing row satisfies it"),
            table.add_constraint(name, expr)?,
        )
    } else if let Some(name) = &a.drop_constraint {
        (
            "DROP CONSTRAINT",
            format!("dropped constraint {name}"),
            table.drop_constraint(name)?,
        )
    } else if let Some(def) = &a.add_column {
        let field = alluvium::parse_column_definition(def)?;
        let line = format!(
            "added column {} {}{}",
            field.name,
            field.data_type,
            if field.nullable { "" } else { " NOT NULL" }
        );
        ("ADD COLUMNS", line, table.add_column(field)?)
    } else if let Some(names) = &a.rename_column {
        let [old, new] = names.as_slice() else {
            return Err(Error::InvalidArgument(
                "--rename-column takes OLD and NEW".into(),
            ));
        };
        (
            "RENAME COLUMN",
            format!("renamed column {old} to {new}"),
            table.rename_column(old, new)?,
        )
    } else if let Some(name) = &a.drop_column {
        (
            "DROP COLUMNS",
            format!("dropped column {name}"),
            table.drop_column(name)?,
        )
    } else if let Some(change) = &a.change_type {
        let [column, ty] = change.as_slice() else {
            return Err(Error::InvalidArgument(
                "--change-type takes COLUMN and TYPE".into(),
            ));
        };
        let to = parse_type(ty)?;
        (
            "CHANGE COLUMN",
            format!("changed the type of column {column} to {}", to.name()),
            table.change_column_type(column, to)?,
        )
    } else {
        let set: Vec<(&str, &str)> = a
            .set
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let unset: Vec<&str> = a.unset.iter().map(String::as_str).collect();
        let mut parts = Vec::new();
        if !set.is_empty() {
            let shown: Vec<String> = set.iter().map(|(k, v)| format!("{k}={v}")).collect();
            parts.push(format!("set {}", shown.join(", ")));
        }
        if !unset.is_empty() {
            parts.push(format!("unset {}", unset.join(", ")));
        }
        let report = table
            .set_properties(set.iter().copied(), &unset)
            .map_err(constraint_hint)?;
        let operation = match set.is_empty() {
            true => "UNSET TBLPROPERTIES",
            false => "SET TBLPROPERTIES",
        };
        (operation, parts.join("; "), report)
    };
    Outcome::new(operation, started)
        .commit(&report)
        .line(line)
        .emit(a.out.json);
    Ok(())
}

/// Setting a constraint as a property is refused by the library; the CLI names its flag.
fn constraint_hint(e: Error) -> Error {
    match e {
        Error::InvalidArgument(m) if m.contains("add_constraint") => {
            Error::InvalidArgument(format!("{m} (alluvium alter --add-constraint NAME EXPR)"))
        }
        e => e,
    }
}
