//! `alluvium demo`: a tour of the engine on a local table, through the library.

use std::sync::Arc;

use alluvium::{Result, ScanBuilder, Table, VersionSpec, WriteOptions, WriteOutcome};
use arrow::array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use clap::Args;

/// Arguments of `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Directory for the demo table (default: a new directory under the system temp dir).
    dir: Option<String>,
}

const REGIONS: [&str; 4] = ["EU", "US", "APAC", "LATAM"];

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("region", DataType::Utf8, true),
        Field::new("amount", DataType::Float64, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
    ]))
}

fn batch(writer: i64, round: i64) -> Result<RecordBatch> {
    let ids: Vec<i64> = (0..25).map(|i| writer * 10_000 + round * 100 + i).collect();
    let regions: Vec<&str> = ids
        .iter()
        .map(|i| REGIONS[(*i as usize) % REGIONS.len()])
        .collect();
    let amounts: Vec<f64> = ids
        .iter()
        .map(|i| ((*i * 37) % 1000) as f64 / 10.0)
        .collect();
    let ts: Vec<i64> = ids
        .iter()
        .map(|i| 1_700_000_000_000_000 + i * 1_000_000)
        .collect();
    Ok(RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids)) as ArrayRef,
            Arc::new(StringArray::from(regions)),
            Arc::new(Float64Array::from(amounts)),
            Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        ],
    )?)
}

fn count(table: &Table, spec: VersionSpec, filter: Option<&str>) -> Result<usize> {
    let mut b = ScanBuilder::new(table.snapshot_at(spec)?);
    if let Some(f) = filter {
        b = b.with_filter_str(f)?;
    }
    Ok(b.build()?
        .execute_to_vec()?
        .iter()
        .map(RecordBatch::num_rows)
        .sum())
}

fn version(o: &WriteOutcome) -> u64 {
    o.report().map_or(0, |r| r.version)
}

pub fn run(a: DemoArgs) -> Result<()> {
    let dir = a.dir.unwrap_or_else(|| {
        std::env::temp_dir()
            .join(format!("alluvium-demo-{}", std::process::id()))
            .to_string_lossy()
            .into_owned()
    });
    // The demo builds its own table: a directory that holds anything (a table, or files
    // of the user's) is not its to write into.
    let occupied = std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some());
    if occupied {
        return Err(alluvium::Error::InvalidArgument(format!(
            "{dir} exists and is not empty: the demo creates its own table; pick another directory (or omit it for a fresh one)"
        )));
    }
    outln!("1. create a table partitioned by region at {dir}");
    let table = crate::open(&dir)?;
    let r = table.create(&schema(), &["region".to_string()], alluvium::NO_PROPERTIES)?;
    outln!("   version {}: schema id/region/amount/ts", r.version);

    outln!(
        "2. four writers append concurrently, five commits each, each with its own table handle"
    );
    let handles: Vec<_> = (0..4)
        .map(|w| {
            let dir = dir.clone();
            std::thread::spawn(move || -> Result<Vec<(u64, u32)>> {
                let t = crate::open(&dir)?;
                let mut out = Vec::new();
                for round in 0..5 {
                    let o = t.append([batch(w, round)?], &WriteOptions::default())?;
                    out.push((version(&o), o.report().map_or(0, |r| r.attempts)));
                }
                Ok(out)
            })
        })
        .collect();
    let mut versions = Vec::new();
    let mut retries = 0;
    for h in handles {
        let results = h
            .join()
            .map_err(|_| alluvium::Error::InvalidArgument("a writer thread panicked".into()))??;
        for (v, attempts) in results {
            versions.push(v);
            retries += attempts.saturating_sub(1);
        }
    }
    versions.sort_unstable();
    let after_appends = *versions.last().unwrap_or(&0);
    outln!(
        "   20 commits landed as versions {:?}..={after_appends} ({retries} retries after losing a race)",
        versions.first().unwrap_or(&0)
    );
    outln!("   rows: {}", count(&table, VersionSpec::Latest, None)?);

    outln!("3. delete the rows with amount < 10 (copy-on-write)");
    let o = table.delete_str("amount < 10", &WriteOptions::default())?;
    if let Some(r) = o.report() {
        outln!(
            "   version {}: {} files removed, {} added; rows now {}",
            r.version,
            r.files_removed,
            r.files_added,
            count(&table, VersionSpec::Latest, None)?
        );
    }

    outln!("4. overwrite region EU (replaceWhere region = 'EU')");
    let o = table.overwrite_str(
        [eu_batch()?],
        Some("region = 'EU'"),
        &WriteOptions::default(),
    )?;
    outln!(
        "   version {}: EU rows now {}",
        version(&o),
        count(&table, VersionSpec::Latest, Some("region = 'EU'"))?
    );

    outln!("5. time travel");
    outln!(
        "   version {after_appends}: {} rows, {} in EU",
        count(&table, VersionSpec::Version(after_appends), None)?,
        count(
            &table,
            VersionSpec::Version(after_appends),
            Some("region = 'EU'")
        )?
    );
    let latest = table.snapshot()?;
    outln!(
        "   as of {} ms (the latest commit's time): version {}",
        latest.timestamp_ms(),
        table
            .snapshot_at(VersionSpec::Timestamp(latest.timestamp_ms()))?
            .version()
    );

    outln!("6. checkpoints (automatic every delta.checkpointInterval = 10 commits)");
    let fresh = crate::open(&dir)?.snapshot()?;
    let r = fresh.report();
    outln!(
        "   a fresh load of version {} replays checkpoint {} plus {} commit(s), {} listing",
        fresh.version(),
        fresh
            .checkpoint_version()
            .map_or_else(|| "none".to_string(), |v| v.to_string()),
        r.commits_read,
        r.list_calls
    );

    outln!("7. history");
    for e in table.history(None)? {
        let op = e
            .commit_info
            .as_ref()
            .and_then(|c| c.operation())
            .unwrap_or("-")
            .to_string();
        let params = e
            .commit_info
            .as_ref()
            .and_then(|c| c.operation_parameters())
            .map(|p| p.to_string())
            .unwrap_or_default();
        outln!("   {:>3}  {:<12} {}", e.version, op, params);
    }
    outln!("table left at {dir}; try: alluvium inspect {dir}");
    Ok(())
}

fn eu_batch() -> Result<RecordBatch> {
    Ok(RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef,
            Arc::new(StringArray::from(vec!["EU", "EU", "EU"])),
            Arc::new(Float64Array::from(vec![100.0, 200.0, 300.0])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    1_800_000_000_000_000,
                    1_800_000_001_000_000,
                    1_800_000_002_000_000,
                ])
                .with_timezone("UTC"),
            ),
        ],
    )?)
}
