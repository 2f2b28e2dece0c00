//! Surviving a lasting transport loss (issue 18 item 3): when the host
//! cannot be reached (a restart, a network drop), [`crate::run_session`]
//! waits with bounded exponential backoff, re-attaches at the durable head
//! (observes the seat again) and goes on with the same run. A submission
//! whose answer was lost is resent with the same submission id, byte for
//! byte, so the host answers it idempotently and the window never sees a
//! second command from this seat.

use std::time::Duration;

use crate::error::SessionError;

/// How long [`crate::run_session`] keeps trying to reach a host that stopped
/// answering before it gives up with [`crate::RunError::Unreachable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReconnectPolicy {
    /// Re-attach attempts before giving up (0: fail at the first loss).
    pub max_attempts: u32,
    /// The pause before the first attempt (doubles per attempt).
    pub first_delay: Duration,
    /// The longest pause between attempts.
    pub max_delay: Duration,
}

impl Default for ReconnectPolicy {
    /// 12 attempts, 100 ms doubling to 5 s: about 40 s of outage, enough for
    /// a host restart, short enough that a host that is gone fails the run.
    fn default() -> Self {
        ReconnectPolicy { max_attempts: 12, first_delay: Duration::from_millis(100), max_delay: Duration::from_secs(5) }
    }
}

impl ReconnectPolicy {
    /// Fail at the first transport loss (no reconnect).
    pub fn never() -> Self {
        ReconnectPolicy { max_attempts: 0, ..ReconnectPolicy::default() }
    }

    /// The pause before attempt `attempt` (from 1).
    pub fn delay(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(16);
        self.first_delay.saturating_mul(1u32 << doublings).min(self.max_delay)
    }
}

/// One re-attach attempt about to be made ([`crate::RunEvents::on_reconnecting`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconnecting {
    /// The attempt (from 1).
    pub attempt: u32,
    /// The pause before it.
    pub delay: Duration,
    /// Why the previous call failed.
    pub error: SessionError,
}

/// The run re-attached after a transport loss ([`crate::RunEvents::on_reattached`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reattached {
    /// Attempts it took (from 1).
    pub attempts: u32,
    /// The durable head's revision the run goes on from.
    pub revision: u64,
    /// The submission whose answer was lost and that is resent with its
    /// id, if the loss interrupted one.
    pub resending: Option<String>,
}
