//! Estimates of the memory a table state holds: what `alluvium-bench load` and `inspect
//! --json` report, and what SPEC.md §8 bounds per file.
//!
//! The estimate walks the state once and adds up, for every value, its inline size and the
//! heap blocks it owns, each block counted as a general-purpose allocator hands it out (the
//! requested capacity plus an 8-byte header, rounded up to 16 bytes, at least 32), and for
//! every hash table its buckets and control bytes. It is an estimate, not an allocator
//! query: it never counts less than the values need, and it leaves out the allocator's free
//! lists and what other snapshots share (a state derived by refresh shares its base with the
//! state it came from; each reports the whole).

use std::mem::size_of;

use serde::Serialize;

use crate::actions::{Add, DomainMetadata, Metadata, OptStringMap, Remove, SetTransaction};
use crate::dv::DeletionVectorDescriptor;

/// The heap a table state holds, by part, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MemoryUsage {
    /// The live files: their entries, the strings they own (paths, statistics, partition
    /// values, deletion-vector descriptors, tags) and the hash index over them.
    pub files: usize,
    /// The tombstones (removes still within retention), counted the same way.
    pub tombstones: usize,
    /// Everything else: protocol, metadata (schema string, configuration), application
    /// transactions and domain metadata.
    pub other: usize,
}

impl MemoryUsage {
    /// The sum of the parts.
    pub fn total(&self) -> usize {
        self.files
            .saturating_add(self.tombstones)
            .saturating_add(self.other)
    }
}

/// The bytes an allocator hands out for a block of `capacity` bytes (none for an empty
/// block, which Rust never allocates).
pub(crate) fn block(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    capacity
        .saturating_add(8)
        .div_ceil(16)
        .saturating_mul(16)
        .max(32)
}

/// The bytes of a hash table with room for `capacity` entries of `entry` bytes each:
/// buckets (a power of two, at most 7/8 full) times the entry and one control byte.
pub(crate) fn hash_table(capacity: usize, entry: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        if capacity < 4 { 4 } else { 8 }
    } else {
        capacity.saturating_mul(8).div_ceil(7).next_power_of_two()
    };
    block(
        buckets
            .saturating_mul(entry.saturating_add(1))
            .saturating_add(16),
    )
}

/// The sum of the heap of a value's parts (saturating).
fn sum(parts: &[usize]) -> usize {
    parts.iter().fold(0, |n, b| n.saturating_add(*b))
}

/// Heap owned by a value beyond its inline size.
pub(crate) trait HeapSize {
    /// Bytes of the heap blocks this value owns (not its own inline size).
    fn heap_bytes(&self) -> usize;
}

impl HeapSize for String {
    fn heap_bytes(&self) -> usize {
        block(self.capacity())
    }
}

impl<T: HeapSize> HeapSize for Option<T> {
    fn heap_bytes(&self) -> usize {
        self.as_ref().map_or(0, HeapSize::heap_bytes)
    }
}

impl<T: HeapSize> HeapSize for Box<T> {
    fn heap_bytes(&self) -> usize {
        block(size_of::<T>()).saturating_add(T::heap_bytes(self))
    }
}

impl<T: HeapSize> HeapSize for Vec<T> {
    fn heap_bytes(&self) -> usize {
        self.iter().fold(
            block(self.capacity().saturating_mul(size_of::<T>())),
            |n, v| n.saturating_add(v.heap_bytes()),
        )
    }
}

impl<A: HeapSize, B: HeapSize> HeapSize for (A, B) {
    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes().saturating_add(self.1.heap_bytes())
    }
}

impl HeapSize for OptStringMap {
    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

impl HeapSize for DeletionVectorDescriptor {
    fn heap_bytes(&self) -> usize {
        self.storage_type
            .heap_bytes()
            .saturating_add(self.path_or_inline_dv.heap_bytes())
    }
}

impl HeapSize for Add {
    fn heap_bytes(&self) -> usize {
        sum(&[
            self.path.heap_bytes(),
            self.partition_values.heap_bytes(),
            self.stats.heap_bytes(),
            self.tags.heap_bytes(),
            self.deletion_vector.heap_bytes(),
            self.clustering_provider.heap_bytes(),
        ])
    }
}

impl HeapSize for Remove {
    fn heap_bytes(&self) -> usize {
        sum(&[
            self.path.heap_bytes(),
            self.partition_values.heap_bytes(),
            self.stats.heap_bytes(),
            self.tags.heap_bytes(),
            self.deletion_vector.heap_bytes(),
        ])
    }
}

impl HeapSize for Metadata {
    fn heap_bytes(&self) -> usize {
        let config = self.configuration.iter().fold(
            hash_table(self.configuration.capacity(), size_of::<(String, String)>()),
            |n, (k, v)| {
                n.saturating_add(k.heap_bytes())
                    .saturating_add(v.heap_bytes())
            },
        );
        sum(&[
            self.id.heap_bytes(),
            self.name.heap_bytes(),
            self.description.heap_bytes(),
            self.schema_string.heap_bytes(),
            self.partition_columns.heap_bytes(),
            config,
        ])
    }
}

impl HeapSize for SetTransaction {
    fn heap_bytes(&self) -> usize {
        self.app_id.heap_bytes()
    }
}

impl HeapSize for DomainMetadata {
    fn heap_bytes(&self) -> usize {
        self.domain
            .heap_bytes()
            .saturating_add(self.configuration.heap_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_as_an_allocator_does() {
        assert_eq!(block(0), 0);
        assert_eq!(block(1), 32);
        assert_eq!(block(24), 32);
        assert_eq!(block(25), 48);
        assert_eq!(block(100), 112);
        assert_eq!(block(usize::MAX), usize::MAX, "saturates");
    }

    #[test]
    fn an_add_counts_every_string_it_owns() {
        let bare = Add::builder("p.parquet", 1, 0).build();
        let with_stats = Add::builder("p.parquet", 1, 0)
            .stats(r#"{"numRecords":100,"minValues":{"id":1},"maxValues":{"id":100}}"#)
            .build();
        let stats = with_stats.stats.as_ref().map_or(0, String::capacity);
        assert_eq!(bare.heap_bytes(), block(bare.path.capacity()));
        assert_eq!(
            with_stats.heap_bytes(),
            bare.heap_bytes() + block(stats),
            "the statistics string is counted"
        );
    }

    #[test]
    fn hash_tables_hold_a_power_of_two_of_buckets() {
        assert_eq!(hash_table(0, 8), 0);
        // 1,000 entries: 1,143 buckets needed at 7/8, so 2,048 of 9 bytes each.
        assert_eq!(hash_table(1000, 8), block(2048 * 9 + 16));
    }
}
