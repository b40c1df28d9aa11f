//! Printing to stdout without ever panicking (`println!` panics when stdout is closed) and
//! with the exit status telling the truth about what the command did.
//!
//! * For a command whose output is its result (a read, a benchmark, the demo), a failed
//!   write to stdout fails the command: [`print_line`] returns the error (the `outln!`
//!   macro propagates it); a broken pipe then ends the command quietly with a non-zero
//!   status (see `main`).
//! * For a command whose write has already landed (a commit, a checkpoint, deleted files),
//!   the report is only news of it: [`print_after_write`] prints it, and if stdout fails
//!   says so on stderr but lets the command succeed. Exiting non-zero would tell a script
//!   the write failed, and a script that retries would apply it twice.

use std::io::{ErrorKind, Write};

use alluvium::{Error, Result};

/// The context of stdout errors (also how `main` recognizes them).
pub const STDOUT: &str = "stdout";

fn stdout_error(e: std::io::Error) -> Error {
    Error::Io {
        context: STDOUT.into(),
        source: e,
    }
}

/// Writes one line to stdout.
///
/// # Errors
/// [`Error::Io`] with context [`STDOUT`] if stdout is closed or fails.
pub fn print_line(args: std::fmt::Arguments<'_>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Writes the report of a write that has landed. A failure is reported on stderr (if that
/// is still open) and otherwise ignored: the write happened.
pub fn print_after_write(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        let _ = writeln!(
            std::io::stderr(),
            "warning: the operation completed, but its report could not be printed ({e})"
        );
    }
}

/// Whether `e` is a write to a pipe whose reader went away (`alluvium scan t | head`): the
/// command ends with a non-zero status but without an error message, like other Unix tools.
pub fn is_broken_pipe(e: &Error) -> bool {
    // The writers of the output formats wrap the I/O error in their own (arrow, parquet):
    // look through the chain of sources.
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io.kind() == ErrorKind::BrokenPipe
        {
            return true;
        }
        if let Some(parquet::errors::ParquetError::External(inner)) =
            err.downcast_ref::<parquet::errors::ParquetError>()
            && inner
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == ErrorKind::BrokenPipe)
        {
            return true;
        }
        next = err.source();
    }
    false
}
