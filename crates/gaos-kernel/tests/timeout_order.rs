//! The timeout check order (kernel spec §4.10 "Check order", issue 13
//! item 2): (1) argument types, (2) the tick, (3) the named participant,
//! (4) the forced input and the mapper, (5) the action's seat, (6) no
//! commitment fields, and only then (7) "the game is still playing". The
//! first failing check decides the error, so each test pairs a failure with
//! one of a later step to pin which comes first.

// `Prepared` is not `Debug`, so `expect_err` is not available.
#![allow(clippy::err_expect)]

use std::sync::Arc;

use gaos_json::{Value, obj, parse};
use gaos_kernel::{CommandSubmission, KernelError, SessionKernel, SubmittedAction, TimeoutInput};

mod support;
use support::{Rounds, rounds_kernel_options};

/// The game ends after one resolution.
const ROUNDS: u64 = 1;

fn kernel(with_mapper: bool) -> SessionKernel<Rounds> {
    let mut options = rounds_kernel_options("order", "tests/timeout-order", Rounds { ends_after: Some(ROUNDS) });
    options.command_to_action = Arc::new(|_, _| Ok(SubmittedAction::new("Action 1")));
    options.timeout_to_action =
        if with_mapper { Some(Arc::new(|_, _| Ok(SubmittedAction::new("Action 1")))) } else { None };
    SessionKernel::new(options).expect("valid options")
}

