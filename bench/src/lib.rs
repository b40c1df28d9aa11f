//! Benchmark scaffolding for alluvium, kept out of the product: the synthetic-log generator
//! ([`synthetic`]) used by the `alluvium-bench` binary and by the criterion benchmarks of
//! the `alluvium` package.
//!
//! This package may know anything public about the library and the CLI's plumbing; nothing
//! in the library or the `alluvium` binary may depend on it.
#![deny(missing_docs)]

pub mod synthetic;
