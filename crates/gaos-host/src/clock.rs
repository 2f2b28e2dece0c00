//! The host clock: wall-clock milliseconds for lease deadlines, turn
//! deadlines and tick scheduling. Production uses the system clock; a test
//! host (`gaos serve --test-clock`) lets the operator move it forward so tests
//! can cross lease expiries without sleeping. The kernel never sees it.

use std::sync::atomic::{AtomicI64, Ordering};

/// Wall clock with an optional test offset.
#[derive(Debug, Default)]
pub struct HostClock {
    offset_ms: AtomicI64,
    adjustable: bool,
}

impl HostClock {
    /// The system clock.
    pub fn system() -> Self {
        HostClock { offset_ms: AtomicI64::new(0), adjustable: false }
    }

    /// A clock tests may advance (`POST /v1/admin/clock`).
    pub fn adjustable() -> Self {
        HostClock { offset_ms: AtomicI64::new(0), adjustable: true }
    }

    pub fn is_adjustable(&self) -> bool {
        self.adjustable
    }

    /// Milliseconds since the Unix epoch (plus the test offset).
    pub fn now_ms(&self) -> i64 {
        system_ms() + self.offset_ms.load(Ordering::Relaxed)
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

fn system_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}
