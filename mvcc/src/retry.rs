//! The retry policy of the commit loop: exponential backoff with full jitter, bounded by a
//! time budget rather than an attempt count (a busy table must not make writers give up
//! after a fixed number of losses).

use std::time::Duration;

/// How the commit loop waits between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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

/// Builder-style setters: the struct is `#[non_exhaustive]`, so outside this crate it is
/// built from its `Default` with these.
impl RetryPolicy {
    /// Sets [`initial_backoff`](Self::initial_backoff).
    #[must_use]
    pub fn with_initial_backoff(mut self, initial_backoff: Duration) -> Self {
        self.initial_backoff = initial_backoff;
        self
    }

    /// Sets [`max_backoff`](Self::max_backoff).
    #[must_use]
    pub fn with_max_backoff(mut self, max_backoff: Duration) -> Self {
        self.max_backoff = max_backoff;
        self
    }

    /// Sets [`budget`](Self::budget).
    #[must_use]
    pub fn with_budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Sets [`max_attempts`](Self::max_attempts) (a value, or an `Option`).
    #[must_use]
    pub fn with_max_attempts(mut self, max_attempts: impl Into<Option<u32>>) -> Self {
        self.max_attempts = max_attempts.into();
        self
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
