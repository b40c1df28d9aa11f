//! Fixtures of the UPDATE and MERGE tests: a table `(id long, k string, v long)` in
//! several files, optionally partitioned by `k` and with deletion vectors on, its rows as
//! a sorted model, and the source batches MERGE takes.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{ScanBuilder, Table, WriteOptions};
use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

/// A row of the test table: id, k, v.
pub type Row = (i64, Option<String>, Option<i64>);

pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("k", DataType::Utf8, true),
        Field::new("v", DataType::Int64, true),
    ]))
}

pub fn batch(rows: &[Row]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )) as ArrayRef,
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.1.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.2).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

/// The table flavours every result test runs on.
#[derive(Debug, Clone, Copy)]
pub struct Flavour {
    pub dv: bool,
    pub partitioned: bool,
}

pub const FLAVOURS: [Flavour; 4] = [
    Flavour {
        dv: false,
        partitioned: false,
    },
    Flavour {
        dv: true,
        partitioned: false,
    },
    Flavour {
        dv: false,
        partitioned: true,
    },
    Flavour {
        dv: true,
        partitioned: true,
    },
];

pub fn row(id: i64) -> Row {
    let k = ["a", "b", "c"][(id.rem_euclid(3)) as usize];
    (id, Some(k.to_string()), Some(id * 10))
}

/// A table of `files` appends of `per_file` rows each (ids 0..files*per_file, in order).
pub fn table_with(
    store: alluvium::StoreRef,
    f: Flavour,
    files: i64,
    per_file: i64,
) -> (Table, Vec<Row>) {
    let t = Table::from_store(store);
    let mut props = HashMap::new();
    if f.dv {
        props.insert(
            "delta.enableDeletionVectors".to_string(),
            "true".to_string(),
        );
    }
    let parts: Vec<String> = if f.partitioned {
        vec!["k".into()]
    } else {
        vec![]
    };
    t.create(&schema(), &parts, &props).unwrap();
    let mut all = Vec::new();
    for i in 0..files {
        let rows: Vec<Row> = (i * per_file..(i + 1) * per_file).map(row).collect();
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
        all.extend(rows);
    }
    all.sort();
    (t, all)
}

pub fn table(f: Flavour) -> (Table, Vec<Row>) {
    table_with(Arc::new(alluvium::InMemoryStore::new()), f, 3, 10)
}

/// Every row of the table, sorted.
pub fn rows(t: &Table) -> Vec<Row> {
    let batches = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["id", "k", "v"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let k = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        let v = b.column(2).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.push((
                id.value(i),
                k.is_valid(i).then(|| k.value(i).to_string()),
                v.is_valid(i).then(|| v.value(i)),
            ));
        }
    }
    out.sort();
    out
}

/// The latest commit's `commitInfo`.
pub fn last_commit_info(t: &Table) -> alluvium_txlog::actions::CommitInfo {
    t.history(Some(1)).unwrap()[0].commit_info.clone().unwrap()
}

/// Whether the latest snapshot has a file with a deletion vector.
pub fn has_dv(t: &Table) -> bool {
    t.snapshot()
        .unwrap()
        .files()
        .any(|a| a.deletion_vector().is_some())
}

/// A MERGE source of `(id, k, v, op)` rows.
pub fn source(rows: &[(i64, &str, i64, &str)]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("k", DataType::Utf8, true),
        Field::new("v", DataType::Int64, true),
        Field::new("op", DataType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )) as ArrayRef,
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.2).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.3).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}
