//! Reading the change data feed (`Table::changes`) over hand-built logs: one test per
//! reader rule (cdc precedence, dataChange=false, deletion-vector differences both ways,
//! inline vectors, partition values, column mapping, commit timestamps), each typed error,
//! timestamp ranges, and projection and filter push-down.

use std::path::PathBuf;
use std::sync::Arc;

use alluvium::{CheckpointConfig, Error, ErrorKind, Table, VersionSpec};
use alluvium_txlog::dv::inline_descriptor;
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::array::{AsArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, TimeUnit};
use parquet::arrow::ArrowWriter;
use roaring::RoaringTreemap;
use serde_json::{Value, json};

use crate::common;

/// A table directory whose log the test writes by hand.
struct Log {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

const SCHEMA: &str = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]}"#;
const PART_SCHEMA: &str = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}},{"name":"part","type":"string","nullable":true,"metadata":{}}]}"#;

impl Log {
    fn new() -> Log {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join("_delta_log")).unwrap();
        Log { _dir: dir, root }
    }

    fn table(&self) -> Table {
        Table::open(self.root.to_str().unwrap()).unwrap()
    }

    fn commit(&self, version: u64, actions: &[Value]) {
        let text: String = actions.iter().map(|a| format!("{a}\n")).collect();
        std::fs::write(
            self.root.join(format!("_delta_log/{version:020}.json")),
            text,
        )
        .unwrap();
    }

    /// Writes a Parquet file of `columns` at `rel`; returns its size.
    fn parquet(&self, rel: &str, columns: Vec<(&str, ArrayRef)>) -> i64 {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let file = std::fs::File::create(&path).unwrap();
        let mut w = ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        i64::try_from(std::fs::metadata(&path).unwrap().len()).unwrap()
    }

    /// A data file of rows `ids` (names `n<id>`).
    fn data(&self, rel: &str, ids: &[i64]) -> i64 {
        let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
        self.parquet(
            rel,
            vec![
                ("id", Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef),
                ("name", Arc::new(StringArray::from(names))),
            ],
        )
    }

    /// A change-data file of (id, name, change type) rows.
    fn cdc(&self, rel: &str, rows: &[(i64, &str, &str)]) -> i64 {
        self.parquet(
            rel,
            vec![
                (
                    "id",
                    Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))) as ArrayRef,
                ),
                (
                    "name",
                    Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
                ),
                (
                    "_change_type",
                    Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.2))),
                ),
            ],
        )
    }
}

fn protocol() -> Value {
    json!({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": ["deletionVectors"],
        "writerFeatures": ["deletionVectors", "changeDataFeed", "inCommitTimestamp"]}})
}

fn metadata(schema: &str, partition: &[&str], config: &[(&str, &str)]) -> Value {
    let config: serde_json::Map<String, Value> = config
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    json!({"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}},
        "schemaString": schema, "partitionColumns": partition, "configuration": config,
        "createdTime": 0}})
}

const CDF_ON: (&str, &str) = ("delta.enableChangeDataFeed", "true");

fn add(path: &str, size: i64, data_change: bool) -> Value {
    json!({"add": {"path": path, "partitionValues": {}, "size": size,
        "modificationTime": 0, "dataChange": data_change}})
}

fn remove(path: &str, size: i64, data_change: bool) -> Value {
    json!({"remove": {"path": path, "deletionTimestamp": 0, "dataChange": data_change,
        "extendedFileMetadata": true, "partitionValues": {}, "size": size}})
}

fn with_dv(mut action: Value, rows: &[u64]) -> Value {
    let bitmap: RoaringTreemap = rows.iter().copied().collect();
    let dv = serde_json::to_value(inline_descriptor(&bitmap)).unwrap();
    let (_, body) = action.as_object_mut().unwrap().iter_mut().next().unwrap();
    body["deletionVector"] = dv;
    action
}

fn cdc_action(path: &str, size: i64, partition: Value) -> Value {
    json!({"cdc": {"path": path, "partitionValues": partition, "size": size, "dataChange": false}})
}

