//! The retry policy of the commit loop: exponential backoff with full jitter, bounded by a
//! time budget rather than an attempt count (a busy table must not make writers give up
//! after a fixed number of losses).

use std::time::Duration;

/// How the commit loop waits between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Upper bound of the first backoff.
    pub initial_backoff: Duration,
    /// Upper bound of any backoff.
    pub max_backoff: Duration,
    /// Total time the loop may spend before giving up with `RetryBudgetExhausted`.
    pub budget: Duration,
    /// Most attempts (the first included) before giving up with `RetryBudgetExhausted`,
    /// whatever time is left (deltalake's `max_commit_retries` + 1); `None`: time alone.
    pub max_attempts: Option<u32>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(16),
            budget: Duration::from_secs(300),
            max_attempts: None,
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1` after `attempt` losses: uniform in
    /// `[0, min(max, initial * 2^(attempt-1))]`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .initial_backoff
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
        let cap = exp.min(self.max_backoff);
        let nanos = u64::try_from(cap.as_nanos()).unwrap_or(u64::MAX);
        if nanos == 0 {
            return Duration::ZERO;
        }
        Duration::from_nanos(rand::random_range(0..=nanos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::default();
        for attempt in 1..40 {
            let cap = p
                .initial_backoff
                .saturating_mul(1 << (attempt - 1).min(20))
                .min(p.max_backoff);
            assert!(p.backoff(attempt) <= cap);
        }
    }
}
