//! The positions-first read DML uses, on one 100,000-row file (`id` long, `key` string,
//! `value` double, `ts` long) in memory, for `id % 100 = 0` (1 % of the rows, spread
//! over the whole file):
//! - `all_then_filter`: every column of every row decoded, then the filter (what UPDATE
//!   did before);
//! - `filtered_plan`: a `ReadPlan` with the filter, which decodes `id` first and the other
//!   columns for the matching rows only;
//! - `rows_at`: `ReadPlan::read_rows_at` of the same 1 % of positions (what a MERGE or a
//!   change-data pre-image read of matched rows costs).
//!
//! `cargo bench --bench dml_read`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::Arc;

use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable};
use alluvium_datafile::{ReadPlan, TableLayout};
use alluvium_expr::{Predicate, bind, evaluate, parse_expr};
use alluvium_storage::{InMemoryStore, StoreRef};
use alluvium_txlog::actions::Add;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::schema::{DataType, PrimitiveType, StructField, StructType};
use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType as ArrowType, Field, Schema};
use criterion::{Criterion, criterion_group, criterion_main};
use roaring::RoaringTreemap;

const ROWS: i64 = 100_000;

fn table() -> (TableLayout, Add, Predicate) {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let long = || DataType::Primitive(PrimitiveType::Long);
    let schema = StructType::new(vec![
        StructField::new("id", long(), true),
        StructField::new("key", DataType::Primitive(PrimitiveType::String), true),
        StructField::new("value", DataType::Primitive(PrimitiveType::Double), true),
        StructField::new("ts", long(), true),
    ]);
    let config = HashMap::new();
    let mut sink = FileSink::new(
        SinkTable {
            store: store.as_ref(),
            schema: &schema,
            partition_columns: &[],
            configuration: &config,
            column_mapping: ColumnMappingMode::None,
        },
        FileSinkOptions::default(),
    )
    .unwrap();
    let ids: Vec<i64> = (0..ROWS).collect();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, true),
            Field::new("key", ArrowType::Utf8, true),
            Field::new("value", ArrowType::Float64, true),
            Field::new("ts", ArrowType::Int64, true),
        ])),
        vec![
            Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("k{i:09}")),
            )),
            Arc::new(Float64Array::from_iter_values(
                ids.iter().map(|i| (*i as f64 * 0.618).fract() * 1000.0),
            )),
            Arc::new(Int64Array::from_iter_values(
                ids.iter().map(|i| 1_767_225_600_000_000 + i * 1_000_000),
            )),
        ],
    )
    .unwrap();
    sink.write(&batch).unwrap();
    let (mut adds, _) = sink.finish().unwrap();
    let layout = TableLayout {
        store,
        root: TableRoot::new("memory:///t"),
        schema,
        partition_columns: Vec::new(),
        column_mapping: ColumnMappingMode::None,
        configuration: HashMap::new(),
        materialize_partition_columns: false,
    };
    let pred = bind(
        &parse_expr("id % 100 = 0").unwrap(),
        &layout.schema,
        &[],
        ColumnMappingMode::None,
    )
    .unwrap();
    (layout, adds.remove(0), pred)
}

fn bench(c: &mut Criterion) {
    let (layout, add, pred) = table();
    let all = ReadPlan::all(layout.clone()).unwrap();
    let filtered = ReadPlan::new(layout, None, Some(pred.clone())).unwrap();
    let positions: RoaringTreemap = (0..ROWS as u64).step_by(100).collect();
    let mut g = c.benchmark_group("dml_read_1pct_of_100k_rows");
    g.sample_size(20);
    g.bench_function("all_then_filter", |b| {
        b.iter(|| {
            let mut n = 0;
            for (batch, _) in all.read_file_with_positions(&add).unwrap() {
                let m = evaluate(&pred, &batch).unwrap();
                n += arrow::compute::filter_record_batch(&batch, &m)
                    .unwrap()
                    .num_rows();
            }
            assert_eq!(n, 1000);
        })
    });
    g.bench_function("filtered_plan", |b| {
        b.iter(|| {
            let n: usize = filtered
                .read_file_with_positions(&add)
                .unwrap()
                .iter()
                .map(|(b, _)| b.num_rows())
                .sum();
            assert_eq!(n, 1000);
        })
    });
    g.bench_function("rows_at", |b| {
        b.iter(|| {
            let n: usize = all
                .read_rows_at(&add, &positions)
                .unwrap()
                .iter()
                .map(|(b, _)| b.num_rows())
                .sum();
            assert_eq!(n, 1000);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