/// Change rows as sorted `col=value` strings of the named columns.
fn rows_of(batches: &[RecordBatch], columns: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            let cells: Vec<String> = columns
                .iter()
                .map(|c| common::canon(b.column_by_name(c).unwrap().as_ref(), i))
                .collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    out
}

/// The feed's (id, name, change type, version) rows; the same with view types (checked).
fn feed(t: &Table, start: u64, end: Option<u64>) -> Vec<String> {
    let read = |views: bool| {
        t.changes(VersionSpec::Version(start), end.map(VersionSpec::Version))
            .view_types(views)
            .execute_to_vec()
            .unwrap()
    };
    let columns = ["id", "name", "_change_type", "_commit_version"];
    let rows = rows_of(&read(false), &columns);
    let views = read(true);
    for b in &views {
        assert_eq!(
            b.column_by_name("name").unwrap().data_type(),
            &DataType::Utf8View
        );
        assert_eq!(
            b.column_by_name("_change_type").unwrap().data_type(),
            &DataType::Utf8View
        );
    }
    assert_eq!(
        rows_of(&views, &columns),
        rows,
        "the feed read with view types"
    );
    rows
}

fn strs(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn adds_are_inserts_removes_are_deletes_and_data_change_false_adds_nothing() {
    let log = Log::new();
    let a = log.data("a.parquet", &[0, 1]);
    let b = log.data("b.parquet", &[2, 3]);
    let c = log.data("c.parquet", &[2, 3]);
    log.commit(
        0,
        &[
            protocol(),
            metadata(SCHEMA, &[], &[CDF_ON]),
            add("a.parquet", a, true),
        ],
    );
    log.commit(1, &[add("b.parquet", b, true)]);
    log.commit(2, &[remove("a.parquet", a, true)]);
    // A compaction: rearranges rows, changes none.
    log.commit(
        3,
        &[remove("b.parquet", b, false), add("c.parquet", c, false)],
    );
    let t = log.table();
    assert_eq!(
        feed(&t, 0, None),
        strs(&[
            "0|n0|insert|0",
            "1|n1|insert|0",
            "2|n2|insert|1",
            "3|n3|insert|1",
            "0|n0|delete|2",
            "1|n1|delete|2",
        ])
    );
    assert_eq!(
        feed(&t, 1, Some(1)),
        strs(&["2|n2|insert|1", "3|n3|insert|1"])
    );
    assert!(
        feed(&t, 3, None).is_empty(),
        "dataChange=false records no change"
    );
}

#[test]
fn a_version_with_cdc_files_reads_only_them() {
    let log = Log::new();
    let a = log.data("a.parquet", &[0, 1]);
    let a2 = log.data("a2.parquet", &[0, 1]);
    let cdc = log.cdc(
        "_change_data/cdc-1.parquet",
        &[(1, "n1", "update_preimage"), (1, "x1", "update_postimage")],
    );
    log.commit(
        0,
        &[
            protocol(),
            metadata(SCHEMA, &[], &[CDF_ON]),
            add("a.parquet", a, true),
        ],
    );
    log.commit(
        1,
        &[
            remove("a.parquet", a, true),
            add("a2.parquet", a2, true),
            cdc_action("_change_data/cdc-1.parquet", cdc, json!({})),
        ],
    );
    let t = log.table();
    assert_eq!(
        feed(&t, 1, None),
        strs(&["1|n1|update_preimage|1", "1|x1|update_postimage|1"]),
        "the cdc file holds all of the version's changes; its add and remove are not read"
    );
}

#[test]
fn a_re_added_file_yields_the_rows_between_its_deletion_vectors() {
    let log = Log::new();
    let a = log.data("a.parquet", &[0, 1, 2, 3, 4]);
    log.commit(
        0,
        &[
            protocol(),
            metadata(SCHEMA, &[], &[CDF_ON]),
            add("a.parquet", a, true),
        ],
    );
    // DELETE of rows 1 and 3 through an (inline) deletion vector.
    log.commit(
        1,
        &[
            remove("a.parquet", a, true),
            with_dv(add("a.parquet", a, true), &[1, 3]),
        ],
    );
    // Row 4 newly deleted, row 1 newly live again (a RESTORE-like change).
    log.commit(
        2,
        &[
            with_dv(remove("a.parquet", a, true), &[1, 3]),
            with_dv(add("a.parquet", a, true), &[3, 4]),
        ],
    );
    // Same vector re-added: nothing changed.
    log.commit(
        3,
        &[
            with_dv(remove("a.parquet", a, true), &[3, 4]),
            with_dv(add("a.parquet", a, true), &[3, 4]),
        ],
    );
    // The whole logical file removed: its live rows are deleted.
    log.commit(4, &[with_dv(remove("a.parquet", a, true), &[3, 4])]);
    let t = log.table();
    assert_eq!(
        feed(&t, 1, None),
        strs(&[
            "1|n1|delete|1",
            "3|n3|delete|1",
            "4|n4|delete|2",
            "1|n1|insert|2",
            "0|n0|delete|4",
            "1|n1|delete|4",
            "2|n2|delete|4",
        ])
    );
}

#[test]
fn partition_values_fill_partition_columns_and_a_partition_filter_skips_files() {
    let log = Log::new();
    let x = log.data("part=x/a.parquet", &[0, 1]);
    let y = log.data("part=y/b.parquet", &[2]);
    let cdc = log.cdc("_change_data/part=y/cdc-2.parquet", &[(2, "n2", "delete")]);
    let padd = |p: &str, size: i64, part: &str| {
        json!({"add": {"path": p, "partitionValues": {"part": part}, "size": size,
            "modificationTime": 0, "dataChange": true}})
    };
    log.commit(
        0,
        &[
            protocol(),
            metadata(PART_SCHEMA, &["part"], &[CDF_ON]),
            padd("part=x/a.parquet", x, "x"),
            padd("part=y/b.parquet", y, "y"),
        ],
    );
    log.commit(
        1,
        &[cdc_action(
            "_change_data/part=y/cdc-2.parquet",
            cdc,
            json!({"part": "y"}),
        )],
    );
    let t = log.table();
    let all = t
        .changes(VersionSpec::Version(0), None)
        .execute_to_vec()
        .unwrap();
    assert_eq!(
        rows_of(&all, &["id", "part", "_change_type", "_commit_version"]),
        strs(&[
            "0|x|insert|0",
            "1|x|insert|0",
            "2|y|insert|0",
            "2|y|delete|1"
        ])
    );
    let planned = t
        .changes(VersionSpec::Version(0), None)
        .filter_str("part = 'y'")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(planned.num_files(), 2, "the file of partition x is skipped");
    assert_eq!(
        rows_of(
            &planned.execute_to_vec().unwrap(),
            &["id", "part", "_change_type"]
        ),
        strs(&["2|y|insert", "2|y|delete"])
    );
}

#[test]
fn column_mapping_reads_data_and_cdc_files_by_physical_name() {
    let log = Log::new();
    let schema = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1"}},{"name":"name","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2"}}]}"#;
    let a = log.parquet(
        "a.parquet",
        vec![
            ("col-1", Arc::new(Int64Array::from(vec![7])) as ArrayRef),
            ("col-2", Arc::new(StringArray::from(vec!["seven"]))),
        ],
    );
    let cdc = log.parquet(
        "_change_data/cdc.parquet",
        vec![
            ("col-1", Arc::new(Int64Array::from(vec![7])) as ArrayRef),
            ("col-2", Arc::new(StringArray::from(vec!["seven"]))),
            ("_change_type", Arc::new(StringArray::from(vec!["delete"]))),
        ],
    );
    let cm_protocol = json!({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": ["columnMapping"],
        "writerFeatures": ["columnMapping", "changeDataFeed"]}});
    log.commit(
        0,
        &[
            cm_protocol,
            metadata(
                schema,
                &[],
                &[
                    CDF_ON,
                    ("delta.columnMapping.mode", "name"),
                    ("delta.columnMapping.maxColumnId", "2"),
                ],
            ),
            add("a.parquet", a, true),
        ],
    );
    log.commit(1, &[cdc_action("_change_data/cdc.parquet", cdc, json!({}))]);
    assert_eq!(
        feed(&log.table(), 0, None),
        strs(&["7|seven|insert|0", "7|seven|delete|1"])
    );
}

