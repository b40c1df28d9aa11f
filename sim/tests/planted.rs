//! Each planted bug is found within 200 seeds. The switch is process-global, so the tests
//! of this binary take turns (a lock) and each removes its bug before it ends.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Mutex;
use std::time::Instant;

use alluvium::planted::{Bug, plant};
use alluvium_sim::{Config, minimise, run_seed};

static SWITCH: Mutex<()> = Mutex::new(());

/// Removes the planted bug even when the test fails.
struct Unplant;

impl Drop for Unplant {
    fn drop(&mut self) {
        plant(None);
    }
}

/// The first seed below 200 whose run the oracle fails with `bug` planted; prints it with
/// its shortest failing trace.
fn found_within_200_seeds(bug: Bug) {
    let _turn = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    let _unplant = Unplant;
    plant(Some(bug));
    let config = Config::default();
    let started = Instant::now();
    for seed in 0..200 {
        if let Err(f) = run_seed(seed, &config) {
            println!(
                "{bug:?}: found by seed {seed} after {:.1?}: {}",
                started.elapsed(),
                f.message
            );
            let shortest = minimise(seed, &config).unwrap();
            println!(
                "{bug:?}: shortest failing run: {} steps of {}",
                shortest.steps, f.steps
            );
            let tail = shortest.trace.len().saturating_sub(40);
            for line in &shortest.trace[tail..] {
                println!("  {line}");
            }
            println!("  => {}", shortest.message);
            return;
        }
    }
    panic!("{bug:?} was not found within 200 seeds");
}

#[test]
fn planted_ambiguous_put_taken_as_failed_is_found() {
    found_within_200_seeds(Bug::AmbiguousPutAsFailed);
}

#[test]
fn planted_overwrite_of_a_lost_version_is_found() {
    found_within_200_seeds(Bug::OverwriteLostVersion);
}

#[test]
fn planted_skipped_deferred_sync_is_found() {
    found_within_200_seeds(Bug::SkipDeferredSync);
}

#[test]
fn planted_vacuum_ignoring_young_files_is_found() {
    found_within_200_seeds(Bug::VacuumIgnoresYoungFiles);
}

#[test]
fn planted_optimize_dropping_a_deletion_vector_is_found() {
    found_within_200_seeds(Bug::OptimizeDropsDeletionVector);
}

#[test]
fn planted_group_commit_sharing_an_app_id_is_found() {
    found_within_200_seeds(Bug::GroupCommitSharesAppId);
}
