//! OPTIMIZE of a table of one-row files (the streaming-writer shape) into one file: snapshot
//! load, planning, reading every small file, writing one, committing. Each iteration works
//! on a fresh copy of a template table on local disk (the copy is not timed).
//!
//! `cargo bench --bench optimize`. The side-by-side comparison with delta-rs on the 10,000-file
//! table is `benches/peers/optimize_vs_delta_rs.py`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;

use alluvium::{Table, WriteOptions};
use alluvium_compaction::optimize::OptimizeOptions;
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

const FILES: i64 = 2_000;

fn template(dir: &Path) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let table = Table::open_local(dir.to_str().unwrap(), false).unwrap();
    table.create(&schema, &[], alluvium::NO_PROPERTIES).unwrap();
    for i in 0..FILES {
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![i])) as ArrayRef,
                Arc::new(StringArray::from(vec![format!("row-{i}")])),
            ],
        )
        .unwrap();
        table.append([batch], &WriteOptions::default()).unwrap();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn bench(c: &mut Criterion) {
    let scratch = tempfile::tempdir().unwrap();
    let source = scratch.path().join("template");
    template(&source);
    let mut group = c.benchmark_group("optimize");
    group.sample_size(10);
    group.bench_function("2000_one_row_files_into_one", |b| {
        b.iter_batched(
            || {
                let work = scratch.path().join("work");
                let _ = std::fs::remove_dir_all(&work);
                copy_dir(&source, &work);
                Table::open(work.to_str().unwrap()).unwrap()
            },
            |table| {
                let report = table.optimize(&OptimizeOptions::default()).unwrap();
                assert_eq!(report.files_added, 1);
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
