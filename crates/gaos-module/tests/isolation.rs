//! Issue 26 at the crate level: what one session's calls leave in the
//! engine never reaches another session (items 3), a value read out of the
//! engine is bounded however much the engine shares (item 1), and a mapped
//! action must be `Action N` (item 9). The same attacks through the real
//! host are in gaos-cli's `module_hardening.rs`.

mod support;

use std::time::{Duration, Instant};

use gaos_json::Value;
use gaos_kernel::KernelError;
use gaos_module::{ModuleGame, ModuleLimits};
use support::{advance, fixture, json, kernel, load, submit};

fn field<'a>(view: &'a Value, key: &str) -> &'a Value {
    view.get(key).unwrap_or_else(|| panic!("{key} in {view}"))
}

#[test]
fn module_level_variables_and_the_global_object_stay_with_their_session() {
    let game = load("leaky.mjs");
    let first = kernel(&game, "first");
    assert_eq!(field(first.full_view(), "seedBefore"), &Value::Null);
    let second = kernel(&game, "second");
    let view = second.full_view();
    assert_eq!(field(view, "seedBefore"), &Value::Null, "the first session's seed stayed in its instance: {view}");
    assert_eq!(field(view, "globalSeed"), &Value::Null, "globalThis is frozen: {view}");
}

#[test]
fn prototype_pollution_fails_the_polluting_call_and_reaches_no_one_else() {
    let game = load("leaky.mjs");
    let mut attacker = kernel(&game, "attacker");
    submit(&mut attacker, "solo", "pollute", r#"{"prefs":{"__proto__":{"trusted":true}}}"#).expect("accepted");
    let error = attacker.prepare_advance(None).expect_err("the merge into Object.prototype throws");
    assert!(matches!(error, KernelError::Reducer { .. }), "{error:?}");
    assert!(error.to_string().contains("test/leaky"), "{error}");
    let mut other = kernel(&game, "other");
    submit(&mut other, "solo", "step", r#"{"prefs":{"colour":"red"}}"#).expect("accepted");
    advance(&mut other).expect("an honest session plays on");
    assert_eq!(field(other.full_view(), "trusted"), &Value::Null);
}

#[test]
fn a_view_sharing_one_array_under_many_keys_is_refused_at_the_value_limit() {
    let limits = ModuleLimits { call_time_limit: Duration::from_secs(10), ..ModuleLimits::default() };
    let game = ModuleGame::load(&fixture("leaky.mjs"), &limits).expect("loads");
    let mut session = kernel(&game, "bloat");
    // 150 keys x 60,000 numbers: ~18 MB read out of ~0.5 MB in the engine.
    submit(&mut session, "solo", "bloat", r#"{"bloat":150}"#).expect("accepted");
    let started = Instant::now();
    let error = session.prepare_advance(None).expect_err("over the value limit");
    assert!(started.elapsed() < Duration::from_secs(5), "refused while reading, took {:?}", started.elapsed());
    let text = error.to_string();
    assert!(matches!(error, KernelError::Reducer { .. }), "{error:?}");
    for part in ["reducer.advance", "test/leaky", "view(state)", "4194304-byte value limit", "--module-max-value-bytes"]
    {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    // A smaller view of the same shape fits.
    let mut small = kernel(&game, "small");
    submit(&mut small, "solo", "two", r#"{"bloat":2}"#).expect("accepted");
    advance(&mut small).expect("two keys are 240 KB");
}

#[test]
fn reading_a_value_out_of_the_engine_stops_at_the_call_deadline() {
    // No value limit at all: only the deadline, looked at during the read
    // (the walk runs no JavaScript, so the interrupt handler cannot stop it).
    let limits = ModuleLimits {
        call_time_limit: Duration::from_millis(100),
        max_value_bytes: usize::MAX,
        ..ModuleLimits::default()
    };
    let game = ModuleGame::load(&fixture("leaky.mjs"), &limits).expect("loads");
    let mut session = kernel(&game, "slow");
    submit(&mut session, "solo", "bloat", r#"{"bloat":150}"#).expect("accepted");
    let started = Instant::now();
    let error = session.prepare_advance(None).expect_err("past the deadline");
    assert!(started.elapsed() < Duration::from_secs(2), "stopped at the deadline, took {:?}", started.elapsed());
    assert!(error.to_string().contains("exceeded the 100 ms call time limit"), "{error}");
}

#[test]
fn the_value_limit_is_configurable() {
    let limits = ModuleLimits { max_value_bytes: 1024, ..ModuleLimits::default() };
    let game = ModuleGame::load(&fixture("leaky.mjs"), &limits).expect("loads");
    let mut session = kernel(&game, "tight");
    submit(&mut session, "solo", "one", r#"{"bloat":1}"#).expect("accepted");
    let error = session.prepare_advance(None).expect_err("one array is over 1 KiB");
    assert!(error.to_string().contains("1024-byte value limit"), "{error}");
}

#[test]
fn a_mapped_action_that_is_not_action_n_is_refused_at_the_act() {
    let game = load("leaky.mjs");
    let mut session = kernel(&game, "named");
    let error = submit(&mut session, "solo", "named", r#"{"named":true}"#).expect_err("refused at ingest");
    assert_eq!(error.code(), "illegal_command", "{error}");
    let text = error.to_string();
    for part in ["commandToAction", "test/leaky", "\"move-left\"", "Action N"] {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    submit(&mut session, "solo", "fine", r#"{}"#).expect("a legal id is accepted");
    advance(&mut session).expect("and plays");
    assert_eq!(field(session.full_view(), "steps"), &json("1"));
}