/// A kernel whose game has ended (one window-wide timeout resolved it).
fn ended(with_mapper: bool) -> SessionKernel<Rounds> {
    let mut k = kernel(with_mapper);
    let forced = json(r#"{"id":"Action 1"}"#);
    let p = k.prepare_timeout_value(&timeout(0, None), Some(&forced)).expect("the window times out");
    k.apply_now(p).expect("commits");
    assert!(k.is_terminal());
    k
}

fn json(text: &str) -> Value {
    parse(text).expect("test JSON")
}

fn timeout(tick: u64, participant: Option<&str>) -> Value {
    obj! {
        "timeoutId" => "t-1",
        "tick" => tick,
        "participantId" => participant.map_or(Value::Null, Value::from),
        "reason" => "elapsed",
    }
    .into()
}

fn with(mut timeout: Value, key: &str, value: Value) -> Value {
    timeout.as_object_mut().expect("an object").insert(key.into(), value);
    timeout
}

fn error(k: &SessionKernel<Rounds>, timeout: &Value, forced: Option<&str>) -> (&'static str, &'static str) {
    let forced = forced.map(json);
    match k.prepare_timeout_value(timeout, forced.as_ref()) {
        Ok(_) => panic!("the timeout {timeout:?} should be refused"),
        Err(e) => (e.kind(), e.code()),
    }
}

const TYPE: (&str, &str) = ("argument", "type");
const STALE: (&str, &str) = ("advance", "stale_target");
const CONFLICT: (&str, &str) = ("conflict", "conflict");
const TERMINAL: (&str, &str) = ("advance", "terminal");
const FORCED: Option<&str> = Some(r#"{"id":"Action 1"}"#);

// (1) argument types

#[test]
fn step1_a_timeout_that_is_not_an_object_is_a_type_error() {
    let k = kernel(false);
    for bad in ["null", "[]", "\"t\"", "0"] {
        assert_eq!(error(&k, &json(bad), FORCED), TYPE, "{bad}");
    }
}

#[test]
fn step1_empty_or_missing_timeout_id_and_reason_are_type_errors() {
    let k = kernel(false);
    for (key, value) in [("timeoutId", Value::from("")), ("reason", Value::from("")), ("timeoutId", Value::from(7))] {
        assert_eq!(error(&k, &with(timeout(0, Some("a")), key, value), FORCED), TYPE, "{key}");
    }
    let mut missing = timeout(0, Some("a"));
    missing.as_object_mut().unwrap().remove("reason");
    assert_eq!(error(&k, &missing, FORCED), TYPE);
}

#[test]
fn step1_an_empty_timeout_policy_ref_is_a_type_error() {
    let k = kernel(false);
    assert_eq!(error(&k, &with(timeout(0, Some("a")), "timeoutPolicyRef", "".into()), FORCED), TYPE);
    assert_eq!(error(&k, &with(timeout(0, Some("a")), "timeoutPolicyRef", Value::Null), FORCED), TYPE);
    assert_eq!(error(&k, &with(timeout(0, Some("a")), "timeoutPolicyRef", 1.into()), FORCED), TYPE);
}

#[test]
fn step1_types_come_before_the_tick() {
    let k = kernel(false);
    assert_eq!(error(&k, &with(timeout(5, Some("a")), "timeoutPolicyRef", "".into()), FORCED), TYPE);
}

// (2) the tick

#[test]
fn step2_a_tick_that_is_not_the_open_tick_is_stale_target() {
    let k = kernel(false);
    assert_eq!(error(&k, &timeout(1, Some("a")), FORCED), STALE);
}

#[test]
fn step2_a_tick_that_is_not_a_safe_integer_is_stale_target() {
    let k = kernel(false);
    for tick in
        [Value::from("0"), Value::Null, Value::Number(0.5), Value::Number(9007199254740994.0), Value::Number(-0.5)]
    {
        assert_eq!(error(&k, &with(timeout(0, Some("a")), "tick", tick.clone()), FORCED), STALE, "{tick:?}");
    }
    let mut missing = timeout(0, Some("a"));
    missing.as_object_mut().unwrap().remove("tick");
    assert_eq!(error(&k, &missing, FORCED), STALE);
}

#[test]
fn step2_the_tick_comes_before_the_participant() {
    let k = kernel(false);
    assert_eq!(error(&k, &timeout(3, Some("zed")), FORCED), STALE);
}

// (3) the named participant

#[test]
fn step3_an_undeclared_or_non_string_participant_is_conflict() {
    let k = kernel(false);
    assert_eq!(error(&k, &timeout(0, Some("zed")), FORCED), CONFLICT);
    assert_eq!(error(&k, &with(timeout(0, None), "participantId", 1.into()), FORCED), CONFLICT);
}

#[test]
fn step3_a_participant_who_submitted_is_conflict() {
    let mut k = kernel(false);
    let sub = CommandSubmission::new("order", 0, "a", "a-1", obj! {}.into());
    let p = k.prepare_ingest(&sub).expect("ingest");
    k.apply_now(p).expect("commits");
    assert_eq!(error(&k, &timeout(0, Some("a")), FORCED), CONFLICT);
}

#[test]
fn step3_the_participant_comes_before_the_forced_input() {
    let k = kernel(false);
    assert_eq!(error(&k, &timeout(0, Some("zed")), None), CONFLICT);
}

// (4) the forced input and the mapper

#[test]
fn step4_without_a_mapper_the_forced_input_must_be_an_object() {
    let k = kernel(false);
    assert_eq!(error(&k, &timeout(0, Some("a")), None), TYPE);
    for bad in ["null", "\"Action 1\"", "[]", "3"] {
        assert_eq!(error(&k, &timeout(0, Some("a")), Some(bad)), TYPE, "{bad}");
    }
}

#[test]
fn step4_with_a_mapper_a_forced_input_must_equal_the_mapping() {
    let k = kernel(true);
    assert_eq!(error(&k, &timeout(0, Some("a")), Some(r#"{"id":"Action 2"}"#)), CONFLICT);
    assert_eq!(error(&k, &timeout(0, Some("a")), Some("\"Action 1\"")), CONFLICT);
    // The mapper's action carries no seat; the kernel fills it in after the check.
    assert!(k.prepare_timeout_value(&timeout(0, Some("a")), FORCED.map(json).as_ref()).is_ok());
    assert!(k.prepare_timeout_value(&timeout(0, Some("a")), None).is_ok());
}

#[test]
fn step4_the_forced_input_comes_before_its_seat() {
    let k = kernel(false);
    assert_eq!(error(&k, &timeout(0, None), Some("[]")), TYPE);
}

// (5) the action's seat

#[test]
fn step5_a_forced_input_with_seat_null_is_conflict() {
    let k = kernel(false);
    let seat_null = Some(r#"{"id":"Action 1","seat":null}"#);
    assert_eq!(error(&k, &timeout(0, Some("a")), seat_null), CONFLICT);
    assert_eq!(error(&k, &timeout(0, None), seat_null), CONFLICT);
}

#[test]
fn step5_the_seat_must_be_the_named_participant() {
    let k = kernel(false);
    assert_eq!(error(&k, &timeout(0, Some("a")), Some(r#"{"id":"Action 1","seat":"b"}"#)), CONFLICT);
    assert_eq!(error(&k, &timeout(0, Some("a")), Some(r#"{"id":"Action 1","seat":"zed"}"#)), CONFLICT);
    assert_eq!(error(&k, &timeout(0, None), Some(r#"{"id":"Action 1","seat":"a"}"#)), CONFLICT);
    assert_eq!(error(&k, &timeout(0, Some("a")), Some(r#"{"id":"Action 1","seat":1}"#)), CONFLICT);
    assert!(k.prepare_timeout_value(&timeout(0, Some("a")), Some(&json(r#"{"id":"Action 1","seat":"a"}"#))).is_ok());
}

// (6) commitment fields

#[test]
fn step6_commit_reveal_or_verified_payload_is_conflict() {
    let k = kernel(false);
    for key in ["commit", "reveal", "verifiedPayload"] {
        let forced = format!(r#"{{"id":"Action 1","{key}":null}}"#);
        assert_eq!(error(&k, &timeout(0, Some("a")), Some(&forced)), CONFLICT, "{key}");
    }
}

// (7) only then: terminal

#[test]
fn step7_after_the_end_a_wrong_tick_is_stale_target_not_terminal() {
    let k = ended(false);
    assert_eq!(k.tick(), 1);
    assert_eq!(error(&k, &timeout(0, Some("a")), FORCED), STALE);
    assert_eq!(error(&k, &with(timeout(1, Some("a")), "tick", "1".into()), FORCED), STALE);
}

#[test]
fn step7_after_the_end_an_ineligible_seat_is_conflict_not_terminal() {
    let k = ended(false);
    assert_eq!(error(&k, &timeout(1, Some("zed")), FORCED), CONFLICT);
    assert_eq!(error(&k, &timeout(1, Some("a")), Some(r#"{"id":"Action 1","seat":"b"}"#)), CONFLICT);
}

#[test]
fn step7_after_the_end_a_forced_input_with_seat_null_is_conflict_not_terminal() {
    let k = ended(false);
    assert_eq!(error(&k, &timeout(1, None), Some(r#"{"id":"Action 1","seat":null}"#)), CONFLICT);
}

#[test]
fn step7_after_the_end_type_errors_still_come_first() {
    let k = ended(false);
    assert_eq!(error(&k, &timeout(1, Some("a")), None), TYPE);
    assert_eq!(error(&k, &with(timeout(1, Some("a")), "timeoutPolicyRef", "".into()), FORCED), TYPE);
    let k = ended(true);
    assert_eq!(error(&k, &timeout(1, Some("a")), Some(r#"{"id":"Action 9"}"#)), CONFLICT);
}

#[test]
fn step7_after_the_end_a_valid_timeout_is_terminal() {
    assert_eq!(error(&ended(false), &timeout(1, Some("a")), FORCED), TERMINAL);
    assert_eq!(error(&ended(true), &timeout(1, None), None), TERMINAL);
}

#[test]
fn typed_prepare_timeout_follows_the_same_order() {
    let k = ended(false);
    let forced = SubmittedAction::new("Action 1");
    let stale = TimeoutInput::new("t-1", 0, Some("a"), "elapsed");
    let e: KernelError = k.prepare_timeout(&stale, Some(&forced)).err().expect("refused");
    assert_eq!((e.kind(), e.code()), STALE);
    let mut empty_ref = TimeoutInput::new("t-1", 1, Some("a"), "elapsed");
    empty_ref.timeout_policy_ref = Some(String::new());
    let e = k.prepare_timeout(&empty_ref, Some(&forced)).err().expect("refused");
    assert_eq!((e.kind(), e.code()), TYPE);
    let valid = TimeoutInput::new("t-1", 1, Some("a"), "elapsed");
    let e = k.prepare_timeout(&valid, Some(&forced)).err().expect("refused");
    assert_eq!((e.kind(), e.code()), TERMINAL);
}

#[test]
fn a_valid_timeout_fills_in_the_seat_and_records_the_input_as_given() {
    let mut k = kernel(false);
    let p = k
        .prepare_timeout_value(
            &with(timeout(0, Some("b")), "timeoutPolicyRef", "product".into()),
            Some(&json(r#"{"id":"Action 1","index":2}"#)),
        )
        .expect("the seat timed out");
    let events: Vec<Value> = p.events().iter().map(|e| e.to_value()).collect();
    assert_eq!(events[0].get("kind"), Some(&Value::from("timeout")));
    assert_eq!(events[0].get("timeoutPolicyRef"), Some(&Value::from("product")));
    assert_eq!(
        gaos_json::canonical_json(events[1].get("systemInput").expect("a system input")),
        r#"{"action":{"id":"Action 1","index":2,"seat":"b"},"participantId":"b","submissionId":null}"#
    );
    k.apply_now(p).expect("commits");
}
