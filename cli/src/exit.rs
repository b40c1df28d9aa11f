//! Running a command under the command-line contract: every failure is one line on stderr
//! with a non-zero exit status (an expression that does not parse adds its text with a
//! caret under the offending place); internal panics are caught and reported the same way.
//! Nothing here writes with `eprintln!`, which panics when stderr is closed.

use std::io::Write;
use std::process::ExitCode;

use alluvium::Error;
use alluvium::{MaintenanceError, MvccError};

use crate::STORAGE_OPTIONS_ENV;
use crate::report::is_broken_pipe;

/// Writes one line to stderr; a closed stderr is ignored (there is nowhere left to report).
pub fn error_line(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Runs `command` and turns its outcome into the exit status: its own status on success;
/// 1 with `error: <one line>` on stderr for an error (followed, for an expression syntax
/// error, by the text and a caret line; 1 and nothing for a closed stdout: the reader went
/// away); 101 with `error: internal error (please report): ...` for a panic.
/// First it applies the process's allocator settings (`allocator.rs`).
pub fn main_with(command: fn() -> alluvium::Result<ExitCode>) -> ExitCode {
    crate::allocator::tune();
    // One line, no backtrace: a panic is a bug, but the tool's contract is one error line.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        error_line(&format!(
            "error: internal error (please report): {}{at}",
            msg.replace('\n', " ")
        ));
    }));
    match std::panic::catch_unwind(command) {
        Ok(Ok(status)) => status,
        // The reader of our output went away: nothing more to say to anyone.
        Ok(Err(e)) if is_broken_pipe(&e) => ExitCode::from(1),
        Ok(Err(e)) => {
            error_line(&format!("error: {}", one_line(&e)));
            // An expression that does not parse: the text with a caret under the place,
            // as a database shell shows it.
            if let Some(pointer) = e.as_expr_error().and_then(alluvium::ExprError::pointer) {
                error_line(&pointer);
            }
            ExitCode::from(1)
        }
        Err(_) => ExitCode::from(101),
    }
}

/// An error as one line of text, with the command-line hint for errors a flag or an
/// environment variable can fix (the library's messages name neither).
pub(crate) fn one_line(e: &Error) -> String {
    let mut text = e.to_string().replace(['\n', '\r'], " ");
    if needs_single_writer_hint(e) {
        text.push_str(&format!(
            " (with the alluvium CLI: {STORAGE_OPTIONS_ENV}=single_writer=true)"
        ));
    }
    // The change feed names the version it starts at; the CLI names the flag.
    if let Error::ChangeDataNotRecorded {
        recorded_from: Some(v),
        ..
    } = e
    {
        text.push_str(&format!(" (use --from {v})"));
    }
    text
}

/// Whether `e` is a store lacking put-if-absent, whichever operation (a write, OPTIMIZE, a
/// checkpoint) met it: the one error single-writer mode fixes.
fn needs_single_writer_hint(e: &Error) -> bool {
    matches!(
        e,
        Error::Mvcc(MvccError::StorageCapabilityMissing { .. })
            | Error::Maintenance(MaintenanceError::Mvcc(
                MvccError::StorageCapabilityMissing { .. }
            ))
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn missing() -> MvccError {
        MvccError::StorageCapabilityMissing {
            capability: "put-if-absent",
            location: "s3://bucket/t".into(),
        }
    }

    #[test]
    fn a_missing_put_if_absent_gets_the_environment_variable_hint() {
        for e in [
            Error::Mvcc(missing()),
            Error::Maintenance(MaintenanceError::Mvcc(missing())),
        ] {
            let line = one_line(&e);
            assert!(
                line.ends_with(
                    " (with the alluvium CLI: ALLUVIUM_STORAGE_OPTIONS=single_writer=true)"
                ),
                "{line}"
            );
        }
    }

    #[test]
    fn other_errors_get_no_hint_and_lose_their_line_breaks() {
        let line = one_line(&Error::InvalidArgument("a\nb".into()));
        assert_eq!(line, "a b");
    }
}
