//! The memory estimate of a table state against what the allocator really handed out.
//!
//! A binary of its own with a single test, because it counts every allocation of the
//! process through its global allocator: another test running beside it would be counted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use std::collections::HashMap;

use alluvium_txlog::actions::{Action, Add, Format, Metadata, OptStringMap, Protocol, Remove};
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::replay::{Replay, TableState};
use alluvium_txlog::schema::PrimitiveType;

/// Bytes currently allocated (requested sizes, no allocator overhead).
static LIVE: AtomicIsize = AtomicIsize::new(0);

struct Counting;

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter moves.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `dealloc` is passed on as is.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: the caller's contract for `realloc` is passed on as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn actions(files: usize, removes: usize) -> Vec<Action> {
    let schema = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}}]}"#;
    let mut out = vec![
        Action::Protocol(Protocol {
            min_reader_version: 1,
            min_writer_version: 2,
            reader_features: None,
            writer_features: None,
        }),
        Action::Metadata(Metadata {
            id: "id".into(),
            name: None,
            description: None,
            format: Format::default(),
            schema_string: schema.into(),
            partition_columns: vec!["p".into()],
            created_time: None,
            configuration: HashMap::new(),
        }),
    ];
    for i in 0..files {
        let mut pv = OptStringMap::default();
        pv.insert("p", Some(format!("{}", i % 7)));
        out.push(Action::Add(
            Add::builder(format!("p={}/part-{i:06}-abcdef.c000.snappy.parquet", i % 7), 5000, 1)
                .partition_values(pv)
                .stats(format!(
                    r#"{{"numRecords":100,"minValues":{{"id":{i}}},"maxValues":{{"id":{}}},"nullCount":{{"id":0}}}}"#,
                    i + 99
                ))
                .build(),
        ));
    }
    for i in 0..removes {
        let gone = Add::builder(format!("gone-{i:06}.parquet"), 10, 1).build();
        out.push(Action::Remove(Remove::from_add(&gone, 1, true)));
    }
    out
}

fn state(files: usize, removes: usize) -> TableState {
    let mut replay = Replay::new(TableRoot::new("file:///t"));
    replay.apply_all(actions(files, removes));
    replay.finish(0).unwrap()
}

/// The estimate never counts less than the state's live allocations and not much more (it
/// adds the allocator's per-block header and rounding, which the counter does not see).
#[test]
fn the_estimate_brackets_what_the_state_really_holds() {
    for (files, removes) in [(0, 0), (1, 0), (1_000, 10), (50_000, 5_000)] {
        // Built (and its typed statistics, which start the thread pool) and dropped once
        // first, so that lazily initialised process state is not charged to the measured
        // one.
        let warm = state(files, removes);
        drop(warm.file_batches(&[(&["id".to_string()][..], Some(PrimitiveType::Long))]));
        drop(warm);
        let before = LIVE.load(Ordering::Relaxed);
        let s = state(files, removes);
        let held = usize::try_from(LIVE.load(Ordering::Relaxed) - before).unwrap()
            + std::mem::size_of::<TableState>();
        let usage = s.memory_usage();
        let estimate = usage.total();
        assert!(
            estimate >= held,
            "{files} files: estimate {estimate} below the {held} bytes allocated ({usage:?})"
        );
        assert!(
            estimate <= held + held / 2 + 4096,
            "{files} files: estimate {estimate} far above the {held} bytes allocated ({usage:?})"
        );
        // With many files, they are most of what a state holds.
        if files >= 1_000 {
            assert!(
                usage.files > usage.tombstones && usage.files > usage.other,
                "{usage:?}"
            );
        }
        // The typed statistics a filtered query leaves with the files count too.
        let id = ["id".to_string()];
        drop(s.file_batches(&[(&id[..], Some(PrimitiveType::Long))]));
        let held = usize::try_from(LIVE.load(Ordering::Relaxed) - before).unwrap()
            + std::mem::size_of::<TableState>();
        let typed = s.memory_usage();
        assert!(
            typed.total() >= held && typed.total() <= held + held / 2 + 4096,
            "{files} files with typed statistics: estimate {} for {held} bytes allocated",
            typed.total()
        );
        if files >= 1_000 {
            assert!(
                typed.files > usage.files + 20 * files,
                "{typed:?} {usage:?}"
            );
        }
        drop(s);
    }
}
