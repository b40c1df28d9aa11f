//! The domain-metadata configurations alluvium reads from a table's log: the clustering
//! columns (`delta.clustering`, three accepted forms) and the row-tracking high-water mark
//! (`delta.rowTracking`), on arbitrary text.
//!
//! Properties: neither parser panics; what parses is written back by the writer's own
//! domain action and reads back equal (clustering columns as physical paths, the mark as
//! the same long).
#![no_main]

use alluvium_txlog::{clustering, row_tracking};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(columns) = clustering::parse_domain(text) {
        assert!(columns.iter().all(|p| !p.is_empty()), "an empty path: {text}");
        let written = clustering::domain_action(&columns);
        match clustering::parse_domain(&written.configuration) {
            Ok(again) => assert_eq!(again, columns, "written as {}", written.configuration),
            Err(e) => panic!("our clustering domain does not parse: {e}: {}", written.configuration),
        }
    }
    if let Ok(mark) = row_tracking::parse_high_water_mark(text) {
        let written = row_tracking::domain(mark);
        match row_tracking::parse_high_water_mark(&written.configuration) {
            Ok(again) => assert_eq!(again, mark, "written as {}", written.configuration),
            Err(e) => panic!("our row-tracking domain does not parse: {e}: {}", written.configuration),
        }
    }
});