fn ict_log() -> Log {
    let log = Log::new();
    let a = log.data("a.parquet", &[0]);
    let b = log.data("b.parquet", &[1]);
    let c = log.data("c.parquet", &[2]);
    let ci = |ts: i64| json!({"commitInfo": {"inCommitTimestamp": ts, "operation": "WRITE"}});
    let config = [CDF_ON, ("delta.enableInCommitTimestamps", "true")];
    log.commit(
        0,
        &[
            ci(1_000),
            protocol(),
            metadata(SCHEMA, &[], &config),
            add("a.parquet", a, true),
        ],
    );
    log.commit(1, &[ci(2_000), add("b.parquet", b, true)]);
    log.commit(2, &[ci(3_000), add("c.parquet", c, true)]);
    log
}

#[test]
fn commit_timestamps_are_in_commit_timestamps_where_enabled() {
    let log = ict_log();
    let batches = log
        .table()
        .changes(VersionSpec::Version(0), None)
        .columns(["id", "_commit_timestamp"])
        .execute_to_vec()
        .unwrap();
    let field = batches[0].schema().field(1).clone();
    assert_eq!(
        field.data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    let mut got: Vec<(i64, i64)> = Vec::new();
    for b in &batches {
        let ids = b.column(0).as_primitive::<arrow::datatypes::Int64Type>();
        let ts = b
            .column(1)
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        for i in 0..b.num_rows() {
            got.push((ids.value(i), ts.value(i)));
        }
    }
    got.sort();
    assert_eq!(got, [(0, 1_000_000), (1, 2_000_000), (2, 3_000_000)]);
}

#[test]
fn without_in_commit_timestamps_the_commit_file_time_dates_the_change() {
    let log = Log::new();
    let a = log.data("a.parquet", &[0]);
    log.commit(
        0,
        &[
            protocol(),
            metadata(SCHEMA, &[], &[CDF_ON]),
            add("a.parquet", a, true),
        ],
    );
    let mtime = std::fs::metadata(log.root.join("_delta_log/00000000000000000000.json"))
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let batches = log
        .table()
        .changes(VersionSpec::Version(0), None)
        .columns(["_commit_timestamp"])
        .execute_to_vec()
        .unwrap();
    let ts = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .unwrap();
    assert_eq!(ts.value(0), mtime * 1000);
}

#[test]
fn timestamp_ranges_start_at_or_after_and_end_at_or_before() {
    let log = ict_log();
    let t = log.table();
    let read = |start: i64, end: Option<i64>| -> Result<Vec<String>, Error> {
        let b = t
            .changes(
                VersionSpec::Timestamp(start),
                end.map(VersionSpec::Timestamp),
            )
            .execute_to_vec()?;
        Ok(rows_of(&b, &["id", "_commit_version"]))
    };
    assert_eq!(read(1_500, Some(2_500)).unwrap(), strs(&["1|1"]));
    assert_eq!(read(2_000, None).unwrap(), strs(&["1|1", "2|2"]));
    assert_eq!(read(0, Some(1_000)).unwrap(), strs(&["0|0"]));
    let late = read(3_500, None).unwrap_err();
    assert!(
        matches!(
            late,
            Error::ChangeDataTimestampOutOfRange {
                timestamp_ms: 3_500,
                ..
            }
        ),
        "{late}"
    );
    assert_eq!(late.kind(), ErrorKind::NotFound);
    let early = read(0, Some(500)).unwrap_err();
    assert!(
        matches!(
            early,
            Error::ChangeDataTimestampOutOfRange {
                timestamp_ms: 500,
                ..
            }
        ),
        "{early}"
    );
}

#[test]
fn versions_without_change_data_are_refused() {
    let log = Log::new();
    let a = log.data("a.parquet", &[0]);
    let b = log.data("b.parquet", &[1]);
    log.commit(
        0,
        &[
            protocol(),
            metadata(SCHEMA, &[], &[]),
            add("a.parquet", a, true),
        ],
    );
    log.commit(1, &[metadata(SCHEMA, &[], &[CDF_ON])]);
    log.commit(2, &[add("b.parquet", b, true)]);
    log.commit(
        3,
        &[metadata(
            SCHEMA,
            &[],
            &[("delta.enableChangeDataFeed", "false")],
        )],
    );
    let t = log.table();
    let err = t
        .changes(VersionSpec::Version(0), None)
        .execute_to_vec()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ChangeDataNotRecorded {
                version: 0,
                start: 0,
                end: 3,
                recorded_from: None,
            }
        ),
        "off at the start: {err}"
    );
    assert_eq!(err.kind(), ErrorKind::Refused);
    // Off only before the feed was turned on: the error says where it starts.
    let err = t
        .changes(VersionSpec::Version(0), Some(VersionSpec::Version(2)))
        .execute_to_vec()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ChangeDataNotRecorded {
                version: 0,
                recorded_from: Some(1),
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("recorded from version 1 on"),
        "{err}"
    );
    assert_eq!(feed(&t, 1, Some(2)), strs(&["1|n1|insert|2"]));
    let err = t
        .changes(VersionSpec::Version(1), Some(VersionSpec::Version(3)))
        .execute_to_vec()
        .unwrap_err();
    assert!(
        matches!(err, Error::ChangeDataNotRecorded { version: 3, .. }),
        "turned off inside the range: {err}"
    );
}

