//! Loading snapshots of a synthetic table of 10,000 commits, one file each, with a
//! checkpoint every 100 commits (the shape of `make_tables.py --with-10k`), on the local
//! filesystem:
//! * `load/latest+files` — open, load the latest version (`_last_checkpoint`, one listing,
//!   the checkpoint at 9,900 and 99 commits) and resolve every live file's location;
//! * `load/json-1000` — a copy without checkpoints, version 1,000: JSON replay of 1,001
//!   commits;
//! * `refresh/10` — incremental refresh of a loaded snapshot after 10 new commits.
//!
//! `cargo bench --bench snapshot_load`. For the 1,000,000-file scale figures use
//! `alluvium-bench gen-log` / `load` / `refresh` (see README).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use alluvium::{Table, VersionSpec};
use alluvium_compaction::{CheckpointConfig, checkpoint};
use alluvium_txlog::path::resolve;
use criterion::{Criterion, criterion_group, criterion_main};

const COMMITS: u64 = 10_000;
const FILES_PER_COMMIT: u64 = 1;
const CHECKPOINT_EVERY: u64 = 100;

/// Generates the table (with checkpoints when `checkpoints`) in a new directory.
fn table(checkpoints: bool) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_string_lossy().into_owned();
    let table = Table::open_local(&path, false).expect("open");
    alluvium_bench::synthetic::create_log(&table, COMMITS, FILES_PER_COMMIT).expect("generate");
    if checkpoints {
        for v in (CHECKPOINT_EVERY..=COMMITS).step_by(CHECKPOINT_EVERY as usize) {
            let at = table.snapshot_at(VersionSpec::Version(v)).expect("load");
            checkpoint(
                &(&at).into(),
                &CheckpointConfig::default(),
                1_700_000_000_000,
            )
            .expect("checkpoint");
        }
    }
    (dir, path)
}

fn bench(c: &mut Criterion) {
    let (_dir, path) = table(true);
    let (_json_dir, json_path) = table(false);
    let mut group = c.benchmark_group("load");
    group.sample_size(30);
    group.bench_function("latest+files", |b| {
        b.iter(|| {
            let s = Table::open(&path).expect("open").snapshot().expect("load");
            let files: Vec<String> = s
                .files()
                .map(|f| resolve(f.path(), s.root()).expect("resolve").to_string())
                .collect();
            assert_eq!(files.len() as u64, COMMITS * FILES_PER_COMMIT);
            files
        })
    });
    group.bench_function("json-1000", |b| {
        b.iter(|| {
            Table::open(&json_path)
                .expect("open")
                .snapshot_at(VersionSpec::Version(1000))
                .expect("load")
        })
    });
    group.finish();

    // Each refresh gets 10 new commits of its own; only the refresh is timed.
    let table = Table::open_local(&path, false).expect("open");
    let mut base = table.snapshot().expect("base");
    c.bench_function("refresh/10", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                let next = base.version() + 1;
                alluvium_bench::synthetic::append_commits(
                    table.store().as_ref(),
                    next,
                    next + 9,
                    FILES_PER_COMMIT,
                )
                .expect("append");
                let started = std::time::Instant::now();
                base = base.refresh().expect("refresh");
                total += started.elapsed();
            }
            total
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
