//! Fresh random ids (UUID v4) for the names of new files and for transaction ids: every
//! such id of the engine is drawn here, so that there is one place to make them
//! reproducible.
//!
//! With the cargo feature `seeded-ids` (for the deterministic simulator only; never for
//! embedders), a thread may draw its ids from a seeded stream instead
//! ([`seed_thread`]): the engine's choices that follow file names (the name order of
//! listings, scans and deletes) are then a function of the simulator's seed. Threads that
//! set no seed, and every build without the feature, get random ids.

use uuid::Uuid;

#[cfg(feature = "seeded-ids")]
thread_local! {
    /// The SplitMix64 state of this thread's seeded stream, if it has one.
    static STREAM: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Makes this thread draw its ids from a stream seeded with `seed` (`None`: random ids
/// again). Feature `seeded-ids`.
#[cfg(feature = "seeded-ids")]
pub fn seed_thread(seed: Option<u64>) {
    STREAM.with(|s| s.set(seed));
}

#[cfg(feature = "seeded-ids")]
fn seeded() -> Option<Uuid> {
    STREAM.with(|s| {
        let mut state = s.get()?;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let bits = (u128::from(next()) << 64) | u128::from(next());
        s.set(Some(state));
        Some(uuid::Builder::from_random_bytes(bits.to_le_bytes()).into_uuid())
    })
}

/// A fresh version-4 UUID.
pub fn new_uuid() -> Uuid {
    #[cfg(feature = "seeded-ids")]
    if let Some(id) = seeded() {
        return id;
    }
    Uuid::new_v4()
}

#[cfg(all(test, feature = "seeded-ids"))]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_thread_draws_the_same_ids_again() {
        seed_thread(Some(7));
        let a = (new_uuid(), new_uuid());
        seed_thread(Some(7));
        let b = (new_uuid(), new_uuid());
        seed_thread(None);
        assert_eq!(a, b);
        assert_ne!(a.0, a.1);
        assert_eq!(a.0.get_version_num(), 4);
        assert_ne!(new_uuid(), a.0);
    }
}
