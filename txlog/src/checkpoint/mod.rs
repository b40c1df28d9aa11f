//! Checkpoints (PROTOCOL.md "Checkpoints"): reading every checkpoint flavour, and the
//! `_last_checkpoint` hint.

mod columns;
mod last_checkpoint;
mod parsed_values;
mod reader;
mod thrift_check;

pub use last_checkpoint::{LastCheckpointHint, read_last_checkpoint};
pub use reader::{CheckpointFiles, read_checkpoint, read_parquet_actions};
