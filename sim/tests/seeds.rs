//! The unplanted engine against fixed seeds, and one seed replayed twice.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Instant;

use alluvium_sim::{Config, minimise, run_seed};

#[test]
fn one_seed_replays_the_same_trace() {
    let c = Config::default();
    let mut waits = 0;
    // Seed 43 runs a group whose members sleep in the group-commit queue.
    for seed in [3, 17, 43] {
        let a = run_seed(seed, &c).unwrap_or_else(|f| panic!("{f}"));
        let b = run_seed(seed, &c).unwrap_or_else(|f| panic!("{f}"));
        println!(
            "seed {seed}: trace hash {:016x} ({} steps)",
            a.trace_hash, a.steps
        );
        println!(
            "seed {seed}: trace hash {:016x} ({} steps)",
            b.trace_hash, b.steps
        );
        assert_eq!(
            (a.trace_hash, a.steps, a.versions, a.crashes),
            (b.trace_hash, b.steps, b.versions, b.crashes),
            "seed {seed} did not replay"
        );
        assert_eq!(a.trace, b.trace);
        assert_eq!(a.unscheduled, 0, "storage calls escaped the scheduler");
        println!("seed {seed}: {} group-commit waits", group_waits(&a.trace));
        waits += group_waits(&a.trace);
    }
    assert!(waits > 0, "no replayed seed had a group member wait");
}

fn run_seeds(seeds: std::ops::Range<u64>) {
    let c = Config::default();
    let started = Instant::now();
    let (mut steps, mut versions, mut crashes) = (0, 0, (0, 0));
    let (mut waits, mut unscheduled) = (0, 0);
    for seed in seeds.clone() {
        match run_seed(seed, &c) {
            Ok(s) => {
                waits += group_waits(&s.trace);
                unscheduled += s.unscheduled;
                steps += s.steps;
                versions += s.versions;
                crashes.0 += s.crashes.0;
                crashes.1 += s.crashes.1;
            }
            Err(_) => {
                let f = minimise(seed, &c).unwrap();
                panic!("the unplanted engine fails:\n{f}");
            }
        }
    }
    println!(
        "seeds {seeds:?}: passed in {:.1?} ({steps} steps, {versions} versions, {} process and {} machine crashes, {waits} waits in the group-commit queue)",
        started.elapsed(),
        crashes.0,
        crashes.1
    );
    assert_eq!(unscheduled, 0, "storage calls escaped the scheduler");
    assert!(waits > 0, "no group member ever waited for a leader");
}

/// How often a group member slept in the group-commit queue (the scheduler's trace line).
fn group_waits(trace: &[String]) -> usize {
    trace
        .iter()
        .filter(|l| l.ends_with("waits in the group-commit queue"))
        .count()
}

#[test]
fn the_engine_passes_200_seeds() {
    run_seeds(0..200);
}

/// The long random-seed run for releases:
/// `ALLUVIUM_SIM_SEEDS=0..100000 cargo test -p alluvium-sim --release -- --ignored`.
#[test]
#[ignore = "long run: set ALLUVIUM_SIM_SEEDS"]
fn the_engine_passes_the_seeds_of_the_environment() {
    run_seeds(alluvium_sim::seeds_from_env(200..1200));
}
