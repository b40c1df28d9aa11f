//! Read a table as it was at a version, as a stream of Arrow record batches, with a
//! projection and a filter.
//!
//! The scan keeps only the files whose partition values and statistics may hold a matching
//! row, then reads them a few at a time: memory is bounded by the files in flight, not by
//! the table.
//!
//! Run: `cargo run --example read_stream`

use std::sync::Arc;

use alluvium::arrow::array::{Int64Array, RecordBatch, StringArray};
use alluvium::arrow::datatypes::{DataType, Field, Schema};
use alluvium::{CmpOp, Expr, Literal, ScanBuilder, Table, VersionSpec, WriteOptions};
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Scratch::new()?;
    let table = Table::open(dir.path().to_str().ok_or("temp dir is not UTF-8")?)?;

    // Version 0 creates the table; versions 1..=3 append 100 rows each.
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("region", DataType::Utf8, true),
    ]));
    table.create(&schema, &["region".to_string()], alluvium::NO_PROPERTIES)?;
    for round in 0..3i64 {
        let ids: Vec<i64> = (0..100).map(|i| round * 100 + i).collect();
        let regions: Vec<&str> = ids
            .iter()
            .map(|i| if i % 2 == 0 { "EU" } else { "US" })
            .collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(regions)),
            ],
        )?;
        table.append([batch], &WriteOptions::default())?;
    }

    // The table as of version 2 (two appends), EU rows with id >= 50, column `id` only.
    let snapshot = table.snapshot_at(VersionSpec::Version(2))?;
    let filter = Expr::column("region")
        .cmp(CmpOp::Eq, Literal::String("EU".into()))
        .and(Expr::column("id").cmp(CmpOp::Ge, Literal::Number("50".into())));
    let scan = ScanBuilder::new(snapshot)
        .with_columns(["id"])
        .with_filter(filter)
        .build()?;
    println!(
        "version 2: reading {} of {} files",
        scan.files().len(),
        scan.files_total()
    );

    let mut rows = 0;
    for batch in scan.execute() {
        let batch = batch?;
        rows += batch.num_rows();
    }
    // Ids 0..200, even (EU), at least 50: 50, 52, ..., 198.
    println!("{rows} rows");
    assert_eq!(rows, 75);
    Ok(())
}
