//! Progress on a terminal for the long commands (OPTIMIZE, VACUUM, appends of large inputs,
//! DELETE / UPDATE / MERGE over many files, checkpoints, deep verification). Everything goes
//! to stderr through indicatif, which draws nothing when stderr is not a terminal: piped or
//! redirected, a command prints only its result.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// How often a bar or spinner redraws by itself (so the elapsed time moves while the work
/// gives no news).
const TICK: Duration = Duration::from_millis(200);

/// Inputs smaller than this are written without a progress bar: they take no time to see.
pub const LARGE_INPUT: u64 = 8 * 1024 * 1024;

/// A bar over `len` bytes, labelled `what`.
pub fn bytes_bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(&format!(
        "{what} {{bar:40}} {{bytes}}/{{total_bytes}} {{elapsed}}"
    )) {
        pb.set_style(style);
    }
    pb.enable_steady_tick(TICK);
    pb
}

/// A spinner with a message and the elapsed time, for work whose size is not known ahead.
pub fn spinner(message: impl Into<String>) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        pb.set_style(style);
    }
    pb.set_message(message.into());
    pb.enable_steady_tick(TICK);
    pb
}

/// Runs `work` under a spinner showing `message` (cleared when it returns).
pub fn with_spinner<T>(message: impl Into<String>, work: impl FnOnce() -> T) -> T {
    let pb = spinner(message);
    let out = work();
    pb.finish_and_clear();
    out
}