#[test]
fn bad_ranges_are_typed_errors() {
    let log = ict_log();
    let t = log.table();
    let err = t
        .changes(VersionSpec::Version(9), None)
        .execute_to_vec()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ChangeDataStartAfterLatest {
                start: 9,
                latest: 2
            }
        ),
        "{err}"
    );
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let err = t
        .changes(VersionSpec::Version(2), Some(VersionSpec::Version(1)))
        .execute_to_vec()
        .unwrap_err();
    assert!(
        matches!(err, Error::ChangeDataInvalidRange { start: 2, end: 1 }),
        "{err}"
    );
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = t
        .changes(VersionSpec::Version(0), None)
        .columns(["nope"])
        .execute_to_vec()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
}

#[test]
fn a_version_removed_by_log_cleanup_is_refused_and_later_ones_read() {
    let log = Log::new();
    let ids: Vec<i64> = (0..4).collect();
    let mut actions = vec![protocol(), metadata(SCHEMA, &[], &[CDF_ON])];
    for (v, id) in ids.iter().enumerate() {
        let name = format!("f{id}.parquet");
        let size = log.data(&name, &[*id]);
        actions.push(add(&name, size, true));
        log.commit(v as u64, &actions);
        actions.clear();
    }
    let t = log.table();
    t.checkpoint(&CheckpointConfig::default()).unwrap();
    for v in 0..2 {
        std::fs::remove_file(log.root.join(format!("_delta_log/{v:020}.json"))).unwrap();
    }
    let t = log.table();
    let err = t
        .changes(VersionSpec::Version(1), None)
        .execute_to_vec()
        .unwrap_err();
    assert!(
        matches!(err, Error::ChangeDataVersionUnavailable { version: 1, .. }),
        "{err}"
    );
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(feed(&t, 2, None), strs(&["2|n2|insert|2", "3|n3|insert|3"]));
}

