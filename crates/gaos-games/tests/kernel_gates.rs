//! RFC-006 §M merge gates 3, 6, 7 and 8 on the conformance games, through a
//! simulated host (`sim_host`): crash recovery at every transition boundary,
//! atomic simultaneous resolution and cadence equivalence, per-seat
//! observation streams and snapshot recovery without leaks, and the
//! deterministic resource bounds. Gates 4 and 5 (prepared lifecycle with
//! immutable and mutating reducers) live in `gaos-kernel/tests/lifecycle_gates.rs`.

mod sim_host;

use std::sync::{Arc, Mutex};

use gaos_games::hilo::HiloState;
use gaos_json::{Value, canonical_json, obj};
use gaos_kernel::commitment::{CommitmentBinding, commitment_hash};
use gaos_kernel::{
    AnyState, COMMIT_SCHEME, Cadence, CommandMapper, CommitEnvelope, DeltaBody, DynReducer, EventBody, GameError,
    GameRef, HostTime, KernelOptions, PreparedResult, ReplayMetrics, ResolutionCause, RevealEnvelope, SeedPolicy,
    SessionEvent, SessionKernel, SessionLimits, SubmittedAction, TickReducer, erase_reducer,
};
use sim_host::{
    CrashPoint, Fingerprint, SimHost, Step, advance, advance_to, extension, fingerprint, game_options, identity_uses,
    ingest, json, ticks, timeout, with_limits,
};

// ----- scenarios ----------------------------------------------------------

/// A named game session and a script that plays it to its end.
struct Scenario {
    name: &'static str,
    host: fn() -> SimHost,
    script: fn() -> Vec<Step>,
}

