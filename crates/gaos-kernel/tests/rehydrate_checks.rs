//! Rehydration re-checks what it replays (issue 13 item 4, ARCHITECTURE.md
//! invariant 5) on a tiny commit–reveal reducer: a resolution's recorded
//! inputs must be the frozen actions of the intents they consume, and a
//! rejection's attempted reveal the rejected intent's own mismatching reveal;
//! a transcript that disagrees is refused with an error naming the event and
//! the field. The real-game suite is gaos-games/tests/rehydrate_tampered.rs.

use std::sync::Arc;

use gaos_json::{Value, obj};
use gaos_kernel::commitment::{CommitmentBinding, commitment_hash};
use gaos_kernel::{CommandSubmission, KernelOptions, SessionEvent, SessionKernel};

mod support;
use support::{Rounds, rounds_options};

const SESSION: &str = "rehydrate-checks";
const SALT: &str = "11111111111111111111111111111111";

fn options() -> Arc<KernelOptions<Rounds>> {
    rounds_options(SESSION, "tests/rehydrate-checks")
}

fn commit(seat: &str) -> Value {
    let binding = CommitmentBinding { session_id: SESSION, seat, commitment_id: 0, window_ref: 0 };
    let hash = commitment_hash(&binding, SALT, &obj! { "bid" => seat }.into()).expect("hashable");
    obj! { "id" => "Action 1", "commit" => obj! { "commitmentId" => 0u32, "scheme" => "gaos.commit.sha256.v1", "hash" => hash } }
        .into()
}

fn reveal(seat: &str, honest: bool) -> Value {
    let bid = if honest { seat } else { "forged" };
    obj! { "id" => "Action 1", "reveal" => obj! { "commitmentId" => 0u32, "salt" => SALT, "payload" => obj! { "bid" => bid } } }
        .into()
}

fn round(kernel: &mut SessionKernel<Rounds>, commands: &[(&str, Value)]) {
    let cursor = kernel.cursor();
    for (seat, command) in commands {
        let id = format!("{seat}-{}", kernel.transition_revision());
        let prepared = kernel.prepare_ingest(&CommandSubmission::new(SESSION, cursor, seat, &id, command.clone()));
        kernel.apply_now(prepared.expect("accepted")).expect("commits");
    }
    let prepared = kernel.prepare_advance(None).expect("the window is complete");
    kernel.apply_now(prepared).expect("commits");
}

/// Commits (event 2 resolves them), b's mismatching reveal (a rejection),
/// then b's honest reveal resolves with a's.
fn transcript() -> Vec<SessionEvent> {
    let mut kernel = SessionKernel::from_shared(options()).expect("kernel");
    round(&mut kernel, &[("a", commit("a")), ("b", commit("b"))]);
    round(&mut kernel, &[("a", reveal("a", true)), ("b", reveal("b", false))]);
    round(&mut kernel, &[("b", reveal("b", true))]);
    kernel.events().to_vec()
}

fn index_of(events: &[SessionEvent], kind: &str, nth: usize) -> usize {
    events.iter().enumerate().filter(|(_, e)| e.body.kind() == kind).nth(nth).expect("such an event").0
}

/// `events` with `key` of `object_path` (keys, or array indexes) in event `index` replaced.
fn tamper(events: &[SessionEvent], index: usize, object_path: &[&str], key: &str, value: Value) -> Vec<SessionEvent> {
    let mut events = events.to_vec();
    let mut json = events[index].to_value();
    let mut at = &mut json;
    for part in object_path {
        at = match at {
            Value::Array(items) => &mut items[part.parse::<usize>().expect("an index")],
            other => other.as_object_mut().expect("an object").get_mut(*part).expect("a key"),
        };
    }
    at.as_object_mut().expect("an object").insert(key.into(), value);
    events[index] = SessionEvent::from_value(&json).expect("still an event");
    events
}

fn refusal(events: Vec<SessionEvent>) -> String {
    match SessionKernel::rehydrate(options(), None, events) {
        Ok(_) => panic!("a tampered transcript rehydrated"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_untampered_transcript_rehydrates() {
    let events = transcript();
    SessionKernel::rehydrate(options(), None, events).expect("rehydrates");
}

#[test]
fn resolution_inputs_must_be_the_consumed_intents_frozen_actions() {
    let events = transcript();
    let commits = index_of(&events, "resolution", 0);
    let reveals = index_of(&events, "resolution", 1);
    let other_hash: Value = "ab".repeat(32).into();
    let cases: Vec<(usize, Vec<&str>, &str, Value, &str)> = vec![
        (commits, vec!["inputs", "0", "action", "commit"], "hash", other_hash, "resolution input 0: `action`"),
        (commits, vec!["inputs", "1", "action"], "seat", "a".into(), "resolution input 1: `action`"),
        (commits, vec!["inputs", "1"], "submissionId", "b-9".into(), "resolution input 1: `submissionId`"),
        (commits, vec!["inputs", "0"], "canonicalCommand", "{}".into(), "resolution input 0: `canonicalCommand`"),
        (commits, vec!["inputs", "0"], "cursor", 4u32.into(), "resolution input 0: `cursor`"),
        (commits, vec!["inputs", "1"], "clientTime", 7u32.into(), "resolution input 1: `clientTime`"),
        (reveals, vec!["inputs", "0", "action"], "verifiedPayload", Value::Null, "resolution input 0: `action`"),
    ];
    for (index, path, key, value, field) in cases {
        let error = refusal(tamper(&events, index, &path, key, value));
        assert!(error.contains(&format!("transcript event {index}")), "{error}");
        assert!(error.contains(field), "{error} should name {field}");
    }
}

#[test]
fn a_rejection_must_be_the_rejected_intents_mismatching_reveal() {
    let events = transcript();
    let i = index_of(&events, "rejection", 0);
    let name = format!("transcript event {i}");
    let forged_salt = "22222222222222222222222222222222";
    let error = refusal(tamper(&events, i, &["attemptedReveal"], "salt", forged_salt.into()));
    assert!(error.contains(&name) && error.contains("attemptedReveal"), "{error}");
    let error = refusal(tamper(&events, i, &[], "cursor", 0u32.into()));
    assert!(error.contains(&name) && error.contains("cursor"), "{error}");
    let error = refusal(tamper(&events, i, &[], "canonicalCommand", "{}".into()));
    assert!(error.contains(&name) && error.contains("canonicalCommand"), "{error}");
}
