//! Where the runner's wall-clock measurements get their time
//! ([`crate::RunOutcome::wall_clock`], a benchmark episode's `wallClockMs`).
//!
//! A [`Clock`] hands out [`Stopwatch`]es: each measurement reads its own
//! stopwatch, so a simulated clock can give every measurement a
//! deterministic value even when episodes run concurrently (a shared
//! "advance on every read" counter would depend on how the workers
//! interleave). The default is the process's monotonic clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Starts stopwatches. Shared by every run of a benchmark (`Send + Sync`).
pub trait Clock: Send + Sync {
    /// A stopwatch started now.
    fn stopwatch(&self) -> Box<dyn Stopwatch>;
}

/// One measurement in progress.
pub trait Stopwatch: Send {
    /// Time since the stopwatch started (never decreasing between reads).
    fn elapsed(&mut self) -> Duration;
}

/// The process's monotonic clock ([`Instant`]): what real runs measure with.
#[derive(Debug, Clone, Copy, Default)]
pub struct MonotonicClock;

struct InstantStopwatch(Instant);

impl Stopwatch for InstantStopwatch {
    fn elapsed(&mut self) -> Duration {
        self.0.elapsed()
    }
}

impl Clock for MonotonicClock {
    fn stopwatch(&self) -> Box<dyn Stopwatch> {
        Box::new(InstantStopwatch(Instant::now()))
    }
}

/// A simulated clock on which every stopwatch reading is `step` later than
/// the stopwatch's previous reading (the first reading: `step`). A run
/// reads its stopwatch once, so each measured run takes exactly `step`,
/// whatever the scheduling: two runs of the same benchmark then pack
/// byte-identical bundles (`gaos bench run --test-clock-ms`).
#[derive(Debug, Clone, Copy)]
pub struct SteppingClock {
    step: Duration,
}

impl SteppingClock {
    /// A clock whose every reading advances by `step`.
    pub fn new(step: Duration) -> Self {
        SteppingClock { step }
    }
}

struct SteppingStopwatch {
    step: Duration,
    now: Duration,
}

impl Stopwatch for SteppingStopwatch {
    fn elapsed(&mut self) -> Duration {
        self.now = self.now.saturating_add(self.step);
        self.now
    }
}

impl Clock for SteppingClock {
    fn stopwatch(&self) -> Box<dyn Stopwatch> {
        Box::new(SteppingStopwatch { step: self.step, now: Duration::ZERO })
    }
}

/// A simulated clock that moves only when told ([`ManualClock::advance`]);
/// clones share one time. Tests advance it from a driver to give each
/// decision a known duration.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock at time zero.
    pub fn new() -> Self {
        ManualClock::default()
    }

    /// Move the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        let _ = self.nanos.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| Some(now.saturating_add(nanos)));
    }

    /// The clock's time since it was created.
    pub fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }
}

struct ManualStopwatch {
    clock: ManualClock,
    start: Duration,
}

impl Stopwatch for ManualStopwatch {
    fn elapsed(&mut self) -> Duration {
        self.clock.now().saturating_sub(self.start)
    }
}

impl Clock for ManualClock {
    fn stopwatch(&self) -> Box<dyn Stopwatch> {
        Box::new(ManualStopwatch { clock: self.clone(), start: self.now() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_clocks_read_exactly_what_they_were_told() {
        let stepping = SteppingClock::new(Duration::from_millis(7));
        let (mut a, mut b) = (stepping.stopwatch(), stepping.stopwatch());
        assert_eq!(a.elapsed(), Duration::from_millis(7));
        assert_eq!(b.elapsed(), Duration::from_millis(7), "stopwatches do not share readings");
        assert_eq!(a.elapsed(), Duration::from_millis(14));

        let manual = ManualClock::new();
        manual.advance(Duration::from_millis(5));
        let mut watch = manual.stopwatch();
        assert_eq!(watch.elapsed(), Duration::ZERO, "measures from when it started");
        manual.clone().advance(Duration::from_millis(12));
        assert_eq!(watch.elapsed(), Duration::from_millis(12));

        let mut real = MonotonicClock.stopwatch();
        let first = real.elapsed();
        assert!(real.elapsed() >= first);
    }
}
