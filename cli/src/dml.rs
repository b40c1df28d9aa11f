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
    let batches = if batches.is_empty() {
        let schema = super::input::infer_schema(&a.source)?;
        vec![arrow::array::RecordBatch::new_empty(schema)]
    } else {
        batches
    };
    let mut builder = table
        .merge(batches, a.on.as_str())
        .merge_schema(a.merge_schema);
    for w in &a.when {
        builder = builder.when(w);
    }
    print(&builder.execute(&WriteOptions::default())?);
    Ok(())
}
