//! Writing 1M rows x 4 columns (`id` long, `part` string, `value` double, `name` string):
//! alluvium's append (Parquet encoding, statistics, upload, commit) against the parquet
//! crate alone encoding the same batches with the same settings, both to memory.
//!
//! `cargo bench --bench write`; compare runs with `-- --save-baseline main` and
//! `-- --baseline main`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use alluvium::{Table, WriteOptions};
use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use criterion::{Criterion, criterion_group, criterion_main};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

const ROWS: usize = 1_000_000;
const BATCH: usize = 100_000;

fn batches() -> Vec<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("part", DataType::Utf8, true),
        Field::new("value", DataType::Float64, true),
        Field::new("name", DataType::Utf8, true),
    ]));
    (0..ROWS / BATCH)
        .map(|b| {
            let ids: Vec<i64> = (0..BATCH).map(|i| (b * BATCH + i) as i64).collect();
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
                    Arc::new(StringArray::from_iter_values(
                        ids.iter().map(|i| format!("p{}", i % 10)),
                    )),
                    Arc::new(Float64Array::from_iter_values(
                        ids.iter().map(|i| (*i as f64) * 0.001),
                    )),
                    Arc::new(StringArray::from_iter_values(
                        ids.iter().map(|i| format!("name-{}", i % 1000)),
                    )),
                ],
            )
            .unwrap()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let data = batches();
    let mut group = c.benchmark_group("write_1m_rows_4_cols");
    group.sample_size(10);
    group.bench_function("parquet_crate_alone", |b| {
        b.iter(|| {
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .build();
            let mut w = ArrowWriter::try_new(Vec::new(), data[0].schema(), Some(props)).unwrap();
            for batch in &data {
                w.write(batch).unwrap();
            }
            w.into_inner().unwrap().len()
        })
    });
    group.bench_function("alluvium_append", |b| {
        b.iter(|| {
            let t = Table::in_memory();
            t.create(&data[0].schema(), &[], alluvium::NO_PROPERTIES)
                .unwrap();
            t.append(data.iter().cloned(), &WriteOptions::default())
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