#[test]
fn non_additive_schema_changes_inside_the_range_are_refused() {
    let log = Log::new();
    let a = log.data("a.parquet", &[0]);
    let b = log.data("b.parquet", &[1]);
    log.commit(
        0,
        &[
            protocol(),
            metadata(SCHEMA, &[], &[CDF_ON]),
            add("a.parquet", a, true),
        ],
    );
    let added = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}},{"name":"extra","type":"integer","nullable":true,"metadata":{}}]}"#;
    log.commit(
        1,
        &[metadata(added, &[], &[CDF_ON]), add("b.parquet", b, true)],
    );
    let dropped = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"extra","type":"integer","nullable":true,"metadata":{}}]}"#;
    log.commit(2, &[metadata(dropped, &[], &[CDF_ON])]);
    let t = log.table();
    // Additive: older rows read the new column as null.
    let batches = t
        .changes(VersionSpec::Version(0), Some(VersionSpec::Version(1)))
        .execute_to_vec()
        .unwrap();
    assert_eq!(
        rows_of(&batches, &["id", "extra", "_commit_version"]),
        strs(&["0|∅|0", "1|∅|1"])
    );
    let err = t
        .changes(VersionSpec::Version(0), None)
        .execute_to_vec()
        .unwrap_err();
    assert!(
        matches!(&err, Error::ChangeDataIncompatibleSchema { version: 0, reason } if reason.contains("`name`")),
        "{err}"
    );
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(
        t.changes(VersionSpec::Version(2), None)
            .execute_to_vec()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn projection_and_filters_push_down() {
    let log = Log::new();
    let a = log.data("a.parquet", &[0, 1, 2]);
    let b = log.data("b.parquet", &[10, 11]);
    let stats = |min: i64, max: i64| {
        format!(
            r#"{{"numRecords":2,"minValues":{{"id":{min}}},"maxValues":{{"id":{max}}},"nullCount":{{"id":0}}}}"#
        )
    };
    let mut add_a = add("a.parquet", a, true);
    add_a["add"]["stats"] = json!(stats(0, 2));
    let mut add_b = add("b.parquet", b, true);
    add_b["add"]["stats"] = json!(stats(10, 11));
    log.commit(0, &[protocol(), metadata(SCHEMA, &[], &[CDF_ON]), add_a]);
    log.commit(1, &[add_b]);
    let mut remove_a = remove("a.parquet", a, true);
    remove_a["remove"]["stats"] = json!(stats(0, 2));
    log.commit(2, &[remove_a]);
    let t = log.table();

    let projected = t
        .changes(VersionSpec::Version(0), None)
        .columns(["_commit_version", "name"])
        .build()
        .unwrap();
    let names: Vec<String> = projected
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["_commit_version", "name"]);
    let batches = projected.execute_to_vec().unwrap();
    assert!(batches.iter().all(|b| b.num_columns() == 2));

    // On table columns: the statistics skip files, rows are filtered as files are read.
    let pushed = t
        .changes(VersionSpec::Version(0), None)
        .filter_str("id >= 10")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(pushed.num_files(), 1, "only b can hold id >= 10");
    assert_eq!(
        rows_of(&pushed.execute_to_vec().unwrap(), &["id", "_change_type"]),
        strs(&["10|insert", "11|insert"])
    );
    // On the feed's own columns too (applied to the change rows).
    let deletes = t
        .changes(VersionSpec::Version(0), None)
        .columns(["id"])
        .filter_str("_change_type = 'delete' AND id > 0")
        .unwrap()
        .execute_to_vec()
        .unwrap();
    assert_eq!(rows_of(&deletes, &["id"]), strs(&["1", "2"]));
    assert_eq!(deletes[0].num_columns(), 1);
    // With view types, filters on string columns (pushed to the files, and on the feed's
    // own `_change_type`) select the same rows.
    for filter in [
        "name = 'n11' OR name < 'n1'",
        "_change_type = 'delete' AND name <> 'n1'",
    ] {
        let read = |views: bool| {
            t.changes(VersionSpec::Version(0), None)
                .filter_str(filter)
                .unwrap()
                .view_types(views)
                .execute_to_vec()
                .unwrap()
        };
        let columns = ["id", "name", "_change_type", "_commit_version"];
        let want = rows_of(&read(false), &columns);
        assert!(!want.is_empty(), "{filter}");
        assert_eq!(rows_of(&read(true), &columns), want, "{filter}");
    }
    // The stream yields what collecting does, whatever the window.
    let streamed: Vec<RecordBatch> = t
        .changes(VersionSpec::Version(0), None)
        .files_in_flight(1)
        .execute()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        rows_of(&streamed, &["id", "_change_type", "_commit_version"]),
        rows_of(
            &t.changes(VersionSpec::Version(0), None)
                .execute_to_vec()
                .unwrap(),
            &["id", "_change_type", "_commit_version"]
        )
    );
    // Windows are read ahead in the background, yet batches come in version order.
    let versions: Vec<i64> = streamed
        .iter()
        .flat_map(|b| {
            let c = b.column_by_name("_commit_version").unwrap();
            let c = c
                .as_any()
                .downcast_ref::<arrow::array::Int64Array>()
                .unwrap();
            c.values().to_vec()
        })
        .collect();
    assert!(versions.windows(2).all(|w| w[0] <= w[1]), "{versions:?}");
    // Consumed on a rayon worker (a one-thread pool: a worker waiting for a read-ahead job
    // queued behind it would deadlock), the stream reads in the foreground: same rows.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let on_worker: Vec<RecordBatch> = pool.install(|| {
        t.changes(VersionSpec::Version(0), None)
            .files_in_flight(1)
            .execute()
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    assert_eq!(
        rows_of(&on_worker, &["id", "_change_type", "_commit_version"]),
        rows_of(&streamed, &["id", "_change_type", "_commit_version"])
    );
}

