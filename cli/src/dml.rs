//! `alluvium update` and `alluvium merge`: rows changed in place. Each prints the version
//! it committed and the commit report, with the operation's metrics (`operation_metrics`,
//! Delta's names), as `delete` does.

use alluvium::{DmlOutcome, Result, WriteOptions, arrow_schema};
use clap::Args;

use super::input::read_batches;
use super::open;
use super::write::print_outcome;

/// Arguments of `update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// Table location.
    table: String,
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

pub(crate) fn print(done: &DmlOutcome) {
    print_outcome(&done.outcome);
}

pub fn update(a: UpdateArgs) -> Result<()> {
    let table = open(&a.table)?;
    print(&table.update_str(&a.set, a.filter.as_deref(), &WriteOptions::default())?);
    Ok(())
}

pub fn merge(a: MergeArgs) -> Result<()> {
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
    let done = builder.execute(&WriteOptions::default())?;
    // Nothing can match an empty source or be inserted from it (Delta's semantics): say
    // so, as a valid run that changed little would otherwise look like a lost input.
    if empty {
        eprintln!(
            "note: the source {} holds no rows: nothing matched or was inserted; only NOT MATCHED BY SOURCE clauses could change rows",
            a.source
        );
    }
    print(&done);
    Ok(())
}
