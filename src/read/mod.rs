//! Reading a table: scans of a snapshot ([`scan`]: projection, filters, data skipping,
//! streaming batches), the change data feed between two versions ([`changes`]), and the
//! sliding read-ahead that decodes files on the rayon pool ahead of their consumer
//! ([`read_ahead`]).
//!
//! It must not know how tables are written: nothing here imports `commit`, `rows` or `ops`
//! (checked by `.ci/check_cycles.py`).

pub mod changes;
pub(crate) mod read_ahead;
pub mod scan;