fn hilo_host() -> SimHost {
    // Seed 7 deals alice [4,4,5]; bob's hand differs (checked by the leak test).
    SimHost::new(game_options(
        "conformance/hilo",
        "gate-hilo",
        json(r#"{"handSize":3,"maxCard":9}"#),
        &["alice", "bob"],
        Cadence::Turns,
    ))
}

/// Three rounds with a mapped timeout and an extension record.
fn hilo_script() -> Vec<Step> {
    vec![
        ingest("alice", "a-1", r#"{"card":0}"#),
        ingest("bob", "b-1", r#"{"card":2}"#),
        advance(),
        ingest("bob", "b-2", r#"{"card":0}"#),
        timeout("alice"),
        extension("chat", r#"{"text":"gg"}"#),
        ingest("alice", "a-3", r#"{"card":0}"#),
        ingest("bob", "b-3", r#"{"card":0}"#),
        advance(),
    ]
}

fn race_host() -> SimHost {
    let limits = SessionLimits { max_catch_up_ticks: Some(2.0), ..SessionLimits::default() };
    SimHost::new(with_limits(
        game_options("conformance/race", "gate-race", json(r#"{"length":8}"#), &["p1", "p2"], ticks(10.0)),
        limits,
    ))
}

/// Partial windows, bounded catch-up, a mapped timeout, and the finish line.
fn race_script() -> Vec<Step> {
    vec![
        ingest("p1", "p1-0", r#"{"boost":true}"#),
        advance(),
        ingest("p1", "p1-1", r#"{"boost":true}"#),
        ingest("p2", "p2-1", r#"{"boost":true}"#),
        advance_to(3),
        timeout("p2"),
        extension("telemetry", r#"{"lap":1}"#),
        ingest("p2", "p2-4", r#"{"boost":true}"#),
        advance_to(6),
    ]
}

const NORTH_SALT: &str = "00112233445566778899aabbccddeeff";
const SOUTH_SALT: &str = "ffeeddccbbaa99887766554433221100";

fn commit_command(session_id: &str, seat: &str, salt: &str, bid: u64) -> String {
    let binding = CommitmentBinding { session_id, seat, commitment_id: 0, window_ref: 0 };
    let hash = commitment_hash(&binding, salt, &obj! { "bid" => bid }.into()).expect("a well-formed commitment");
    format!(r#"{{"commit":"{hash}"}}"#)
}

fn sealed_host() -> SimHost {
    SimHost::new(game_options(
        "conformance/sealed",
        "gate-sealed",
        json(r#"{"maxBid":100}"#),
        &["north", "south"],
        Cadence::Turns,
    ))
}

/// Commit, a mismatching reveal (rejection), then a matching one.
fn sealed_script() -> Vec<Step> {
    let reveal = |salt: &str, bid: u64| format!(r#"{{"reveal":{{"salt":"{salt}","bid":{bid}}}}}"#);
    vec![
        ingest("north", "n-commit", &commit_command("gate-sealed", "north", NORTH_SALT, 42)),
        ingest("south", "s-commit", &commit_command("gate-sealed", "south", SOUTH_SALT, 57)),
        advance(),
        ingest("north", "n-reveal", &reveal(NORTH_SALT, 42)),
        ingest("south", "s-reveal-bad", &reveal(SOUTH_SALT, 99)),
        advance(),
        ingest("south", "s-reveal", &reveal(SOUTH_SALT, 57)),
        advance(),
    ]
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario { name: "hilo", host: hilo_host, script: hilo_script },
        Scenario { name: "race", host: race_host, script: race_script },
        Scenario { name: "sealed", host: sealed_host, script: sealed_script },
    ]
}

/// The uncrashed run: fingerprints before every step and at the end.
fn reference_run(scenario: &Scenario) -> (Vec<Fingerprint>, SimHost) {
    let mut host = (scenario.host)();
    let mut fingerprints = Vec::new();
    for step in (scenario.script)() {
        fingerprints.push(fingerprint(&host.kernel));
        host.execute(&step).unwrap_or_else(|e| panic!("{}: {step:?} failed: {e}", scenario.name));
    }
    fingerprints.push(fingerprint(&host.kernel));
    assert!(host.kernel.is_terminal(), "{}: the script plays the session to its end", scenario.name);
    (fingerprints, host)
}

/// Crash at `point` during every step of every scenario; after recovery the
/// rehydrated kernel equals the uncrashed one at the same point, and the
/// finished session is identical: digest, views, revisions, transcript and
/// every seat's client view.
fn crash_at_every_step(point: CrashPoint) {
    for scenario in scenarios() {
        let (reference, finished) = reference_run(&scenario);
        let script = (scenario.script)();
        for k in 0..script.len() {
            let context = format!("{} crash {point:?} at step {k} ({:?})", scenario.name, script[k]);
            let mut host = (scenario.host)();
            host.execute_all(&script[..k]);
            let recovered = host.execute_with_crash(&script[k], point);
            let expected = if point == CrashPoint::BeforePersist { &reference[k] } else { &reference[k + 1] };
            assert_eq!(&recovered, expected, "{context}: the rehydrated kernel");
            host.execute_all(&script[k + 1..]);
            assert_eq!(fingerprint(&host.kernel), fingerprint(&finished.kernel), "{context}: the finished session");
            let store: Vec<String> = host.store.iter().map(SessionEvent::canonical).collect();
            assert_eq!(store, reference.last().expect("final").events, "{context}: the durable transcript");
            host.assert_clients_match_observe(&context);
            for (seat, client) in &host.clients {
                let expected = &finished.clients[seat].notices;
                assert_eq!(&client.notices, expected, "{context}: {seat} got every rejection notice exactly once");
            }
        }
    }
}

// ----- G3: crash recovery -------------------------------------------------

#[test]
fn crash_before_persist_loses_nothing_durable_and_the_retry_reaches_the_same_outcome() {
    crash_at_every_step(CrashPoint::BeforePersist);
}

#[test]
fn crash_between_persist_and_commit_rehydrates_to_the_same_outcome() {
    crash_at_every_step(CrashPoint::BetweenPersistAndCommit);
}

#[test]
fn crash_between_commit_and_delta_delivery_is_recovered_by_snapshots() {
    crash_at_every_step(CrashPoint::BetweenCommitAndDelivery);
}

#[test]
fn crash_after_delivery_before_acknowledgement_resyncs_without_repeating_notices() {
    crash_at_every_step(CrashPoint::AfterDelivery);
}

#[test]
fn crash_after_an_accepted_intent_keeps_the_pending_window_and_its_receipt() {
    let mut host = hilo_host();
    host.execute(&ingest("alice", "a-1", r#"{"card":1}"#)).expect("accepted");
    let before = fingerprint(&host.kernel);
    host.crash_and_rehydrate();
    assert_eq!(fingerprint(&host.kernel), before, "rehydration after an accepted intent");
    assert_eq!(host.kernel.awaiting_seats(), ["bob"], "alice's pending intent survives");
    // alice's exact retry is a duplicate; her id with another command a conflict;
    // another intent for her seat in this window is refused.
    assert!(host.prepare(&ingest("alice", "a-1", r#"{"card":1}"#)).expect("duplicate").is_noop());
    let conflict = host.prepare(&ingest("alice", "a-1", r#"{"card":2}"#)).expect_err("conflict");
    assert_eq!(conflict.code(), "conflict");
    let other = host.prepare(&ingest("alice", "a-2", r#"{"card":2}"#)).expect_err("seat already holds an intent");
    assert_eq!(other.code(), "conflicting_intent");
    host.execute_all(&[ingest("bob", "b-1", r#"{"card":0}"#), advance()]);
    let resolution = host.kernel.events().iter().rev().find_map(|e| match &e.body {
        EventBody::Resolution { inputs, .. } => Some(inputs.clone()),
        _ => None,
    });
    let inputs: Vec<_> = resolution.expect("a resolution").iter().map(|i| i.submission_id.clone()).collect();
    assert_eq!(inputs, [Some("a-1".to_owned()), Some("b-1".to_owned())], "the rehydrated intent resolves");
}

// ----- G6: atomic simultaneous resolution, cadence equivalence ------------

/// Wraps a game's reducer and records the inputs of every `advance` call.
struct RecordingReducer {
    inner: DynReducer,
    calls: Arc<Mutex<Vec<Vec<SubmittedAction>>>>,
}

impl TickReducer for RecordingReducer {
    type State = AnyState;
    fn init(&self, level: &Value, seed: u32) -> Result<AnyState, GameError> {
        self.inner.init(level, seed)
    }
    fn advance(&self, state: AnyState, inputs: &[SubmittedAction]) -> Result<AnyState, GameError> {
        self.calls.lock().expect("not poisoned").push(inputs.to_vec());
        self.inner.advance(state, inputs)
    }
    fn view(&self, state: &AnyState) -> Value {
        self.inner.view(state)
    }
    fn view_for(&self, state: &AnyState, seat: &str) -> Value {
        self.inner.view_for(state, seat)
    }
    fn has_view_for(&self) -> bool {
        self.inner.has_view_for()
    }
    fn replay_metrics(&self, state: &AnyState) -> Option<ReplayMetrics> {
        self.inner.replay_metrics(state)
    }
    fn validate_command(&self, state: &AnyState, seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        self.inner.validate_command(state, seat, action)
    }
    fn supports_empty_ticks(&self) -> bool {
        self.inner.supports_empty_ticks()
    }
}

type CallLog = Arc<Mutex<Vec<Vec<SubmittedAction>>>>;

fn recorded(mut options: KernelOptions<DynReducer>) -> (SimHost, CallLog) {
    let calls: CallLog = Arc::default();
    options.reducer = Arc::new(RecordingReducer { inner: options.reducer, calls: Arc::clone(&calls) });
    (SimHost::new(options), calls)
}

fn seats_of(call: &[SubmittedAction]) -> Vec<&str> {
    call.iter().map(|a| a.seat.as_deref().unwrap_or("-")).collect()
}

fn resolutions(events: &[SessionEvent]) -> Vec<String> {
    events
        .iter()
        .filter(|e| matches!(e.body, EventBody::Resolution { .. } | EventBody::Checkpoint { .. }))
        .map(|e| canonical_json(&gaos_json::to_value(&e.body).expect("event body is JSON")))
        .collect()
}

#[test]
fn a_simultaneous_window_resolves_in_one_reducer_call_with_inputs_in_canonical_order() {
    let counter = |seats: &[&str]| {
        recorded(game_options("conformance/counter", "gate-atomic", json(r#"{"rounds":3}"#), seats, Cadence::Turns))
    };
    // Declared order b, a; arrival order alternates between rounds and runs.
    let (mut forward, forward_calls) = counter(&["b", "a"]);
    let (mut backward, backward_calls) = counter(&["b", "a"]);
    for round in 0..3 {
        let a = ingest("a", &format!("a-{round}"), &format!(r#"{{"n":{}}}"#, round + 1));
        let b = ingest("b", &format!("b-{round}"), &format!(r#"{{"n":{}}}"#, 10 * (round + 1)));
        let (first, second) = if round % 2 == 0 { (&a, &b) } else { (&b, &a) };
        forward.execute_all(&[first.clone(), second.clone(), advance()]);
        backward.execute_all(&[second.clone(), first.clone(), advance()]);
    }
    for calls in [&forward_calls, &backward_calls] {
        let calls = calls.lock().expect("not poisoned");
        assert_eq!(calls.len(), 3, "one reducer call per resolved window");
        for call in calls.iter() {
            assert_eq!(seats_of(call), ["a", "b"], "inputs in canonical participant order");
        }
    }
    assert_eq!(*forward_calls.lock().expect("lock"), *backward_calls.lock().expect("lock"), "same reducer inputs");
    assert_eq!(resolutions(&forward.store), resolutions(&backward.store), "same resolutions and checkpoints");
    assert_eq!(forward.kernel.digest(), backward.kernel.digest());
    assert_ne!(
        forward.store.iter().map(SessionEvent::canonical).collect::<Vec<_>>(),
        backward.store.iter().map(SessionEvent::canonical).collect::<Vec<_>>(),
        "the arrival order differs in the intent events (so the equality above is not vacuous)"
    );
    let total = forward.kernel.observe("a").expect("seat").get("total").cloned();
    assert_eq!(total, Some(Value::from(66u32)), "1+10 + 2+20 + 3+30");
}

#[test]
fn tick_catch_up_calls_the_reducer_once_per_tick_even_for_empty_windows() {
    let (mut host, calls) = recorded(game_options(
        "conformance/race",
        "gate-catch-up",
        json(r#"{"length":50}"#),
        &["p1", "p2"],
        ticks(10.0),
    ));
    host.execute_all(&[ingest("p2", "p2-0", "{}"), ingest("p1", "p1-0", "{}"), advance_to(2)]);
    let calls = calls.lock().expect("not poisoned");
    let seats: Vec<Vec<&str>> = calls.iter().map(|c| seats_of(c)).collect();
    assert_eq!(seats, [vec!["p1", "p2"], vec![], vec![]], "one call per tick; the intents resolve in the first");
    let causes: Vec<ResolutionCause> = host
        .store
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Resolution { cause, .. } => Some(*cause),
            _ => None,
        })
        .collect();
    assert_eq!(causes, [ResolutionCause::Complete, ResolutionCause::Tick, ResolutionCause::Tick]);
}

/// The same ready windows in turns and in ticks cadence (one complete window
/// per tick) give the same canonical event stream, deltas and digests.
#[test]
fn turns_and_ticks_cadences_produce_the_same_event_stream_for_the_same_ready_windows() {
    for (game, level, seats, command) in [
        ("conformance/counter", r#"{"rounds":4}"#, ["a", "b"], r#"{"n":2}"#),
        ("conformance/race", r#"{"length":6}"#, ["p1", "p2"], r#"{"boost":true}"#),
    ] {
        let run = |cadence: Cadence| {
            let options = game_options(game, "gate-cadence", json(level), &seats, cadence);
            let (mut host, calls) = recorded(options);
            let mut deltas = Vec::new();
            let mut round = 0;
            while !host.kernel.is_terminal() {
                for seat in seats {
                    host.execute(&ingest(seat, &format!("{seat}-{round}"), command)).expect("ingest");
                }
                let mut prepared = host.prepare(&advance()).expect("advance");
                host.persist(&prepared);
                host.kernel.commit(&mut prepared).expect("commit");
                deltas.extend(prepared.deltas().iter().map(|d| canonical_json(&d.to_value())));
                round += 1;
            }
            let events: Vec<String> = host.store.iter().map(SessionEvent::canonical).collect();
            let calls = calls.lock().expect("not poisoned").clone();
            (events, deltas, host.kernel.digest(), calls, round)
        };
        let turns = run(Cadence::Turns);
        let ticked = run(ticks(20.0));
        assert!(turns.4 >= 3, "{game}: several windows resolved");
        assert_eq!(turns.0, ticked.0, "{game}: canonical event streams");
        assert_eq!(turns.1, ticked.1, "{game}: deltas");
        assert_eq!(turns.2, ticked.2, "{game}: digests");
        assert_eq!(turns.3, ticked.3, "{game}: reducer calls and their inputs");
    }
}

// ----- G7: per-seat observation streams, recovery, leaks -------------------

#[test]
fn per_seat_delta_streams_from_revision_zero_reproduce_observe_after_every_transition() {
    for scenario in scenarios() {
        let mut host = (scenario.host)();
        for (k, step) in (scenario.script)().iter().enumerate() {
            host.execute(step).unwrap_or_else(|e| panic!("{}: {step:?}: {e}", scenario.name));
            host.assert_clients_match_observe(&format!("{} after step {k}", scenario.name));
        }
        for (seat, client) in &host.clients {
            let resolutions = client.received.iter().filter(|d| !d.acknowledgements.is_empty()).count();
            assert!(resolutions >= 2, "{}: {seat} received {resolutions} acknowledged deltas", scenario.name);
        }
    }
}

#[test]
fn a_missed_delta_is_recovered_by_a_snapshot_after_the_last_seen_transition_revision() {
    let mut host = hilo_host();
    host.execute_all(&[ingest("alice", "a-1", r#"{"card":0}"#), ingest("bob", "b-1", r#"{"card":2}"#)]);
    // bob's connection drops the resolution delta.
    let mut prepared = host.prepare(&advance()).expect("advance");
    host.persist(&prepared);
    host.kernel.commit(&mut prepared).expect("commit");
    let alice_only: Vec<_> = prepared.deltas().iter().filter(|d| d.seat == "alice").cloned().collect();
    host.deliver(&alice_only);
    let bob = host.clients.get_mut("bob").expect("bob");
    assert_ne!(bob.view, *host.kernel.observe("bob").expect("seat"), "bob missed a change");
    let last_seen = bob.last_transition;
    assert_eq!(last_seen, 0, "bob saw only his initial snapshot");
    bob.resync(&host.kernel);
    let snapshot = bob.received.last().expect("the snapshot");
    assert!(matches!(snapshot.body, DeltaBody::Snapshot { .. }));
    assert_eq!(snapshot.transition_revision, host.kernel.transition_revision());
    host.assert_clients_match_observe("after bob's resync");
    // The stream continues from the snapshot.
    host.execute_all(&hilo_script()[3..]);
    host.assert_clients_match_observe("at the end");

    // A missed rejection notice comes back with the snapshot, exactly once.
    let mut host = sealed_host();
    let script = sealed_script();
    host.execute_all(&script[..5]);
    let mut prepared = host.prepare(&script[5]).expect("the mismatching reveal is rejected");
    host.persist(&prepared);
    host.kernel.commit(&mut prepared).expect("commit");
    let rejection_revision = prepared.next_transition_revision();
    let north_only: Vec<_> = prepared.deltas().iter().filter(|d| d.seat == "north").cloned().collect();
    host.deliver(&north_only);
    let south = host.clients.get_mut("south").expect("south");
    assert!(south.notices.is_empty());
    south.resync(&host.kernel);
    let notices: Vec<_> = south.notices.iter().map(|n| (n.seat.as_str(), n.submission_id.as_str())).collect();
    assert_eq!(notices, [("south", "s-reveal-bad")], "the snapshot carries the missed notice");
    assert_eq!(south.last_transition, rejection_revision);
    let again = host.kernel.snapshot("south", Some(rejection_revision)).expect("snapshot");
    assert!(again.rejections.is_empty(), "nothing after the rejection revision");
    host.assert_clients_match_observe("sealed after south's resync");
}

/// Every JSON object inside `value` with a `hand` key must show `own`; no
/// object may carry the full `hands` map.
fn assert_only_own_hand(value: &Value, own: &Value, context: &str) {
    match value {
        Value::Object(map) => {
            assert!(!map.contains_key("hands"), "{context}: a delivery carries every hand: {value}");
            if let Some(hand) = map.get("hand") {
                assert_eq!(hand, own, "{context}: a delivery shows a hand other than alice's own");
                assert_eq!(map.get("seat"), Some(&Value::from("alice")), "{context}: a view for another seat");
            }
            for v in map.values() {
                assert_only_own_hand(v, own, context);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| assert_only_own_hand(v, own, context)),
        _ => {}
    }
}

fn hands(kernel: &SessionKernel<DynReducer>) -> [Value; 2] {
    let state: &HiloState = kernel.state().downcast_ref().expect("a hilo state");
    state.hands.clone().map(|hand| Value::Array(hand.into_iter().map(Value::from).collect()))
}

#[test]
fn no_delta_snapshot_receipt_or_notice_delivered_to_alice_contains_bobs_hand() {
    let mut host = hilo_host();
    let [alice, bob] = hands(&host.kernel);
    assert_ne!(alice, bob, "the seed deals different hands, so a leak would be visible");
    let mut deliveries = 0;
    let mut steps = hilo_script();
    steps.insert(
        2,
        Step::IngestAt { seat: "alice".into(), id: "a-x".into(), command: json(r#"{"card":0}"#), revision: 9 },
    );
    for step in steps {
        let delivered_before = host.clients["alice"].received.len();
        let outcome = host.execute(&step);
        let own = hands(&host.kernel)[0].clone();
        let context = format!("after {step:?}");
        // What alice's own submissions get back: a receipt or an error code.
        if let (Step::Ingest { seat, .. }, Ok(PreparedResult::Ingest(receipt))) = (&step, &outcome)
            && seat == "alice"
        {
            assert_only_own_hand(&gaos_json::to_value(receipt).expect("receipt"), &own, &context);
        }
        if let Ok(PreparedResult::Advance(summary)) = &outcome {
            for notice in summary.rejections.iter().filter(|n| n.seat == "alice") {
                assert_only_own_hand(&gaos_json::to_value(notice).expect("notice"), &own, &context);
            }
        }
        for delta in &host.clients["alice"].received[delivered_before..] {
            assert_eq!((delta.seat.as_str(), delta.scope_id.as_str()), ("alice", "alice"), "{context}");
            if let DeltaBody::Snapshot { view } = &delta.body {
                assert_eq!(view.get("hand"), Some(&own), "{context}: alice's view shows her hand");
            }
            assert_only_own_hand(&delta.to_value(), &own, &context);
            deliveries += 1;
        }
        let snapshot = host.kernel.snapshot("alice", None).expect("snapshot");
        assert_only_own_hand(&snapshot.to_value(), &own, &context);
    }
    host.crash_and_rehydrate();
    let snapshot = host.kernel.snapshot("alice", Some(0)).expect("snapshot after rehydration");
    assert_only_own_hand(&snapshot.to_value(), &hands(&host.kernel)[0], "after rehydration");
    assert_eq!(deliveries, 3, "one delta per resolution reached alice");
    assert!(host.kernel.full_view().get("handCounts").is_some());
}

// ----- G8: deterministic resource bounds ------------------------------------

fn race_kernel(tps: f64, length: u32, limits: SessionLimits) -> SimHost {
    SimHost::new(with_limits(
        game_options("conformance/race", "gate-bounds", obj! { "length" => length }.into(), &["p1", "p2"], ticks(tps)),
        limits,
    ))
}

fn error_code(host: &SimHost, step: &Step) -> &'static str {
    match host.prepare(step) {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

#[test]
fn max_future_ticks_refuses_targets_beyond_the_bound() {
    // Default: 2 x ticksPerSecond.
    let host = race_kernel(5.0, 100, SessionLimits::default());
    assert_eq!(host.kernel.limits().max_future_ticks, 10);
    assert_eq!(error_code(&host, &advance_to(10)), "ok");
    assert_eq!(error_code(&host, &advance_to(11)), "invalid_target");

    let mut host = race_kernel(5.0, 100, SessionLimits { max_future_ticks: Some(3.0), ..SessionLimits::default() });
    assert_eq!(error_code(&host, &advance_to(3)), "ok");
    assert_eq!(error_code(&host, &advance_to(4)), "invalid_target");
    host.execute(&advance_to(2)).expect("three ticks");
    assert_eq!(host.kernel.tick(), 3);
    assert_eq!(error_code(&host, &advance_to(2)), "stale_target", "a target behind the open tick");
    assert_eq!(error_code(&host, &advance_to(6)), "ok");
    assert_eq!(error_code(&host, &advance_to(7)), "invalid_target", "the bound moves with the tick");
    assert_eq!(host.kernel.prepare_advance(Some(3.5)).map(|_| ()).map_err(|e| e.code()), Err("invalid_target"));

    let turns = hilo_host();
    assert_eq!(turns.kernel.limits().max_future_ticks, 1, "turns default");
    assert_eq!(error_code(&turns, &advance_to(0)), "invalid_target", "turns cadence takes no target");
}

#[test]
fn max_catch_up_ticks_resolves_a_bounded_prefix_and_reports_partial() {
    let limits = SessionLimits { max_catch_up_ticks: Some(3.0), ..SessionLimits::default() };
    let mut host = race_kernel(10.0, 50, limits);
    host.execute(&ingest("p1", "p1-0", "{}")).expect("ingest");
    let mut summaries = Vec::new();
    while host.kernel.tick() <= 7 {
        match host.execute(&advance_to(7)).expect("advance") {
            PreparedResult::Advance(summary) => summaries.push((summary.resolutions, summary.partial, summary.tick)),
            other => panic!("unexpected result {other:?}"),
        }
    }
    assert_eq!(summaries, [(3, true, 3), (3, true, 6), (2, false, 8)], "eight requested ticks in bounded steps");
    let inputs: Vec<usize> = host
        .store
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Resolution { inputs, .. } => Some(inputs.len()),
            _ => None,
        })
        .collect();
    assert_eq!(inputs, [1, 0, 0, 0, 0, 0, 0, 0], "the pending intent resolves once, in the first tick");
}

#[test]
fn receipt_retention_evicts_receipts_then_refuses_retries_as_stale_tick_or_unknown_submission() {
    let counter = |retention: f64| {
        let options =
            game_options("conformance/counter", "gate-receipts", json(r#"{"rounds":5}"#), &["a", "b"], Cadence::Turns);
        SimHost::new(with_limits(
            options,
            SessionLimits { receipt_retention: Some(retention), ..SessionLimits::default() },
        ))
    };
    let round = |host: &mut SimHost, r: u64| {
        host.execute_all(&[ingest("a", &format!("a-{r}"), r#"{"n":1}"#), ingest("b", &format!("b-{r}"), r#"{"n":1}"#)]);
        host.execute(&advance()).expect("advance");
    };
    let retry_a0 = Step::IngestAt { seat: "a".into(), id: "a-0".into(), command: json(r#"{"n":1}"#), revision: 0 };

    let mut host = counter(1.0);
    round(&mut host, 0);
    let duplicate = host.prepare(&retry_a0).expect("retained for one more window");
    let receipt = duplicate.receipt().expect("receipt");
    assert!(duplicate.is_noop() && receipt.is_duplicate() && receipt.resolved, "{receipt:?}");
    round(&mut host, 1);
    assert_eq!(error_code(&host, &retry_a0), "stale_tick", "evicted: the stale cursor is reported first");
    let readdressed = ingest("a", "a-0", r#"{"n":1}"#);
    assert_eq!(error_code(&host, &readdressed), "unknown_submission", "an evicted identity is never reapplied");
    let retry_a1 = Step::IngestAt { seat: "a".into(), id: "a-1".into(), command: json(r#"{"n":1}"#), revision: 1 };
    assert!(host.prepare(&retry_a1).expect("still retained").is_noop());

    let mut host = counter(0.0);
    round(&mut host, 0);
    assert_eq!(error_code(&host, &retry_a0), "stale_tick", "retention 0 evicts at the resolution");
    assert_eq!(error_code(&host, &readdressed), "unknown_submission");
    let uses = identity_uses(&host.store);
    assert_eq!(uses.get(&("a".to_owned(), "a-0".to_owned())), Some(&(1, 1)));
}

#[test]
fn max_extension_bytes_bounds_records_by_their_canonical_utf8_length() {
    let limits = SessionLimits { max_extension_bytes: Some(16.0), ..SessionLimits::default() };
    let mut host = race_kernel(10.0, 50, limits);
    // `{"t":"` + text + `"}` is 8 bytes of framing.
    let record = |text: &str| Step::Extension { lane: "chat".into(), record: obj! { "t" => text }.into() };
    let before = fingerprint(&host.kernel);
    host.execute(&record("12345678")).expect("exactly 16 bytes");
    assert_eq!(error_code(&host, &record("123456789")), "range");
    assert_eq!(error_code(&host, &record("éééé")), "ok", "four two-byte characters: 16 bytes");
    assert_eq!(error_code(&host, &record("éééé1")), "range", "UTF-8 bytes are counted, not characters");
    let after = fingerprint(&host.kernel);
    assert_eq!((after.digest, after.cursor, &after.views), (before.digest, before.cursor, &before.views));
    assert_eq!(after.transition_revision, before.transition_revision + 1, "an extension is a durable transition");
}

/// A sealed-like game whose commitments have increasing ids, so a seat can
/// hold several open commitments: `{"commit": HASH, "id": K}` and
/// `{"reveal": {"id": K, "salt": SALT, "bid": N}}`.
#[derive(Debug, Clone, Copy)]
struct VaultReducer;

impl TickReducer for VaultReducer {
    type State = u64;
    fn init(&self, _level: &Value, _seed: u32) -> Result<u64, GameError> {
        Ok(0)
    }
    fn advance(&self, rounds: u64, _inputs: &[SubmittedAction]) -> Result<u64, GameError> {
        Ok(rounds + 1)
    }
    fn view(&self, rounds: &u64) -> Value {
        let seats = vec![Value::from("north"), Value::from("south")];
        obj! {
            "status" => "playing",
            "participation" => obj! { "mode" => "simultaneous", "seats" => seats },
            "round" => *rounds,
            "hud" => obj! { "actionsUsed" => *rounds },
        }
        .into()
    }
}

fn vault_mapper() -> CommandMapper {
    Arc::new(|command, ctx| {
        let mut action = SubmittedAction::new("Action 1").with_seat(ctx.participant_id);
        let id = |v: &Value| v.get("id").and_then(Value::as_u32).ok_or_else(|| GameError::new("needs an id"));
        if let Some(hash) = command.get("commit").and_then(Value::as_str) {
            action.commit =
                Some(CommitEnvelope { commitment_id: id(command)?, scheme: COMMIT_SCHEME.into(), hash: hash.into() });
        } else if let Some(reveal) = command.get("reveal") {
            let salt = reveal.get("salt").and_then(Value::as_str).ok_or_else(|| GameError::new("needs a salt"))?;
            let bid = reveal.get("bid").cloned().unwrap_or(Value::Null);
            action.reveal = Some(RevealEnvelope {
                commitment_id: id(reveal)?,
                salt: salt.into(),
                payload: obj! { "bid" => bid }.into(),
            });
        }
        Ok(action)
    })
}

fn vault(limit: Option<f64>) -> SessionKernel<DynReducer> {
    SessionKernel::new(KernelOptions {
        session_id: "gate-vault".into(),
        game: GameRef::conventional("tests/vault"),
        level_id: "only".into(),
        level_version: None,
        reducer: erase_reducer(VaultReducer),
        level: obj! {}.into(),
        seed: 1,
        seed_policy: SeedPolicy::Explicit,
        seats: vec!["north".into(), "south".into()],
        cadence: ticks(1.0),
        host_time: HostTime::None,
        dmath: None,
        command_to_action: vault_mapper(),
        timeout_to_action: None,
        limits: SessionLimits { max_open_commitments_per_seat: limit, ..SessionLimits::default() },
        state_isolation: None,
        signing: None,
        timeout_policy: None,
    })
    .expect("valid options")
}

/// Submit one command for `seat` and resolve the tick; the error code if refused.
fn vault_round(kernel: &mut SessionKernel<DynReducer>, seat: &str, id: &str, command: Value) -> &'static str {
    let submission = gaos_kernel::CommandSubmission::new("gate-vault", kernel.cursor(), seat, id, command);
    match kernel.prepare_ingest(&submission) {
        Err(e) => e.code(),
        Ok(prepared) => {
            kernel.apply_now(prepared).expect("commit");
            kernel.apply_now(kernel.prepare_advance(None).expect("advance")).expect("commit");
            "ok"
        }
    }
}

fn vault_commit(kernel: &SessionKernel<DynReducer>, seat: &str, id: u32, salt: &str, bid: u64) -> Value {
    // The commitment binds the tick whose resolution will record it.
    let binding = CommitmentBinding { session_id: "gate-vault", seat, commitment_id: id, window_ref: kernel.tick() };
    let hash = commitment_hash(&binding, salt, &obj! { "bid" => bid }.into()).expect("well-formed");
    obj! { "commit" => hash, "id" => id }.into()
}

#[test]
fn max_open_commitments_per_seat_refuses_commits_beyond_the_limit_with_a_conflict() {
    let salt = |i: u32| format!("{i:02}").repeat(16);
    let mut kernel = vault(Some(2.0));
    for id in 0..2 {
        let commit = vault_commit(&kernel, "north", id, &salt(id), 10 + u64::from(id));
        assert_eq!(vault_round(&mut kernel, "north", &format!("n-c{id}"), commit), "ok");
    }
    let third = vault_commit(&kernel, "north", 2, &salt(2), 12);
    assert_eq!(vault_round(&mut kernel, "north", "n-c2", third), "conflict", "a third open commitment");
    let south = vault_commit(&kernel, "south", 0, &salt(9), 5);
    assert_eq!(vault_round(&mut kernel, "south", "s-c0", south), "ok", "the bound is per seat");
    let reveal: Value = obj! { "reveal" => obj! { "id" => 0u32, "salt" => salt(0), "bid" => 10u32 } }.into();
    assert_eq!(vault_round(&mut kernel, "north", "n-r0", reveal), "ok", "revealing closes commitment 0");
    let third = vault_commit(&kernel, "north", 2, &salt(2), 12);
    assert_eq!(vault_round(&mut kernel, "north", "n-c2", third), "ok", "room for one more open commitment");
    let verified = kernel.events().iter().any(|e| match &e.body {
        EventBody::Resolution { inputs, .. } => {
            inputs.iter().any(|i| i.action.verified_payload == Some(obj! { "bid" => 10u32 }.into()))
        }
        _ => false,
    });
    assert!(verified, "the reveal verified against its commitment");

    // The default limit (64) would have accepted the third commitment at once.
    let mut kernel = vault(None);
    for id in 0..3 {
        let commit = vault_commit(&kernel, "north", id, &salt(id), 1);
        assert_eq!(vault_round(&mut kernel, "north", &format!("n-c{id}"), commit), "ok");
    }
}
