//! The `alluvium` command-line tool. Every failure prints one line on stderr and exits
//! non-zero; internal panics are caught and reported the same way. Nothing here writes with
//! `eprintln!`, which panics when stderr is closed.

mod cli;

use std::io::Write;
use std::process::ExitCode;

/// Writes one line to stderr; a closed stderr is ignored (there is nowhere left to report).
fn error_line(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn main() -> ExitCode {
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
    match std::panic::catch_unwind(cli::run) {
        Ok(Ok(status)) => status,
        // The reader of our output went away: nothing more to say to anyone.
        Ok(Err(e)) if cli::report::is_broken_pipe(&e) => ExitCode::from(1),
        Ok(Err(e)) => {
            error_line(&format!("error: {}", cli::one_line(&e)));
            ExitCode::from(1)
        }
        Err(_) => ExitCode::from(101),
    }
}
