//! Tests of reading part of a file: the filter-columns-first read of a plan with a filter,
//! and reading given physical rows ([`ReadPlan::read_rows_at`]).

use std::collections::HashMap;
use std::sync::Arc;

use alluvium_expr::{bind, parse_expr};
use alluvium_storage::{InMemoryStore, StoreRef};
use alluvium_txlog::actions::Add;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::schema::{DataType, PrimitiveType, StructField, StructType};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use roaring::RoaringTreemap;

use super::{ReadPlan, TableLayout};
use crate::sink::{FileSink, FileSinkOptions, SinkTable};

const ROWS: i64 = 3000;

fn schema() -> StructType {
    StructType::new(vec![
        StructField::new("id", DataType::Primitive(PrimitiveType::Long), true),
        StructField::new("name", DataType::Primitive(PrimitiveType::String), true),
        StructField::new("part", DataType::Primitive(PrimitiveType::String), true),
    ])
}

/// One file of `ROWS` rows (`id` = row, `name` = "n<row>", partition `part=a`), written
/// in three batches so the file has several pages' worth of rows, and the table layout.
fn one_file() -> (TableLayout, Add) {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let schema = schema();
    let partitions = vec!["part".to_string()];
    let config = HashMap::new();
    let mut sink = FileSink::new(
        SinkTable {
            store: store.as_ref(),
            schema: &schema,
            partition_columns: &partitions,
            configuration: &config,
            column_mapping: ColumnMappingMode::None,
        },
        FileSinkOptions::default(),
    )
    .unwrap();
    let arrow = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, true),
        Field::new("name", ArrowType::Utf8, true),
        Field::new("part", ArrowType::Utf8, true),
    ]));
    for chunk in 0..3 {
        let ids: Vec<i64> = (chunk * ROWS / 3..(chunk + 1) * ROWS / 3).collect();
        let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
        let parts = vec!["a"; ids.len()];
        let batch = RecordBatch::try_new(
            arrow.clone(),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(names)),
                Arc::new(StringArray::from(parts)),
            ],
        )
        .unwrap();
        sink.write(&batch).unwrap();
    }
    let (mut adds, _) = sink.finish().unwrap();
    assert_eq!(adds.len(), 1);
    let layout = TableLayout {
        store,
        root: TableRoot::new("memory:///t"),
        schema,
        partition_columns: partitions,
        column_mapping: ColumnMappingMode::None,
        configuration: HashMap::new(),
        materialize_partition_columns: false,
    };
    (layout, adds.remove(0))
}

/// (id, name, part) of every returned row, and the positions.
fn rows_of(
    read: Vec<(RecordBatch, arrow_array::UInt64Array)>,
) -> (Vec<(i64, String, String)>, Vec<u64>) {
    let mut rows = Vec::new();
    let mut at = Vec::new();
    for (b, p) in read {
        assert_eq!(b.num_rows(), p.len());
        let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        let names = b.column_by_name("name").unwrap().as_string::<i32>();
        let parts = b.column_by_name("part").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            rows.push((
                ids.value(i),
                names.value(i).to_string(),
                parts.value(i).to_string(),
            ));
        }
        at.extend(p.values().iter().copied());
    }
    (rows, at)
}

fn expected(ids: impl Iterator<Item = i64>) -> Vec<(i64, String, String)> {
    ids.map(|i| (i, format!("n{i}"), "a".to_string())).collect()
}

#[test]
fn a_filtered_read_of_other_columns_decodes_the_matching_rows_in_file_order() {
    let (layout, add) = one_file();
    let pred = bind(
        &parse_expr("id % 7 = 3").unwrap(),
        &layout.schema,
        &layout.partition_columns,
        ColumnMappingMode::None,
    )
    .unwrap();
    let plan = ReadPlan::new(layout, None, Some(pred)).unwrap();
    assert!(
        plan.split.is_some(),
        "output columns beyond the filter's: a split read"
    );
    let (rows, at) = rows_of(plan.read_file_with_positions(&add).unwrap());
    let want: Vec<i64> = (0..ROWS).filter(|i| i % 7 == 3).collect();
    assert_eq!(rows, expected(want.iter().copied()));
    assert_eq!(at, want.iter().map(|i| *i as u64).collect::<Vec<_>>());
    // The plain read gives the same batches' rows.
    let batches = plan.read_file(&add).unwrap();
    assert_eq!(
        batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
        want.len()
    );
    assert_eq!(batches[0].schema(), plan.schema());
}

