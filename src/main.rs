//! The `alluvium` command-line tool. Every failure prints one line on stderr and exits
//! non-zero; internal panics are caught and reported the same way.

mod cli;

use std::process::ExitCode;

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
        eprintln!(
            "error: internal error (please report): {}{at}",
            msg.replace('\n', " ")
        );
    }));
    match std::panic::catch_unwind(cli::run) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("error: {}", cli::one_line(&e));
            ExitCode::from(1)
        }
        Err(_) => ExitCode::from(101),
    }
}