#[test]
fn a_widened_column_reads_older_change_rows_as_the_end_type() {
    let log = Log::new();
    let narrow = r#"{"type":"struct","fields":[{"name":"id","type":"integer","nullable":true,"metadata":{}}]}"#;
    let wide = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{"delta.typeChanges":[{"fromType":"integer","toType":"long"}]}}]}"#;
    let a = log.parquet(
        "a.parquet",
        vec![(
            "id",
            Arc::new(arrow::array::Int32Array::from(vec![1, 2])) as ArrayRef,
        )],
    );
    let b = log.parquet(
        "b.parquet",
        vec![(
            "id",
            Arc::new(Int64Array::from(vec![5_000_000_000])) as ArrayRef,
        )],
    );
    let tw_protocol = json!({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": ["typeWidening"], "writerFeatures": ["typeWidening", "changeDataFeed"]}});
    log.commit(
        0,
        &[
            tw_protocol,
            metadata(narrow, &[], &[CDF_ON]),
            add("a.parquet", a, true),
        ],
    );
    log.commit(
        1,
        &[
            metadata(wide, &[], &[CDF_ON, ("delta.enableTypeWidening", "true")]),
            add("b.parquet", b, true),
        ],
    );
    let batches = log
        .table()
        .changes(VersionSpec::Version(0), None)
        .execute_to_vec()
        .unwrap();
    assert!(
        batches
            .iter()
            .all(|b| b.schema().field(0).data_type() == &DataType::Int64)
    );
    assert_eq!(
        rows_of(&batches, &["id", "_commit_version"]),
        strs(&["1|0", "2|0", "5000000000|1"])
    );
}

#[test]
fn removes_without_partition_values_take_them_from_the_add_or_the_path() {
    let log = Log::new();
    let x = log.data("part=x/a.parquet", &[0]);
    let y = log.data("part=y/b.parquet", &[1]);
    let padd = |p: &str, size: i64, part: &str| {
        json!({"add": {"path": p, "partitionValues": {"part": part}, "size": size,
            "modificationTime": 0, "dataChange": true}})
    };
    let bare_remove =
        |p: &str| json!({"remove": {"path": p, "deletionTimestamp": 0, "dataChange": true}});
    log.commit(
        0,
        &[
            protocol(),
            metadata(PART_SCHEMA, &["part"], &[CDF_ON]),
            padd("part=x/a.parquet", x, "x"),
        ],
    );
    log.commit(1, &[padd("part=y/b.parquet", y, "y")]);
    log.commit(
        2,
        &[
            bare_remove("part=x/a.parquet"),
            bare_remove("part=y/b.parquet"),
        ],
    );
    let t = log.table();
    // From the adds of the range.
    let all = t
        .changes(VersionSpec::Version(0), None)
        .execute_to_vec()
        .unwrap();
    assert_eq!(
        rows_of(&all, &["id", "part", "_change_type", "_commit_version"]),
        strs(&[
            "0|x|insert|0",
            "1|y|insert|1",
            "0|x|delete|2",
            "1|y|delete|2"
        ])
    );
    // From the Hive-style directories, when the add is before the range.
    let later = t
        .changes(VersionSpec::Version(2), None)
        .execute_to_vec()
        .unwrap();
    assert_eq!(
        rows_of(&later, &["id", "part", "_change_type"]),
        strs(&["0|x|delete", "1|y|delete"])
    );
}