#[test]
fn a_filtered_read_without_matches_is_empty() {
    let (layout, add) = one_file();
    let pred = bind(
        &parse_expr("id < 0").unwrap(),
        &layout.schema,
        &layout.partition_columns,
        ColumnMappingMode::None,
    )
    .unwrap();
    let plan = ReadPlan::new(layout, Some(&["name".to_string()]), Some(pred)).unwrap();
    assert!(plan.read_file_with_positions(&add).unwrap().is_empty());
}

#[test]
fn read_rows_at_decodes_exactly_the_asked_rows() {
    let (layout, add) = one_file();
    let plan = ReadPlan::all(layout).unwrap();
    // Single rows, a run, the first and the last row.
    let asked: RoaringTreemap = [0u64, 5, 999, 1000, 1001, 1002, 2500, (ROWS - 1) as u64]
        .into_iter()
        .collect();
    let (rows, at) = rows_of(plan.read_rows_at(&add, &asked).unwrap());
    assert_eq!(at, asked.iter().collect::<Vec<_>>());
    assert_eq!(rows, expected(asked.iter().map(|r| r as i64)));
    assert!(
        plan.read_rows_at(&add, &RoaringTreemap::new())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn read_rows_at_refuses_a_row_past_the_end() {
    let (layout, add) = one_file();
    let plan = ReadPlan::all(layout).unwrap();
    let asked: RoaringTreemap = [1u64, ROWS as u64].into_iter().collect();
    let err = plan.read_rows_at(&add, &asked).unwrap_err().to_string();
    assert!(err.contains(&format!("row {ROWS}")), "{err}");
}

#[test]
fn read_rows_at_with_only_partition_columns_counts_the_rows() {
    let (layout, add) = one_file();
    let plan = ReadPlan::new(layout, Some(&["part".to_string()]), None).unwrap();
    let asked: RoaringTreemap = [3u64, 4, 2000].into_iter().collect();
    let read = plan.read_rows_at(&add, &asked).unwrap();
    let (n, at): (usize, Vec<u64>) = read.iter().fold((0, Vec::new()), |(n, mut at), (b, p)| {
        at.extend(p.values().iter().copied());
        (n + b.num_rows(), at)
    });
    assert_eq!(n, 3);
    assert_eq!(at, vec![3, 4, 2000]);
}

#[test]
fn read_file_rows_reads_the_asked_rows_whatever_the_deletion_vector() {
    let (layout, mut add) = one_file();
    let deleted: RoaringTreemap = [0u64, 5].into_iter().collect();
    add.deletion_vector = Some(Box::new(alluvium_txlog::dv::inline_descriptor(&deleted)));
    let plan = ReadPlan::all(layout).unwrap();
    let asked: RoaringTreemap = [0u64, 5, 6].into_iter().collect();
    // Live rows only: the deletion vector still applies to `read_rows_at`.
    let (live, at) = rows_of(plan.read_rows_at(&add, &asked).unwrap());
    assert_eq!(at, vec![6]);
    assert_eq!(live, expected([6i64].into_iter()));
    // The change feed's read: exactly the asked rows, deleted or not.
    let mut ids = Vec::new();
    for b in plan.read_file_rows(&add, &asked).unwrap() {
        let col = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        ids.extend(col.values().iter().copied());
    }
    assert_eq!(ids, vec![0, 5, 6]);
}

/// The (id, name, part) rows of batches, whatever their string layout.
fn texts(batches: &[RecordBatch]) -> Vec<(i64, String, String)> {
    let mut out = Vec::new();
    for b in batches {
        let columns: Vec<arrow_array::ArrayRef> = b
            .columns()
            .iter()
            .map(|c| arrow_cast::cast::cast(c, &offsets_type(c.data_type())).unwrap())
            .collect();
        let fields: Vec<Field> = b
            .schema()
            .fields()
            .iter()
            .map(|f| Field::new(f.name(), offsets_type(f.data_type()), true))
            .collect();
        let b = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
        let positions = arrow_array::UInt64Array::from(vec![0u64; b.num_rows()]);
        out.extend(rows_of(vec![(b, positions)]).0);
    }
    out
}

fn offsets_type(t: &ArrowType) -> ArrowType {
    match t {
        ArrowType::Utf8View => ArrowType::Utf8,
        t => t.clone(),
    }
}

#[test]
fn the_view_form_reads_strings_as_views_with_the_same_values() {
    use alluvium_txlog::schema::ArrowForm;
    let (layout, mut add) = one_file();
    let deleted: RoaringTreemap = [1u64, 2000].into_iter().collect();
    add.deletion_vector = Some(Box::new(alluvium_txlog::dv::inline_descriptor(&deleted)));
    let pred = || {
        Some(
            bind(
                &parse_expr("name < 'n15' OR id = 2000").unwrap(),
                &layout.schema,
                &layout.partition_columns,
                ColumnMappingMode::None,
            )
            .unwrap(),
        )
    };
    // Whole file (deletion vector applied, partition column filled); a filter on the
    // string column, read split; exactly given rows.
    let plans = [
        (None, None),
        (None, pred()),
        (Some(vec!["name".to_string()]), pred()),
    ];
    for (columns, predicate) in plans {
        let of = |form| {
            ReadPlan::new_as(layout.clone(), columns.as_deref(), predicate.clone(), form).unwrap()
        };
        let (offsets, views) = (of(ArrowForm::SCAN), of(ArrowForm::SCAN_VIEWS));
        assert_eq!(
            predicate.is_some() && columns.is_none(),
            views.split.is_some()
        );
        for f in views.schema().fields() {
            assert_ne!(f.data_type(), &ArrowType::Utf8, "{}", f.name());
        }
        let want = offsets.read_file(&add).unwrap();
        let got = views.read_file(&add).unwrap();
        assert!(!want.is_empty());
        for b in &got {
            assert_eq!(b.schema(), views.schema());
        }
        if columns.is_none() {
            assert_eq!(texts(&got), texts(&want));
            let asked: RoaringTreemap = [0u64, 1, 2, 999].into_iter().collect();
            let rows = |p: &ReadPlan| -> Vec<RecordBatch> {
                p.read_rows_at(&add, &asked)
                    .unwrap()
                    .into_iter()
                    .map(|(b, _)| b)
                    .collect()
            };
            assert_eq!(texts(&rows(&views)), texts(&rows(&offsets)));
        } else {
            let strings = |bs: &[RecordBatch]| -> Vec<String> {
                bs.iter()
                    .flat_map(|b| {
                        let c = arrow_cast::cast::cast(b.column(0), &ArrowType::Utf8).unwrap();
                        c.as_string::<i32>()
                            .iter()
                            .map(|v| v.unwrap().to_string())
                            .collect::<Vec<_>>()
                    })
                    .collect()
            };
            assert_eq!(strings(&got), strings(&want));
        }
    }
}

#[test]
fn a_read_refuses_a_form_that_is_not_a_scan_form() {
    use alluvium_txlog::schema::ArrowForm;
    let (layout, _) = one_file();
    let err = ReadPlan::new_as(layout, None, None, ArrowForm::DECLARED).unwrap_err();
    assert!(err.to_string().contains("scan form"), "{err}");
}

#[test]
fn the_view_hint_types_the_string_columns_read_and_nothing_else() {
    use super::file::view_hint;
    use alluvium_txlog::schema::ArrowForm;
    let (layout, _) = one_file();
    // The file stores `id` and `name`; `part` is a partition column (no source).
    let file_fields = arrow_schema::Fields::from(vec![
        Field::new("id", ArrowType::Int64, true),
        Field::new("name", ArrowType::LargeUtf8, true),
    ]);
    let plan = |columns: &[&str], form| {
        let columns: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
        ReadPlan::new_as(layout.clone(), Some(&columns), None, form).unwrap()
    };
    let views = plan(&["id", "name", "part"], ArrowForm::SCAN_VIEWS);
    let hint = view_hint(&views, &file_fields, &[Some(0), Some(1), None]).unwrap();
    assert_eq!(hint.field(0), file_fields[0].as_ref());
    assert_eq!(hint.field(1).data_type(), &ArrowType::Utf8View);
    assert_eq!(hint.field(1).name(), "name");
    // No hint for the offsets form, nor when no string column is read from the file.
    let offsets = plan(&["id", "name"], ArrowForm::SCAN);
    assert!(view_hint(&offsets, &file_fields, &[Some(0), Some(1)]).is_none());
    let ids = plan(&["id", "part"], ArrowForm::SCAN_VIEWS);
    assert!(view_hint(&ids, &file_fields, &[Some(0), None]).is_none());
}

/// `TableLayout::new` takes every field from the protocol and metadata: partition columns
/// and properties as the metadata has them, the column-mapping mode the protocol honours,
/// and materialised partition columns exactly when the writer feature or IcebergCompat
/// V1/V2 asks for them.
#[test]
fn the_layout_constructor_answers_from_protocol_and_metadata() {
    use alluvium_txlog::actions::{Metadata, Protocol};
    use alluvium_txlog::table::TableConfiguration;

    let layout = |protocol: &str, configuration: &str| {
        let protocol: Protocol = serde_json::from_str(protocol).unwrap();
        let metadata: Metadata = serde_json::from_str(&format!(
            r#"{{"id":"t","format":{{"provider":"parquet","options":{{}}}},
            "schemaString":"{{\"type\":\"struct\",\"fields\":[]}}",
            "partitionColumns":["p"],"configuration":{configuration}}}"#
        ))
        .unwrap();
        let store: StoreRef = Arc::new(InMemoryStore::new());
        TableLayout::new(
            store,
            TableRoot::new("memory:///t"),
            schema(),
            &TableConfiguration::new(&protocol, &metadata),
        )
    };
    let plain = layout(r#"{"minReaderVersion":1,"minWriterVersion":2}"#, "{}");
    assert!(!plain.materialize_partition_columns);
    assert_eq!(plain.column_mapping, ColumnMappingMode::None);
    assert_eq!(plain.partition_columns, vec!["p".to_string()]);
    assert_eq!(plain.schema, schema());
    assert!(plain.configuration.is_empty());

    let feature = layout(
        r#"{"minReaderVersion":1,"minWriterVersion":7,
            "writerFeatures":["materializePartitionColumns"]}"#,
        "{}",
    );
    assert!(feature.materialize_partition_columns);

    let iceberg = layout(
        r#"{"minReaderVersion":2,"minWriterVersion":5}"#,
        r#"{"delta.enableIcebergCompatV2":"true","delta.columnMapping.mode":"name"}"#,
    );
    assert!(iceberg.materialize_partition_columns);
    assert_eq!(iceberg.column_mapping, ColumnMappingMode::Name);
    assert_eq!(
        iceberg.configuration.get("delta.columnMapping.mode"),
        Some(&"name".to_string())
    );

    // A mode the protocol does not support is not in force.
    let unsupported = layout(
        r#"{"minReaderVersion":1,"minWriterVersion":2}"#,
        r#"{"delta.columnMapping.mode":"name"}"#,
    );
    assert_eq!(unsupported.column_mapping, ColumnMappingMode::None);
}
