//! The table operations, one file or folder each; each adds its methods to [`Table`]
//! beside the code that runs them.
//!
//! | operation | module |
//! |---|---|
//! | CREATE TABLE (also AS SELECT) | [`create`] |
//! | CREATE OR REPLACE TABLE | [`replace`] |
//! | append, overwrite, replaceWhere | [`write`] |
//! | files written elsewhere, committed at once | [`files`] |
//! | DELETE, UPDATE, MERGE | [`delete`], [`update`], [`merge`] |
//! | properties, features, column mapping | [`alter`] |
//! | the table's name and description | [`table_info`] |
//! | columns: add, rename, drop, widen, metadata | [`columns`] |
//! | CHECK constraints | [`constraints`] |
//! | clustering columns | [`cluster`] |
//! | checkpoint, log cleanup, OPTIMIZE, VACUUM | [`maintenance`] |
//! | one-commit transactions of the embedder | [`transaction`] |
//! | RESTORE | [`restore`] |
//! | FSCK: removing files the store lost | [`repair`] |
//! | CONVERT TO DELTA | [`convert`] |
//! | Iceberg metadata beside the log | [`iceberg`] |
//!
//! Operations build on `rows` (the row-change core) and `commit` (the tail every write
//! shares), never the other way round; one operation may use another's helpers in one
//! direction only (checked by `.ci/check_cycles.py`). This file holds no code, so that no
//! operation has to import its parent.
//!
//! [`Table`]: crate::Table

pub(crate) mod alter;
pub(crate) mod cluster;
pub(crate) mod columns;
pub(crate) mod constraints;
pub(crate) mod convert;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod files;
pub(crate) mod iceberg;
pub(crate) mod maintenance;
pub(crate) mod merge;
pub(crate) mod repair;
pub(crate) mod replace;
pub(crate) mod restore;
pub(crate) mod table_info;
pub(crate) mod transaction;
pub(crate) mod update;
pub(crate) mod write;
