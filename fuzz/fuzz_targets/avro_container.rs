//! The Iceberg metadata's Avro object-container reader (`alluvium_iceberg::avro`) and the
//! manifest and manifest-list decoders over it, on arbitrary bytes.
//!
//! Properties: no input panics; a file that reads is written back (same schema text) to a
//! file that reads to the same records.
#![no_main]

use alluvium_iceberg::avro::{read_container, write_container};
use alluvium_iceberg::manifest::{read_manifest, read_manifest_list};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = read_manifest(data);
    let _ = read_manifest_list(data);
    if let Ok(c) = read_container(data) {
        let schema = c.meta("avro.schema").unwrap_or_default().to_string();
        let again = write_container(&schema, &[], &c.records);
        match read_container(&again) {
            Ok(d) => assert_eq!(d.records, c.records),
            Err(e) => panic!("a file we wrote from records we read does not read: {e}"),
        }
    }
});
