//! Loading snapshots of a synthetic 10,000-commit table (10 files per commit, 100,000 live
//! files) on the local filesystem:
//! * `load/checkpoint+10` — cold load of the latest version: `_last_checkpoint`, one listing,
//!   the checkpoint at 9,990 and 10 commits;
//! * `load/json-1000` — time travel to version 1,000, below every checkpoint: JSON replay of
//!   1,001 commits;
//! * `refresh/10` — incremental refresh of a loaded snapshot after 10 new commits.
//!
//! `cargo bench --bench snapshot_load`. For the 1,000,000-file scale figures use
//! `alluvium bench gen-log` / `bench load` / `bench refresh` (see README).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use alluvium::compaction::{CheckpointConfig, checkpoint};
use alluvium::{Table, VersionSpec};
use criterion::{Criterion, criterion_group, criterion_main};

const COMMITS: u64 = 10_000;
const FILES_PER_COMMIT: u64 = 10;

fn table() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_string_lossy().into_owned();
    let table = Table::open_local(&path, false).expect("open");
    alluvium::synthetic::create_log(&table, COMMITS, FILES_PER_COMMIT).expect("generate");
    let at = table
        .snapshot_at(VersionSpec::Version(COMMITS - 10))
        .expect("load for checkpoint");
    checkpoint(&at, &CheckpointConfig::default(), 1_700_000_000_000).expect("checkpoint");
    (dir, path)
}

fn bench(c: &mut Criterion) {
    let (_dir, path) = table();
    let mut group = c.benchmark_group("load");
    group.sample_size(20);
    group.bench_function("checkpoint+10", |b| {
        b.iter(|| {
            let s = Table::open(&path).expect("open").snapshot().expect("load");
            assert_eq!(s.num_files() as u64, COMMITS * FILES_PER_COMMIT);
            s
        })
    });
    group.bench_function("json-1000", |b| {
        b.iter(|| {
            Table::open(&path)
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
                alluvium::synthetic::append_commits(
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
