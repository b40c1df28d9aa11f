//! The instant `current_date` and `current_timestamp` stand for. A command fixes it once
//! ([`at_statement_time`]) so that every expression it binds (UPDATE's predicate and
//! assignments, MERGE's clauses) and every row it reads see the same value; binding
//! outside such a scope takes the clock once per bound expression.

use std::cell::Cell;

thread_local! {
    static STATEMENT_TIME: Cell<Option<i64>> = const { Cell::new(None) };
}

/// Puts the previous statement time back when the scope ends, panics included.
struct Restore(Option<i64>);

impl Drop for Restore {
    fn drop(&mut self) {
        STATEMENT_TIME.set(self.0);
    }
}

/// Runs `f` with `current_date` and `current_timestamp` fixed at `micros` (microseconds
/// since the epoch, UTC) for every expression bound on this thread inside it. Inside an
/// enclosing scope the outer instant stays: one command, one instant.
pub fn at_statement_time<T>(micros: i64, f: impl FnOnce() -> T) -> T {
    let previous = STATEMENT_TIME.get();
    let _restore = Restore(previous);
    STATEMENT_TIME.set(Some(previous.unwrap_or(micros)));
    f()
}

/// The statement's instant, or the clock's when no statement fixed one.
pub(crate) fn now_micros() -> i64 {
    STATEMENT_TIME
        .get()
        .unwrap_or_else(|| chrono::Utc::now().timestamp_micros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outermost_statement_fixes_the_instant() {
        let inner = at_statement_time(5, || (now_micros(), at_statement_time(9, now_micros)));
        assert_eq!(inner, (5, 5));
        assert_ne!(now_micros(), 5);
        let caught = std::panic::catch_unwind(|| at_statement_time(7, || panic!("boom")));
        assert!(caught.is_err());
        assert_ne!(now_micros(), 7);
    }
}
