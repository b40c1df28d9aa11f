//! `alluvium create`, `append`, `overwrite`, `delete`, `alter`.

use std::collections::HashMap;

use alluvium::MvccError;
use alluvium::{CommitSummary, Error, Result, Table, WriteOptions, WriteOutcome};
use alluvium::{StructType, arrow_schema};
use arrow::datatypes::Schema;
use clap::Args;

use super::input::{infer_schema, read_batches};
use super::open;
use super::report::{commit_json, print_after_write};

/// Arguments of `create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Table location.
    table: String,
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
}

/// Arguments of `append`.
#[derive(Debug, Args)]
pub struct AppendArgs {
    /// Table location.
    table: String,
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
    /// Data file: `.parquet`, `.csv` or `.jsonl`.
    file: String,
    /// Replace only the rows matching this predicate (every new row must match it).
    #[arg(long)]
    filter: Option<String>,
}

/// Arguments of `delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Table location.
    table: String,
    /// Delete the rows matching this predicate.
    #[arg(long)]
    filter: String,
}

/// Arguments of `alter`.
#[derive(Debug, Args)]
pub struct AlterArgs {
    /// Table location.
    table: String,
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
}

fn parse_property(s: &str) -> std::result::Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .ok_or_else(|| format!("expected key=value, got {s:?}"))
}

/// Prints the report of a commit that landed; a closed stdout cannot fail the command now.
fn print_report(r: &CommitSummary) {
    print_after_write(&format!(
        "committed version {}\n{}\n",
        r.version,
        commit_json(r)
    ));
}

pub(crate) fn print_outcome(o: &WriteOutcome) {
    match o {
        WriteOutcome::Committed(r) => print_report(r),
        WriteOutcome::Skipped {
            app_id,
            recorded_version,
            table_version,
        } => print_after_write(&format!(
            "skipped: application {app_id} already committed version {recorded_version} (table version {table_version})\n"
        )),
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
    let table = open(&a.table)?;
    let props: HashMap<String, String> = a.properties.into_iter().collect();
    let report = if a.schema_from.to_ascii_lowercase().ends_with(".json")
        && !a.schema_from.ends_with(".jsonl")
    {
        let text = std::fs::read_to_string(&a.schema_from).map_err(|e| Error::Io {
            context: a.schema_from.clone(),
            source: e,
        })?;
        let schema = StructType::from_json(&text)?;
        table.create_with_schema(schema, &a.partition_by, &props)?
    } else {
        let schema = infer_schema(&a.schema_from)?;
        table.create(&schema, &a.partition_by, &props)?
    };
    print_report(&report);
    Ok(())
}

pub fn append(a: AppendArgs) -> Result<()> {
    let table = open(&a.table)?;
    let known = table_arrow_schema(&table)?;
    let batches = read_batches(&a.file, known.as_ref())?;
    if known.is_none() {
        if !a.create {
            return Err(alluvium::LogError::TableNotFound {
                location: table.uri(),
            }
            .into());
        }
        let schema = batches
            .first()
            .map(|b| b.schema())
            .map_or_else(|| infer_schema(&a.file), Ok)?;
        match table.create(&schema, &a.partition_by, &HashMap::new()) {
            Ok(_) => {}
            // Another process created it first: append to it.
            Err(Error::Mvcc(MvccError::TableAlreadyExists { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    let options = WriteOptions {
        merge_schema: a.merge_schema,
        app_transaction: a
            .app_id
            .zip(a.app_version)
            .map(|(id, v)| alluvium::AppTransaction::new(id, v)),
        ..Default::default()
    };
    print_outcome(&table.append(batches, &options)?);
    Ok(())
}

pub fn overwrite(a: OverwriteArgs) -> Result<()> {
    let table = open(&a.table)?;
    let known = table_arrow_schema(&table)?.ok_or_else(|| {
        Error::from(alluvium::LogError::TableNotFound {
            location: table.uri(),
        })
    })?;
    let batches = read_batches(&a.file, Some(&known))?;
    print_outcome(&table.overwrite_str(batches, a.filter.as_deref(), &WriteOptions::default())?);
    Ok(())
}

pub fn delete(a: DeleteArgs) -> Result<()> {
    let table = open(&a.table)?;
    super::dml::print(&table.delete_str(&a.filter, &WriteOptions::default())?);
    Ok(())
}

pub fn alter(a: AlterArgs) -> Result<()> {
    let table = open(&a.table)?;
    if let Some(spec) = &a.cluster_by {
        let columns: Vec<&str> = if spec.trim().eq_ignore_ascii_case("none") {
            Vec::new()
        } else {
            spec.split(',').map(str::trim).collect()
        };
        print_report(&table.cluster_by(&columns)?);
        return Ok(());
    }
    if let Some(c) = &a.add_constraint {
        if let [name, expr] = c.as_slice() {
            print_report(&table.add_constraint(name, expr)?);
        }
        return Ok(());
    }
    if let Some(name) = &a.drop_constraint {
        print_report(&table.drop_constraint(name)?);
        return Ok(());
    }
    let set: Vec<(&str, &str)> = a
        .set
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let unset: Vec<&str> = a.unset.iter().map(String::as_str).collect();
    print_report(&table.set_properties(&set, &unset)?);
    Ok(())
}
