//! `alluvium._native`: the extension module under the Python package `alluvium`.
//!
//! It owns the crossing between Python and the engine, and nothing of the engine itself:
//! it is built on the `alluvium` crate's public API only (no lower crate, no
//! `internal-api`), so it can do nothing an embedder cannot.
//!
//! * [`arrow_io`]: Arrow data in and out through the Arrow PyCapsule interface (no pyarrow
//!   needed): any `__arrow_c_stream__` / `__arrow_c_array__` exporter, or an iterable of
//!   them, is read as a stream; scans and change feeds leave as an [`arrow_io::ArrowStream`].
//! * [`blocking`]: every call that touches storage or decodes data runs with the GIL
//!   released; on the main thread it watches for Ctrl-C and stops the operation between
//!   files or batches.
//! * [`errors`]: `alluvium::Error` to the typed exceptions of `alluvium.exceptions`.
//! * [`table`], [`write`], [`merge`], [`state`], [`files`]: the operations, in the shapes the pure
//!   Python layer (`alluvium/*.py`, which carries deltalake's signatures and the docs)
//!   calls.
//! * [`values`]: Python values to expression literals and JSON, and back.
//!
//! It must not know deltalake's argument conventions (those live in the Python layer) nor
//! anything below the facade.
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod arrow_io;
mod blocking;
mod errors;
mod files;
mod merge;
mod state;
mod table;
mod values;
mod write;

use pyo3::prelude::*;

/// The extension's Rust allocations (see `Cargo.toml`): arrays handed to Python through the
/// Arrow C interfaces are freed by their release callbacks, which run this module's code,
/// so they return to the same allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The module `alluvium._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    blocking::remember_main_thread(m.py())?;
    m.add_class::<arrow_io::ArrowStream>()?;
    m.add_class::<arrow_io::ArrowSchema>()?;
    m.add_class::<table::RawTable>()?;
    m.add_class::<state::RawStateStore>()?;
    m.add_function(wrap_pyfunction!(write::write_table, m)?)?;
    m.add_function(wrap_pyfunction!(write::create_table, m)?)?;
    m.add_function(wrap_pyfunction!(table::is_table, m)?)?;
    m.add_function(wrap_pyfunction!(table::open_table, m)?)?;
    m.add_function(wrap_pyfunction!(merge::merge_table, m)?)?;
    m.add_function(wrap_pyfunction!(files::write_data_files, m)?)?;
    m.add_function(wrap_pyfunction!(files::commit_files, m)?)?;
    m.add_function(wrap_pyfunction!(files::discard_files, m)?)?;
    m.add_function(wrap_pyfunction!(arrow_io::delta_schema_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ENGINE", alluvium::ENGINE)?;
    Ok(())
}
