//! Rehydration refuses a transcript that disagrees with what it recomputes
//! (ARCHITECTURE.md invariant 5, issue 13 item 4): transcripts of real games
//! (sealed for commit, reveal and rejection; hilo for a mapped timeout) are
//! tampered one field at a time, for every event kind, and `rehydrate` must
//! refuse each with an error naming the event and the field. The untampered
//! transcripts rehydrate, and the salt book's `salt_reuse` path is followed
//! through a crash.

mod sim_host;

use std::sync::Arc;

use gaos_json::{Value, obj};
use gaos_kernel::commitment::{CommitmentBinding, commitment_hash};
use gaos_kernel::{Cadence, SessionEvent, SessionKernel, SessionWarning};
use sim_host::{SimHost, Step, advance, extension, game_options, ingest, json, timeout};

const SEALED: &str = "tamper-sealed";
const NORTH_SALT: &str = "00112233445566778899aabbccddeeff";
const SOUTH_SALT: &str = "ffeeddccbbaa99887766554433221100";
const SALT_REUSE_MESSAGE: &str = "commitment salt was reused within this session";

fn commit(seat: &str, salt: &str, bid: u64) -> String {
    let binding = CommitmentBinding { session_id: SEALED, seat, commitment_id: 0, window_ref: 0 };
    let hash = commitment_hash(&binding, salt, &obj! { "bid" => bid }.into()).expect("a well-formed commitment");
    format!(r#"{{"commit":"{hash}"}}"#)
}

fn reveal(salt: &str, bid: u64) -> String {
    format!(r#"{{"reveal":{{"salt":"{salt}","bid":{bid}}}}}"#)
}

fn sealed_host() -> SimHost {
    SimHost::new(game_options(
        "conformance/sealed",
        SEALED,
        json(r#"{"maxBid":100}"#),
        &["north", "south"],
        Cadence::Turns,
    ))
}

/// Commits, a mismatching reveal (rejection), an extension, then the
/// matching reveal: intent-accepted, resolution, checkpoint, rejection and
/// extension events.
fn sealed_transcript() -> SimHost {
    let mut host = sealed_host();
    host.execute_all(&[
        ingest("north", "n-commit", &commit("north", NORTH_SALT, 42)),
        ingest("south", "s-commit", &commit("south", SOUTH_SALT, 57)),
        advance(),
        ingest("north", "n-reveal", &reveal(NORTH_SALT, 42)),
        ingest("south", "s-reveal-bad", &reveal(SOUTH_SALT, 99)),
        advance(),
        extension("chat", r#"{"text":"gg"}"#),
        ingest("south", "s-reveal", &reveal(SOUTH_SALT, 57)),
        advance(),
    ]);
    host
}

/// A round resolved by alice's mapped timeout: a timeout event.
fn hilo_transcript() -> SimHost {
    let mut host = SimHost::new(game_options(
        "conformance/hilo",
        "tamper-hilo",
        json(r#"{"handSize":3,"maxCard":9}"#),
        &["alice", "bob"],
        Cadence::Turns,
    ));
    host.execute_all(&[ingest("bob", "b-1", r#"{"card":0}"#), timeout("alice")]);
    host
}

/// The index of the `nth` event of `kind`.
fn index_of(events: &[SessionEvent], kind: &str, nth: usize) -> usize {
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.body.kind() == kind)
        .nth(nth)
        .unwrap_or_else(|| panic!("no {kind} event number {nth}"))
        .0
}

/// The value at a `/`-separated path inside `value` (object keys or array
/// indexes), for editing.
fn at<'v>(value: &'v mut Value, path: &str) -> &'v mut Value {
    path.split('/').filter(|p| !p.is_empty()).fold(value, |v, part| match v {
        Value::Array(items) => &mut items[part.parse::<usize>().expect("an array index")],
        Value::Object(map) => map.get_mut(part).unwrap_or_else(|| panic!("no key {part}")),
        other => panic!("cannot descend into {} at {part}", other.type_name()),
    })
}

/// `events` with event `index` edited through its JSON form.
fn tampered(events: &[SessionEvent], index: usize, edit: impl FnOnce(&mut Value)) -> Vec<SessionEvent> {
    let mut events = events.to_vec();
    let mut value = events[index].to_value();
    edit(&mut value);
    events[index] = SessionEvent::from_value(&value).expect("a tampered event still reads");
    events
}

/// Rehydrating `events` is refused, and the error contains every `needle`.
fn assert_refused(host: &SimHost, events: Vec<SessionEvent>, needles: &[&str]) {
    let header = host.kernel.session_header();
    let error = match SessionKernel::rehydrate(Arc::clone(&host.options), Some(&header), events) {
        Ok(_) => panic!("a tampered transcript rehydrated (expected an error with {needles:?})"),
        Err(e) => e.to_string(),
    };
    for needle in needles {
        assert!(error.contains(needle), "the refusal {error:?} does not name {needle:?}");
    }
}

fn set(path: &'static str, replacement: Value) -> impl FnOnce(&mut Value) {
    move |v| *at(v, path) = replacement
}

#[test]
fn untampered_transcripts_rehydrate() {
    for host in [sealed_transcript(), hilo_transcript()] {
        let header = host.kernel.session_header();
        let rebuilt = SessionKernel::rehydrate(Arc::clone(&host.options), Some(&header), host.store.clone())
            .expect("the untampered transcript rehydrates");
        assert_eq!(rebuilt.digest(), host.kernel.digest());
        assert_eq!(sim_host::fingerprint(&rebuilt), sim_host::fingerprint(&host.kernel));
    }
}

#[test]
fn a_tampered_header_or_envelope_is_refused() {
    let host = sealed_transcript();
    let mut header = host.kernel.session_header();
    header.seed += 1;
    let refused = SessionKernel::rehydrate(Arc::clone(&host.options), Some(&header), host.store.clone());
    assert!(refused.is_err(), "a header with another seed rehydrated");
    let events = &host.store;
    assert_refused(
        &host,
        tampered(events, 1, set("eventId", "tamper-sealed:9:0".into())),
        &["transcript event 1", "eventId"],
    );
    let last = events.len() - 1;
    assert_refused(&host, tampered(events, last, set("transitionRevision", 1u32.into())), &["transcript event"]);
    let mut unsafe_time = events.clone();
    unsafe_time[0].host_time = Some(1 << 53);
    assert_refused(&host, unsafe_time, &["transcript event 0", "hostTime"]);
}

#[test]
fn a_tampered_intent_accepted_is_refused() {
    let host = sealed_transcript();
    let events = &host.store;
    let i = index_of(events, "intent-accepted", 0);
    let name = format!("transcript event {i}");
    // Another command than its canonical text.
    assert_refused(
        &host,
        tampered(events, i, set("command", json(&commit("north", NORTH_SALT, 41)))),
        &[&name, "canonicalCommand"],
    );
    // A frozen action the game's mapping does not produce.
    assert_refused(
        &host,
        tampered(events, i, set("action/commit/hash", "00".repeat(32).into())),
        &[&name, "recorded action"],
    );
    assert_refused(&host, tampered(events, i, set("revision", 3u32.into())), &[&name, "open window"]);
    assert_refused(&host, tampered(events, i, set("submissionId", " ".into())), &[&name, "submissionId"]);
    assert_refused(&host, tampered(events, i, set("participantId", "east".into())), &[&name, "east"]);
}

#[test]
fn a_resolution_whose_inputs_differ_from_the_consumed_intents_is_refused() {
    let host = sealed_transcript();
    let events = &host.store;
    let commits = index_of(events, "resolution", 0);
    let reveals = index_of(events, "resolution", 1);
    let name = format!("transcript event {commits}");
    let cases: [(&'static str, Value, &str); 5] = [
        ("inputs/0/action/commit/hash", "00".repeat(32).into(), "resolution input 0: `action`"),
        ("inputs/0/action/seat", "south".into(), "resolution input 0: `action`"),
        ("inputs/1/submissionId", "s-other".into(), "resolution input 1: `submissionId`"),
        ("inputs/1/canonicalCommand", "{}".into(), "resolution input 1: `canonicalCommand`"),
        ("inputs/0/cursor", 1u32.into(), "resolution input 0: `cursor`"),
    ];
    for (path, replacement, needle) in cases {
        assert_refused(&host, tampered(events, commits, set(path, replacement)), &[&name, needle]);
    }
    // A reveal's verified payload is the revealed payload, nothing else.
    let name = format!("transcript event {reveals}");
    assert_refused(
        &host,
        tampered(events, reveals, set("inputs/0/action/verifiedPayload", obj! { "bid" => 1u32 }.into())),
        &[&name, "resolution input 0: `action`"],
    );
    // A complete resolution has no system input.
    let extra = tampered(events, commits, |v| {
        let Value::Array(inputs) = at(v, "inputs") else { panic!("inputs is an array") };
        let mut system = inputs[0].clone();
        let map = system.as_object_mut().expect("an input object");
        map.insert("submissionId".into(), Value::Null);
        inputs.push(system);
    });
    assert_refused(&host, extra, &[&format!("transcript event {commits}"), "resolution input 2"]);
    // The consumed identities and the result are re-checked too.
    assert_refused(
        &host,
        tampered(events, commits, set("consumed/0/submissionId", "n-other".into())),
        &[&format!("transcript event {commits}"), "consumed"],
    );
    assert_refused(
        &host,
        tampered(events, commits, set("result/actionsUsed", 9u32.into())),
        &[&format!("transcript event {commits}"), "result"],
    );
}

#[test]
fn a_tampered_checkpoint_is_refused() {
    let host = sealed_transcript();
    let events = &host.store;
    let i = index_of(events, "checkpoint", 0);
    let digest = host.store[i].to_value().get("digest").and_then(Value::as_u64).expect("a digest");
    assert_refused(
        &host,
        tampered(events, i, set("digest", (digest ^ 1).into())),
        &[&format!("transcript event {i}"), "digest"],
    );
    assert_refused(
        &host,
        tampered(events, i, set("tick", 0u32.into())),
        &[&format!("transcript event {i}"), "checkpoint"],
    );
}

#[test]
fn a_tampered_rejection_is_refused() {
    let host = sealed_transcript();
    let events = &host.store;
    let i = index_of(events, "rejection", 0);
    let name = format!("transcript event {i}");
    assert_refused(
        &host,
        tampered(events, i, set("attemptedReveal/salt", NORTH_SALT.into())),
        &[&name, "attemptedReveal"],
    );
    assert_refused(
        &host,
        tampered(events, i, set("attemptedReveal/payload/bid", 98u32.into())),
        &[&name, "attemptedReveal"],
    );
    assert_refused(&host, tampered(events, i, set("commitmentId", 1u32.into())), &[&name, "commitmentId"]);
    assert_refused(&host, tampered(events, i, set("canonicalCommand", "{}".into())), &[&name, "canonicalCommand"]);
    assert_refused(&host, tampered(events, i, set("cursor", 0u32.into())), &[&name, "cursor"]);
    assert_refused(&host, tampered(events, i, set("submissionId", "s-reveal".into())), &[&name, "accepted intent"]);
    assert_refused(&host, tampered(events, i, set("tick", 0u32.into())), &[&name, "open window"]);
    // A rejection of the matching reveal: north's reveal was honest.
    let honest = tampered(events, i, |v| {
        *at(v, "participantId") = "north".into();
        *at(v, "submissionId") = "n-reveal".into();
        *at(v, "canonicalCommand") = gaos_json::canonical_json(&json(&reveal(NORTH_SALT, 42))).into();
        *at(v, "attemptedReveal") = obj! { "salt" => NORTH_SALT, "payload" => obj! { "bid" => 42u32 } }.into();
    });
    assert_refused(&host, honest, &[&name, "matches its commitment"]);
}

#[test]
fn a_tampered_extension_is_refused() {
    let host = sealed_transcript();
    let events = &host.store;
    let i = index_of(events, "extension", 0);
    let name = format!("transcript event {i}");
    assert_refused(&host, tampered(events, i, set("lane", "".into())), &[&name, "lane"]);
    assert_refused(&host, tampered(events, i, set("tick", 0u32.into())), &[&name, "open tick"]);
    let oversize = tampered(events, i, set("record/text", "x".repeat(70_000).into()));
    assert_refused(&host, oversize, &[&name, "maxExtensionBytes"]);
}

#[test]
fn a_bad_timeout_audit_is_refused() {
    let host = hilo_transcript();
    let events = &host.store;
    let t = index_of(events, "timeout", 0);
    let r = index_of(events, "resolution", 0);
    assert_eq!(r, t + 1, "the timeout resolution follows its timeout");
    // Another seat than the system input's.
    assert_refused(
        &host,
        tampered(events, t, set("participantId", "bob".into())),
        &[&format!("timeout resolution {r}")],
    );
    // An undeclared seat.
    assert_refused(
        &host,
        tampered(events, t, set("participantId", "carol".into())),
        &[&format!("timeout event {t}"), "carol"],
    );
    // A tick other than its window.
    assert_refused(&host, tampered(events, t, set("windowRef", 1u32.into())), &[&format!("timeout event {t}")]);
    // A timeout resolution without its timeout event.
    let mut orphan = events.clone();
    let revision = orphan.remove(t).transition_revision;
    for (k, e) in orphan.iter_mut().filter(|e| e.transition_revision == revision).enumerate() {
        e.event_id = format!("tamper-hilo:{revision}:{k}");
    }
    assert_refused(&host, orphan, &[&format!("timeout resolution {t}"), "directly follow"]);
    // The system input is the game's timeout mapping, and `systemInput` is the last input.
    let system = tampered(events, r, |v| {
        *at(v, "systemInput/action/index") = 2u32.into();
        let Value::Array(inputs) = at(v, "inputs") else { panic!("inputs is an array") };
        let last = inputs.len() - 1;
        *at(&mut inputs[last], "action/index") = 2u32.into();
    });
    assert_refused(&host, system, &[&format!("transcript event {r}"), "timeout mapping"]);
    let split = tampered(events, r, set("systemInput/action/index", 2u32.into()));
    assert_refused(&host, split, &[&format!("transcript event {r}"), "systemInput"]);
}

// ----- the salt book through a crash ------------------------------------------

fn salt_reuse(seat: &str) -> SessionWarning {
    SessionWarning {
        code: "salt_reuse".into(),
        message: SALT_REUSE_MESSAGE.into(),
        participant_id: seat.into(),
        commitment_id: 0,
    }
}

fn warnings(host: &mut SimHost, step: &Step) -> Vec<SessionWarning> {
    match host.execute(step).unwrap_or_else(|e| panic!("{step:?}: {e}")) {
        gaos_kernel::PreparedResult::Advance(summary) => summary.warnings,
        other => panic!("{step:?} is not an advance: {other:?}"),
    }
}

/// Both seats commit with one salt; south's first reveal mismatches. Live,
/// north's reveal recorded the salt before south's was checked, so south is
/// warned with the rejection and again when its honest reveal resolves. The
/// log records only the rejected reveal, so a rehydrated kernel attributes
/// the salt to south and warns north instead (kernel spec §4.12, "reproduce
/// that").
#[test]
fn salt_reuse_across_a_mismatch_survives_rehydration_as_the_spec_says() {
    let shared = NORTH_SALT;
    let mut live = sealed_host();
    live.execute_all(&[
        ingest("north", "n-commit", &commit("north", shared, 42)),
        ingest("south", "s-commit", &commit("south", shared, 57)),
    ]);
    assert_eq!(warnings(&mut live, &advance()), vec![]);
    live.execute_all(&[
        ingest("north", "n-reveal", &reveal(shared, 42)),
        ingest("south", "s-bad", &reveal(shared, 99)),
    ]);
    assert_eq!(warnings(&mut live, &advance()), vec![salt_reuse("south")], "warned with the rejection");
    let mut rehydrated = sealed_host();
    rehydrated.store = live.store.clone();
    rehydrated.crash_and_rehydrate();
    assert_eq!(rehydrated.kernel.digest(), live.kernel.digest());
    let retry = ingest("south", "s-reveal", &reveal(shared, 57));
    live.execute(&retry).expect("south reveals again");
    rehydrated.execute(&retry).expect("south reveals again after the crash");
    assert_eq!(warnings(&mut live, &advance()), vec![salt_reuse("south")]);
    assert_eq!(warnings(&mut rehydrated, &advance()), vec![salt_reuse("north")]);
    assert_eq!(rehydrated.kernel.digest(), live.kernel.digest(), "warnings never reach the state");
    assert_eq!(rehydrated.store, live.store);
}
