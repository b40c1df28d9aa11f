//! `alluvium update` and `alluvium merge`: rows changed in place. Each prints one line with
//! the rows it changed and the version, or with `--json` the JSON object of every write
//! command with the operation's metrics (Delta's names), as `delete` does.

use std::time::Instant;

use alluvium::{DmlOutcome, Error, Result, WriteOptions, WriteOutcome, arrow_schema};
use clap::Args;

use super::input::read_batches;
use super::open;
use super::progress::with_spinner;
use super::summary::{JsonFlag, Outcome, count};

/// Arguments of `update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// The assignments, `"a = a + 1, b = 'x'"`.
    #[arg(long)]
    set: String,
    /// Update only the rows matching this predicate (every row without it).
    #[arg(long)]
    filter: Option<String>,
}

/// Arguments of `merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Table location (the target, `t`).
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// The source rows (`s`): `.parquet`, `.csv` or `.jsonl`.
    source: String,
    /// The join condition, e.g. `"t.id = s.id"`.
    #[arg(long)]
    on: String,
    /// A clause in SQL, in order (repeatable): `"MATCHED AND s.op = 'D' THEN DELETE"`,
    /// `"MATCHED THEN UPDATE SET *"`, `"NOT MATCHED THEN INSERT *"`,
    /// `"NOT MATCHED BY SOURCE THEN DELETE"`, ...
    #[arg(long = "when", required = true)]
    when: Vec<String>,
    /// Add the source's new columns to the table (with `UPDATE SET *` / `INSERT *`).
    #[arg(long)]
    merge_schema: bool,
}

/// How the rows left their old files: `deletion vectors`, `rewritten, N rows copied`, or
/// `whole files removed`.
fn how(done: &DmlOutcome, dvs: &str, copied: &str) -> String {
    let m = |k: &str| done.metric(k).unwrap_or(0);
    match (m(dvs), m(copied)) {
        (d, 0) if d > 0 => "deletion vectors".to_string(),
        (_, 0) => "whole files removed".to_string(),
        (_, c) => format!("files rewritten, {} copied", count(c, "row")),
    }
}

/// The line of a DELETE, UPDATE or MERGE.
fn dml_line(done: &DmlOutcome, operation: &str) -> String {
    let m = |k: &str| done.metric(k).unwrap_or(0);
    match operation {
        "DELETE" => {
            let files = m("numRemovedFiles") + m("numDeletionVectorsAdded");
            if m("numDeletedRows") == 0 && files == 0 {
                return "deleted 0 rows: no row matched".into();
            }
            format!(
                "deleted {} from {} ({})",
                count(m("numDeletedRows"), "row"),
                count(files, "file"),
                how(done, "numDeletionVectorsAdded", "numCopiedRows")
            )
        }
        "UPDATE" => {
            let files = m("numRemovedFiles") + m("numDeletionVectorsAdded");
            if m("numUpdatedRows") == 0 {
                return "updated 0 rows: no row matched".into();
            }
            format!(
                "updated {} in {} ({})",
                count(m("numUpdatedRows"), "row"),
                count(files, "file"),
                how(done, "numDeletionVectorsAdded", "numCopiedRows")
            )
        }
        _ => format!(
            "merged {}: {} inserted, {} updated, {} deleted",
            count(m("numSourceRows"), "source row"),
            m("numTargetRowsInserted"),
            m("numTargetRowsUpdated"),
            m("numTargetRowsDeleted")
        ),
    }
}

/// Prints what a DELETE, UPDATE or MERGE did.
pub(crate) fn print_dml(done: &DmlOutcome, operation: &str, started: Instant, json: bool) {
    let line = dml_line(done, operation);
    match &done.outcome {
        WriteOutcome::Committed(r) => Outcome::new(operation, started)
            .commit(r)
            .line(line)
            .emit(json),
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

/// A spinner message for a DML over the table's files.
fn over_files(table: &alluvium::Table, what: &str) -> String {
    let files = table.snapshot().map_or(0, |s| s.num_files());
    format!("{what}: {}", count(files as u64, "file"))
}

pub fn update(a: UpdateArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let done = with_spinner(over_files(&table, "update"), || {
        table.update_str(&a.set, a.filter.as_deref(), &WriteOptions::default())
    })?;
    print_dml(&done, "UPDATE", started, a.out.json);
    Ok(())
}

/// A schema mismatch of a MERGE source gets the flag that adds its new columns.
fn merge_schema_hint(e: Error) -> Error {
    match e {
        Error::SchemaMismatch(m) if !m.contains("--merge-schema") => Error::SchemaMismatch(
            format!("{m} (to add the source's new columns to the table, use --merge-schema)"),
        ),
        e => e,
    }
}

pub fn merge(a: MergeArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    // CSV and JSON columns the table knows are read as the table's types.
    let known = arrow_schema(table.snapshot()?.schema())?;
    let batches = read_batches(&a.source, Some(&known))?;
    let empty = batches.iter().all(|b| b.num_rows() == 0);
    let batches = if batches.is_empty() {
        vec![super::input::empty_batch(&a.source, Some(&known))?]
    } else {
        batches
    };
    let mut builder = table
        .merge(batches, a.on.as_str())
        .merge_schema(a.merge_schema);
    for w in &a.when {
        builder = builder.when(w);
    }
    let done = with_spinner(over_files(&table, "merge"), || {
        builder.execute(&WriteOptions::default())
    })
    .map_err(merge_schema_hint)?;
    // Nothing can match an empty source or be inserted from it (Delta's semantics): say
    // so, as a valid run that changed little would otherwise look like a lost input.
    if empty {
        crate::exit::error_line(&format!(
            "note: the source {} holds no rows: nothing matched or was inserted; only NOT MATCHED BY SOURCE clauses could change rows",
            a.source
        ));
    }
    print_dml(&done, "MERGE", started, a.out.json);
    Ok(())
}
