//! Streaming and distributed scans: `Scan::execute` yields the same rows as collecting,
//! reads only a bounded window of files ahead, stops at the first failure in file order,
//! and the per-file tasks read on other threads give the same batches.

use crate::common;

use std::sync::Arc;

use alluvium::{Error, FileTask, ScanBuilder, Table, WriteOptions, read_file};
use alluvium_storage::{CountingStore, InMemoryStore, ObjectStore, StorePath, StoreRef};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

const FILES: i64 = 10;

/// A table of `FILES` appends (one data file each, 3 rows each) on a counting store.
fn table() -> (Table, Arc<CountingStore>) {
    let store = Arc::new(CountingStore::new(Arc::new(InMemoryStore::new())));
    let t = Table::from_store(store.clone() as StoreRef);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    t.create(&schema, &[], alluvium::NO_PROPERTIES).unwrap();
    for f in 0..FILES {
        let ids: Vec<i64> = (0..3).map(|r| f * 10 + r).collect();
        let names: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids)) as ArrayRef,
                Arc::new(StringArray::from(names)),
            ],
        )
        .unwrap();
        t.append([batch], &WriteOptions::default()).unwrap();
    }
    (t, store)
}

fn gets(store: &CountingStore) -> u64 {
    store.request_counts().get
}

#[test]
fn the_stream_yields_the_rows_of_the_collected_scan_in_file_order() {
    let (t, _) = table();
    let scan = ScanBuilder::new(t.snapshot().unwrap())
        .with_files_in_flight(3)
        .build()
        .unwrap();
    let streamed: Vec<RecordBatch> = scan.execute().map(Result::unwrap).collect();
    let collected = scan.execute_to_vec().unwrap();
    assert_eq!(streamed, collected);
    assert_eq!(streamed.len(), FILES as usize, "one batch per file");
    let mut rows = common::canon_rows(&streamed);
    rows.sort();
    let mut expected: Vec<String> = (0..FILES)
        .flat_map(|f| (0..3).map(move |r| f * 10 + r))
        .map(|i| {
            let b = RecordBatch::try_new(
                scan.schema(),
                vec![
                    Arc::new(Int64Array::from(vec![i])) as ArrayRef,
                    Arc::new(StringArray::from(vec![format!("n{i}")])),
                ],
            )
            .unwrap();
            common::canon_rows(&[b]).remove(0)
        })
        .collect();
    expected.sort();
    assert_eq!(rows, expected);
}

#[test]
fn a_stream_dropped_after_its_first_batch_reads_only_the_files_in_flight() {
    let (t, store) = table();
    let scan = ScanBuilder::new(t.snapshot().unwrap())
        .with_files_in_flight(2)
        .build()
        .unwrap();
    assert_eq!(scan.files().len(), FILES as usize);

    let before = gets(&store);
    let mut stream = scan.execute();
    assert!(stream.next().unwrap().is_ok());
    drop(stream);
    let read = gets(&store) - before;
    assert_eq!(
        read, 2,
        "one window of two files, not the {FILES} of the scan"
    );

    let before = gets(&store);
    assert_eq!(scan.execute().count(), FILES as usize);
    assert_eq!(
        gets(&store) - before,
        FILES as u64,
        "the whole stream reads every file"
    );
}

#[test]
fn a_failing_file_ends_the_stream_after_the_files_before_it() {
    let (t, store) = table();
    let scan = ScanBuilder::new(t.snapshot().unwrap())
        .with_files_in_flight(4)
        .build()
        .unwrap();
    // Files are read in path order: lose the third.
    let lost = &scan.files()[2].path;
    store
        .delete(&StorePath::parse(lost.clone()).unwrap())
        .unwrap();
    // The stream is an Arrow reader; its errors carry the typed error.
    let items: Vec<Result<_, Error>> = scan.execute().map(|r| r.map_err(Error::from)).collect();
    assert_eq!(
        items.len(),
        3,
        "two files' batches, then the error, then the end"
    );
    assert!(items[0].is_ok() && items[1].is_ok());
    let Err(Error::Log(e)) = &items[2] else {
        panic!("expected a data-file error, got {:?}", items[2]);
    };
    assert!(e.to_string().contains(lost.as_str()), "{e}");
}

#[test]
fn scans_and_change_feeds_are_arrow_readers_with_their_schema_up_front() {
    use arrow_array::RecordBatchReader;
    let (t, _) = table();
    let scan = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["name"])
        .with_filter_str("id < 0")
        .unwrap()
        .build()
        .unwrap();
    // No row matches: the reader still knows its schema.
    let reader: Box<dyn RecordBatchReader + Send> = Box::new(scan.execute());
    assert_eq!(reader.schema(), scan.schema());
    assert_eq!(reader.schema().fields().len(), 1);
    assert_eq!(reader.count(), 0);
    // A reader's output feeds a writer directly (fallible items, streamed).
    let copy = alluvium::Table::in_memory();
    let full = ScanBuilder::new(t.snapshot().unwrap()).build().unwrap();
    copy.create(&full.schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    copy.append(full.execute(), &Default::default()).unwrap();
    let rows = |t: &alluvium::Table| -> usize {
        ScanBuilder::new(t.snapshot().unwrap())
            .build()
            .unwrap()
            .execute_to_vec()
            .unwrap()
            .iter()
            .map(|b| b.num_rows())
            .sum()
    };
    assert_eq!(rows(&copy), rows(&t));
}

#[test]
fn file_tasks_read_on_other_threads_equal_the_scan() {
    fn send_clone<T: Send + Sync + Clone + 'static>(_: &T) {}
    let (t, _) = table();
    let scan = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["name"])
        .with_filter_str("id > 40")
        .unwrap()
        .build()
        .unwrap();
    let tasks: Vec<FileTask> = scan.file_tasks();
    assert_eq!(tasks.len(), scan.files().len());
    send_clone(&tasks[0]);
    let handles: Vec<_> = tasks
        .into_iter()
        .map(|task| std::thread::spawn(move || read_file(&task).unwrap()))
        .collect();
    let distributed: Vec<RecordBatch> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(distributed, scan.execute_to_vec().unwrap());
    assert!(!distributed.is_empty());
    assert!(distributed.iter().all(|b| b.schema() == scan.schema()));
}
