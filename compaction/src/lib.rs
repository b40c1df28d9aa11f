//! Table maintenance for alluvium: the checkpoint policy, OPTIMIZE (bin-packing and
//! Z-order), VACUUM and log cleanup.
//!
//! Maintenance is planned here and committed through `alluvium-mvcc` transactions; this crate
//! never writes a commit file itself. It is empty until the maintenance issues land.
