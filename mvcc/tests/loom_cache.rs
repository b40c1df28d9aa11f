//! loom model of the snapshot cache a table handle shares between threads (SPEC.md §12):
//! readers always see a whole published value, and versions never go backwards.
//!
//! Run: `LOOM_MAX_PREEMPTIONS=2 RUSTFLAGS="--cfg alluvium_loom" cargo test -p alluvium-mvcc --release --test loom_cache`
#![cfg(alluvium_loom)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use alluvium_mvcc::snapshot::{Versioned, VersionedCache};
use alluvium_storage::sync::Arc;

/// A value whose two halves must always agree (a torn value would not).
#[derive(Debug)]
struct Snap {
    version: u64,
    check: u64,
}

impl Versioned for Snap {
    fn version(&self) -> u64 {
        self.version
    }
}

fn snap(v: u64) -> Arc<Snap> {
    Arc::new(Snap {
        version: v,
        check: v * 7,
    })
}

#[test]
fn readers_see_whole_values_and_versions_never_go_backwards() {
    loom::model(|| {
        let cache = Arc::new(VersionedCache::<Snap>::new());
        let publishers: Vec<_> = [(1u64, 3u64), (2, 4)]
            .into_iter()
            .map(|(a, b)| {
                let cache = cache.clone();
                loom::thread::spawn(move || {
                    let first = cache.publish(snap(a));
                    assert!(first.version >= a);
                    let second = cache.publish(snap(b));
                    assert!(second.version >= b.max(first.version));
                })
            })
            .collect();
        let reader = {
            let cache = cache.clone();
            loom::thread::spawn(move || {
                let mut last = 0;
                for _ in 0..3 {
                    if let Some(s) = cache.get() {
                        assert_eq!(s.check, s.version * 7, "torn value");
                        assert!(s.version >= last, "version went backwards");
                        last = s.version;
                    }
                }
            })
        };
        for p in publishers {
            p.join().unwrap();
        }
        reader.join().unwrap();
        assert_eq!(cache.get().unwrap().version, 4);
    });
}
