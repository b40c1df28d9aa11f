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

/// The context of errors writing to stdout.
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
/// Only output errors qualify ([`Error::Io`], which the library uses for local files
/// outside the table; see [`output_error`]): a broken connection to a store stays an error.
pub fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == ErrorKind::BrokenPipe)
}

/// An error from writing output (`context`: what was being written). The format writers
/// wrap I/O errors in their own (arrow, parquet); a broken pipe among them is brought out
/// as [`Error::Io`] so that [`is_broken_pipe`] recognizes it.
pub fn output_error(e: Error, context: &str) -> Error {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(err) = next {
        let pipe = |io: &std::io::Error| io.kind() == ErrorKind::BrokenPipe;
        let broken = err.downcast_ref::<std::io::Error>().is_some_and(pipe)
            || matches!(
                err.downcast_ref::<parquet::errors::ParquetError>(),
                Some(parquet::errors::ParquetError::External(inner))
                    if inner.downcast_ref::<std::io::Error>().is_some_and(pipe)
            );
        if broken {
            return Error::Io {
                context: context.to_string(),
                source: ErrorKind::BrokenPipe.into(),
            };
        }
        next = err.source();
    }
    e
}
