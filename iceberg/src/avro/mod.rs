//! A small Avro object-container codec for the fixed schemas Iceberg metadata uses
//! (manifests and manifest lists): Avro 1.11's binary encoding and container layout, with
//! the `null` codec.
//!
//! Why our own and not `apache-avro`: Iceberg's readers resolve manifest fields by the
//! `field-id`, `element-id` and `logicalType: map` attributes of the writer's schema, so the
//! schema text must be exactly what Iceberg's spec shows; here it is written verbatim. The
//! payload is a handful of types (records, nullable unions, arrays, ints, longs, strings,
//! bytes, booleans), and the whole file is a pure function of its content (the sync marker is
//! derived from it), which makes re-syncing a version byte-identical. The reader exists for
//! `verify --deep` and the tests, and is fuzzed (`fuzz/fuzz_targets/avro_container.rs`): it
//! must never panic or allocate without bound on any input.

mod decode;
mod encode;

pub use decode::{Container, Schema, read_container};
pub use encode::{Datum, write_container};

/// The four magic bytes that open every Avro object-container file.
pub(crate) const MAGIC: &[u8; 4] = b"Obj\x01";
