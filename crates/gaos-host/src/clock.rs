//! The host clock: wall-clock milliseconds for lease deadlines, turn
//! deadlines and tick scheduling. Production uses the system clock; a test
//! host (`gaos serve --test-clock`) lets the operator move it forward so tests
//! can cross lease expiries without sleeping. The kernel never sees it.
//!
//! Time runs on a monotonic clock (spec/lease.md rule 10): the wall clock is
//! read once, when the host starts (the anchor), and every later reading is
//! that anchor plus the monotonic time elapsed since. A wall-clock step while
//! the host runs (an NTP correction, an operator's `date -s`) therefore moves
//! no lease expiry, turn deadline or tick; a restart reads the wall clock
//! again, so deadlines persisted as wall-clock milliseconds still count the
//! downtime. The price: readings drift from the system clock by however far
//! the wall clock was stepped since the start (timestamps in answers are host
//! time, not the machine's clock).

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Wall clock anchored at start, advanced monotonically, with an optional
/// test offset.
#[derive(Debug)]
pub struct HostClock {
    /// Wall-clock milliseconds since the Unix epoch at `anchor`.
    anchor_ms: i64,
    anchor: Instant,
    offset_ms: AtomicI64,
    adjustable: bool,
}

impl Default for HostClock {
    fn default() -> Self {
        Self::system()
    }
}

impl HostClock {
    /// The system clock (read once, then run monotonically).
    pub fn system() -> Self {
        Self::anchored(false)
    }

    /// A clock tests may advance (`POST /v1/admin/clock`).
    pub fn adjustable() -> Self {
        Self::anchored(true)
    }

    fn anchored(adjustable: bool) -> Self {
        Self::anchored_at(wall_ms(), adjustable)
    }

    /// A clock that reads `anchor_ms` now and runs on monotonically from
    /// there: a host of a cluster anchors it to the database's clock, so
    /// deadlines written by one host mean the same instant to the next
    /// whatever the machines' own clocks say.
    pub fn anchored_at(anchor_ms: i64, adjustable: bool) -> Self {
        HostClock { anchor_ms, anchor: Instant::now(), offset_ms: AtomicI64::new(0), adjustable }
    }

    pub fn is_adjustable(&self) -> bool {
        self.adjustable
    }

    /// Milliseconds since the Unix epoch: the start anchor plus the
    /// monotonic time since (plus the test offset).
    pub fn now_ms(&self) -> i64 {
        let elapsed = i64::try_from(self.anchor.elapsed().as_millis()).unwrap_or(i64::MAX);
        self.anchor_ms.saturating_add(elapsed).saturating_add(self.offset_ms.load(Ordering::Relaxed))
    }

    /// Move a test clock forward; refused on the system clock.
    pub fn advance(&self, ms: i64) -> Result<i64, String> {
        if !self.adjustable {
            return Err("this host runs on the system clock (start it with --test-clock to adjust it)".into());
        }
        if ms < 0 {
            return Err("the clock only moves forward".into());
        }
        self.offset_ms.fetch_add(ms, Ordering::Relaxed);
        Ok(self.now_ms())
    }
}

fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_starts_at_the_wall_clock_and_never_runs_backwards() {
        let clock = HostClock::system();
        let wall = wall_ms();
        let first = clock.now_ms();
        assert!((first - wall).abs() < 1_000, "anchored at the wall clock: {first} vs {wall}");
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(clock.now_ms() >= first + 5, "runs on with the monotonic clock");
    }

    #[test]
    fn only_a_test_clock_moves_and_only_forward() {
        let clock = HostClock::adjustable();
        let before = clock.now_ms();
        let after = clock.advance(60_000).expect("a test clock moves");
        assert!(after >= before + 60_000);
        assert!(clock.advance(-1).is_err());
        assert!(HostClock::system().advance(1).is_err());
    }
}
