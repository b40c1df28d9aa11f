//! Incremental sync from a change data feed: a downstream table (here an audit log of every
//! change of an `orders` table) is kept up to date by reading only the changes committed
//! since the last source version it processed (`Table::changes`), never rescanning the
//! source.
//!
//! Its progress is not kept anywhere else: each sync commits its output rows together with
//! an idempotent `txn` (application id, source version processed) in ONE commit of the
//! downstream table. So "what did I process?" and "what did I write?" cannot disagree: a
//! worker that crashed after committing, or a second worker with a stale cursor, reruns and
//! its commit is skipped, and no change is ever applied twice.
//!
//! Run: `cargo run --example incremental_sync`

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::arrow::array::{ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use alluvium::arrow::datatypes::{DataType, Field, Int64Type, Schema};
use alluvium::{AppTransaction, ScanBuilder, Table, VersionSpec, WriteOptions, WriteOutcome};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const APP_ID: &str = "orders-audit-sync";

fn orders_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("region", DataType::Utf8, false),
    ]))
}

fn audit_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("region", DataType::Utf8, false),
        Field::new("change_type", DataType::Utf8, false),
        Field::new("source_version", DataType::Int64, false),
    ]))
}

fn orders(ids: &[i64], region: &str) -> Res<RecordBatch> {
    Ok(RecordBatch::try_new(
        orders_schema(),
        vec![
            Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef,
            Arc::new(StringArray::from(vec![region; ids.len()])),
        ],
    )?)
}

/// The source version the audit table has processed up to, from its own log.
fn processed(audit: &Table) -> Res<Option<i64>> {
    Ok(audit.snapshot()?.app_transaction_version(APP_ID, i64::MAX))
}

/// Applies the source changes after version `cursor` (the worker's idea of its progress)
/// to the audit table, in one commit with the `txn` marker. Returns the rows written.
fn sync(source: &Table, audit: &Table, cursor: Option<i64>) -> Res<usize> {
    let latest = source.snapshot()?.version();
    let start = cursor.map_or(0, |v| v as u64 + 1);
    if start > latest {
        println!("  nothing new after source version {latest}");
        return Ok(0);
    }
    let changes = source
        .changes(
            VersionSpec::Version(start),
            Some(VersionSpec::Version(latest)),
        )
        .columns(["id", "region", "_change_type", "_commit_version"])
        .execute()?;
    let mut out = Vec::new();
    for batch in changes {
        let batch = batch?;
        out.push(RecordBatch::try_new(
            audit_schema(),
            batch.columns().to_vec(),
        )?);
    }
    let rows: usize = out.iter().map(RecordBatch::num_rows).sum();
    let options = WriteOptions::default()
        .with_app_transaction(AppTransaction::new(APP_ID, i64::try_from(latest)?));
    match audit.append(out, &options)? {
        WriteOutcome::Committed(s) => {
            println!(
                "  source versions {start}..={latest}: {rows} change rows committed as audit version {}",
                s.version
            );
            Ok(rows)
        }
        WriteOutcome::Skipped {
            recorded_version, ..
        } => {
            println!(
                "  source versions {start}..={latest}: skipped, the audit table already processed up to {recorded_version}"
            );
            Ok(0)
        }
    }
}

/// Replays the audit log (inserts minus deletes, by id) into the set of live ids.
fn replay(audit: &Table) -> Res<Vec<i64>> {
    let mut live: HashMap<i64, i64> = HashMap::new();
    for batch in ScanBuilder::new(audit.snapshot()?).build()?.execute() {
        let batch = batch?;
        let ids = batch.column(0).as_primitive::<Int64Type>();
        let kinds = batch.column(2).as_string::<i32>();
        for i in 0..batch.num_rows() {
            let delta = match kinds.value(i) {
                "insert" | "update_postimage" => 1,
                _ => -1,
            };
            *live.entry(ids.value(i)).or_default() += delta;
        }
    }
    let mut ids: Vec<i64> = live
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(id, _)| id)
        .collect();
    ids.sort_unstable();
    Ok(ids)
}
/// A scratch directory for the example's tables, removed when dropped (as `tempfile`'s
/// `TempDir`, without the dependency: an embedder's project needs only `alluvium`).
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path =
            std::env::temp_dir().join(format!("alluvium-example-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(Scratch(path))
    }

    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() -> Res<()> {
    let dir = Scratch::new()?;
    let at = |name: &str| -> Res<String> {
        Ok(dir
            .path()
            .join(name)
            .to_str()
            .ok_or("temp dir is not UTF-8")?
            .to_string())
    };
    let source = Table::open(&at("orders")?)?;
    let cdf = [("delta.enableChangeDataFeed", "true")];
    source.create(&orders_schema(), &["region".to_string()], cdf)?;
    let audit = Table::open(&at("audit")?)?;
    audit.create(&audit_schema(), &[], alluvium::NO_PROPERTIES)?;

    println!("source: two appends");
    source.append([orders(&[1, 2], "EU")?], &WriteOptions::default())?;
    source.append([orders(&[3], "US")?], &WriteOptions::default())?;
    println!("sync 1");
    assert_eq!(sync(&source, &audit, processed(&audit)?)?, 3);

    // A worker that crashed after its commit restarts with the cursor it saved before the
    // crash (nothing processed): the audit table already holds that work, so it is skipped.
    println!("rerun of sync 1 with a stale cursor (the crash case)");
    assert_eq!(sync(&source, &audit, None)?, 0);

    println!("source: delete the EU orders, append one more");
    let eu = alluvium::parse_expr("region = 'EU'")?;
    source.delete(&eu, &WriteOptions::default())?;
    source.append([orders(&[4], "US")?], &WriteOptions::default())?;
    println!("sync 2 (resumes from the table's own txn marker)");
    assert_eq!(sync(&source, &audit, processed(&audit)?)?, 3);
    println!("sync 3");
    assert_eq!(sync(&source, &audit, processed(&audit)?)?, 0);

    // Every change exactly once: replaying the audit gives the source's rows.
    let mut source_ids = Vec::new();
    for batch in ScanBuilder::new(source.snapshot()?)
        .with_columns(["id"])
        .build()?
        .execute()
    {
        let batch = batch?;
        let ids = batch.column(0).as_primitive::<Int64Type>();
        source_ids.extend((0..ids.len()).map(|i| ids.value(i)));
    }
    source_ids.sort_unstable();
    let replayed = replay(&audit)?;
    println!("audit replayed: live ids {replayed:?} = source ids {source_ids:?}");
    assert_eq!(replayed, source_ids);
    assert_eq!(replayed, vec![3, 4]);
    Ok(())
}
