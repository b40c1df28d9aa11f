//! Checkpoints (PROTOCOL.md "Checkpoints"): reading and writing every checkpoint flavour,
//! and the `_last_checkpoint` hint.

mod columns;
mod last_checkpoint;
mod layout;
mod parsed_values;
mod reader;
mod schema;
mod thrift_check;
mod writer;

pub use crate::file_set::KeyHasher;
pub use last_checkpoint::{
    LAST_CHECKPOINT_LIMIT, LastCheckpointHint, json_checksum, read_last_checkpoint,
    write_last_checkpoint,
};
pub use reader::{
    ActionSink, CheckpointFiles, read_checkpoint, read_parquet_actions, visit_checkpoint,
    visit_parquet_actions,
};
pub use writer::{BATCH_ROWS, CheckpointOptions, CheckpointOutput, write_checkpoint};
