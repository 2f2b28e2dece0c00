//! Crash tests: SIGKILL a child process at the moment a condition holds
//! (e.g. once a run's journal shows some progress), never before and never
//! after it ended on its own.

use std::process::Child;
use std::time::{Duration, Instant};

/// Poll `ready` every 2 ms and SIGKILL `child` (then reap it) as soon as it
/// holds. Panics if the child ends first (`what` says what it was doing) or
/// `ready` does not hold within `within`.
pub fn kill_when(child: &mut Child, ready: impl Fn() -> bool, within: Duration, what: &str) {
    let deadline = Instant::now() + within;
    while !ready() {
        if let Some(status) = child.try_wait().expect("poll the child") {
            panic!("{what} ended ({status}) before it could be killed");
        }
        assert!(Instant::now() < deadline, "{what}: the condition did not hold within {within:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
}
