//! Acceptance 4 at the crate level: a module that loops, allocates without
//! limit, reads the clock, asks for randomness, timers, the network,
//! packages or dynamic imports gets a typed reducer failure within the
//! configured limit; the failed transition leaves the kernel exactly as it
//! was, and the same `ModuleGame` keeps serving other sessions.

mod support;

use std::time::{Duration, Instant};

use gaos_kernel::{DynReducer, KernelError, SessionKernel};
use support::{advance, json, kernel, load, submit, test_limits};

/// Submit `{"try": what}` and advance; the advance must fail with a
/// reducer error containing `expected`, leaving the kernel unchanged.
fn advance_fails(kernel: &mut SessionKernel<DynReducer>, what: &str, expected: &str) -> Duration {
    let id = format!("try-{what}-{}", kernel.cursor());
    submit(kernel, "solo", &id, &format!(r#"{{"try":"{what}"}}"#)).expect("the command is accepted");
    let (cursor, digest, view) = (kernel.cursor(), kernel.digest(), kernel.full_view().clone());
    let events = kernel.live_transcript().events.len();
    let started = Instant::now();
    let error = kernel.prepare_advance(None).expect_err("the advance must fail");
    let took = started.elapsed();
    assert!(matches!(error, KernelError::Reducer { .. }), "{what}: a reducer failure, got {error:?}");
    assert_eq!(error.code(), "reducer_failed");
    assert!(error.to_string().contains(expected), "{what}: {error}");
    assert!(error.to_string().contains("test/hostile"), "{what}: the message names the module: {error}");
    // Nothing of the failed transition is live or recorded.
    assert_eq!((kernel.cursor(), kernel.digest()), (cursor, digest), "{what}");
    assert_eq!(kernel.full_view(), &view, "{what}");
    assert_eq!(kernel.live_transcript().events.len(), events, "{what}");
    took
}

/// After a failure, a fresh session of the same module plays normally.
fn still_serves(game: &gaos_module::ModuleGame, session: &str) {
    let mut other = kernel(game, session);
    submit(&mut other, "solo", "ok-1", r#"{"try":"nothing"}"#).expect("submits");
    advance(&mut other).expect("a harmless advance still works");
    assert_eq!(other.full_view().get("steps"), Some(&json("1")));
}

#[test]
fn an_endless_loop_is_stopped_at_the_call_time_limit() {
    let game = load("hostile.mjs");
    let mut session = kernel(&game, "loop");
    let took =
        advance_fails(&mut session, "loop", "reducer.advance of test/hostile exceeded the 200 ms call time limit");
    let limit = test_limits().call_time_limit;
    assert!(took >= limit && took < limit * 5, "stopped after {took:?}");
    still_serves(&game, "after-loop");
    // The failed session's kernel is as it was: the same advance fails the
    // same way again (a host revokes such a session).
    let again = session.prepare_advance(None).unwrap_err();
    assert!(again.to_string().contains("exceeded the 200 ms call time limit"), "{again}");
}

#[test]
fn unbounded_allocation_is_stopped_at_the_memory_limit() {
    let game = load("hostile.mjs");
    let mut session = kernel(&game, "alloc");
    advance_fails(&mut session, "alloc", "exceeded the 16777216-byte memory limit");
    still_serves(&game, "after-alloc");
}

#[test]
fn clocks_randomness_timers_io_and_packages_throw_clearly() {
    let game = load("hostile.mjs");
    let mut session = kernel(&game, "sandbox");
    let cases = [
        ("dateNow", "Date.now is not available to game modules: games must be deterministic"),
        ("newDate", "Date is not available to game modules: games must be deterministic"),
        ("random", "Math.random is not available to game modules"),
        ("setTimeout", "setTimeout is not available to game modules: a game has no clock"),
        ("fetch", "fetch is not available to game modules: a game has no I/O and no network"),
        ("require", "require is not available to game modules: bundle dependencies"),
        ("importFs", "dynamic import is not available to game modules"),
        ("importLocal", "dynamic import is not available to game modules"),
        ("throwError", "advance(state, inputs) of test/hostile threw RangeError: the board is on fire"),
        ("throwString", "advance(state, inputs) of test/hostile threw plain string"),
        ("recurse", "RangeError"),
    ];
    for (what, expected) in cases {
        // Each failure leaves the window open with the intent collected, so
        // the next attempt needs a fresh session.
        let mut fresh = kernel(&game, &format!("sandbox-{what}"));
        advance_fails(&mut fresh, what, expected);
    }
    submit(&mut session, "solo", "fine", r#"{"try":"nothing"}"#).unwrap();
    advance(&mut session).unwrap();
}

#[test]
fn a_prepared_failure_can_be_followed_by_an_abort_free_retry() {
    // prepare failed, so there is nothing to commit or abort; the next
    // window of another session resolves normally on the same engines.
    let game = load("hostile.mjs");
    for i in 0..3 {
        let mut session = kernel(&game, &format!("retry-{i}"));
        advance_fails(&mut session, "loop", "exceeded the 200 ms call time limit");
    }
    still_serves(&game, "after-retries");
}

#[test]
fn a_mapper_that_loops_is_an_illegal_command_within_the_limit() {
    let game = load("hostile.mjs");
    let mut session = kernel(&game, "mapper");
    let started = Instant::now();
    let error = submit(&mut session, "solo", "m-1", r#"{"map":"loop"}"#).unwrap_err();
    assert!(started.elapsed() < test_limits().call_time_limit * 5);
    assert_eq!(error.code(), "illegal_command");
    assert!(
        error.to_string().contains("commandToAction of test/hostile exceeded the 200 ms call time limit"),
        "{error}"
    );
    assert_eq!(session.cursor(), 0);
    still_serves(&game, "after-mapper");
}
