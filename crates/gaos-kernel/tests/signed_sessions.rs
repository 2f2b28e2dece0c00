//! Signed sessions (RFC-010) in this kernel: the reference's signed hilo and
//! counter sessions (`replays/signed/`) are played again through
//! `prepare_ingest`, `prepare_timeout`, `prepare_seat_signature` and
//! `prepare_extension` with the recorded signed submissions, rehydrate from
//! their transcript, and finalize to the reference's bytes; every tampered
//! submission those files illustrate is refused at ingest, before anything
//! would be persisted.

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::Value;
use gaos_kernel::replay::{FinalizeOptions, finalize_replay};
use gaos_kernel::signing::Roster;
use gaos_kernel::{
    Cadence, CommandSubmission, DynReducer, Game, KernelError, KernelOptions, SeatSignatureInput, SeedPolicy,
    SessionKernel, TimeoutInput,
};
use gaos_testkit::conformance_dir;

fn lines(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(conformance_dir().join("replays/signed").join(file)).expect("replay file");
    text.lines().map(|l| gaos_json::parse(l).expect("JSON line")).collect()
}

fn field<'a>(value: &'a Value, key: &str) -> &'a Value {
    value.get(key).unwrap_or_else(|| panic!("missing {key} in {value}"))
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    field(value, key).as_str().unwrap_or_else(|| panic!("{key} is not a string"))
}

fn options(header: &Value) -> KernelOptions<DynReducer> {
    let registry = GameRegistry::builtin();
    let game: Arc<dyn Game> = registry.get(text(field(header, "game"), "id")).expect("a conformance game");
    let level = &field(header, "levels").as_array().expect("levels")[0];
    let policy = match text(header, "seedPolicy") {
        "explicit" => SeedPolicy::Explicit,
        _ => SeedPolicy::RunLevelSeedV1,
    };
    let roster = Roster::from_value(field(header, "seatKeys")).expect("roster");
    KernelOptions::builder(&game, text(header, "sessionId"))
        .level(text(level, "id"), field(level, "level").clone())
        .seed(field(header, "seed").as_u32().expect("seed"), policy)
        .cadence(game.cadence())
        .timeout_mapper(true)
        .signing(Some(roster))
        .timeout_policy(header.get("timeoutPolicy").cloned())
        .build()
}

/// The signed submission a resolution input records.
fn submission(session: &str, input: &Value) -> CommandSubmission {
    let command = gaos_json::parse(text(input, "canonicalCommand")).expect("command");
    let cursor = field(input, "cursor").as_u64().expect("cursor");
    let mut sub = CommandSubmission::new(session, cursor, text(input, "seat"), text(input, "submissionId"), command);
    sub.client_time = input.get("clientTime").cloned();
    sub.prev_chain_hash = input.get("prevChainHash").cloned();
    sub.sig = input.get("sig").cloned();
    sub
}

fn refused<T>(result: Result<T, KernelError>) -> KernelError {
    match result {
        Ok(_) => panic!("accepted what must be refused"),
        Err(e) => e,
    }
}

fn seat_signature(record: &Value) -> SeatSignatureInput {
    SeatSignatureInput {
        participant_id: text(record, "participantId").into(),
        tick: field(record, "tick").as_u64().expect("tick"),
        client_time: field(record, "clientTime").as_u64().expect("clientTime"),
        prev_chain_hash: text(record, "prevChainHash").into(),
        sig: text(record, "sig").into(),
    }
}

/// Play a signed replay's records again; the first refused step is returned
/// with its record index.
fn play(file: &str) -> Result<SessionKernel<DynReducer>, (usize, KernelError)> {
    let records = lines(file);
    let header = &records[0];
    let session = text(header, "sessionId").to_owned();
    let mut kernel = SessionKernel::new(options(header)).expect("signed options");
    let mut timeout = None;
    for (n, record) in records[1..].iter().enumerate() {
        let mut step = |kernel: &mut SessionKernel<DynReducer>| -> Result<(), KernelError> {
            match text(record, "kind") {
                "resolution" => {
                    for input in field(record, "inputs").as_array().expect("inputs") {
                        if input.get("submissionId").is_some() {
                            let prepared = kernel.prepare_ingest(&submission(&session, input))?;
                            kernel.apply_now(prepared)?;
                        }
                    }
                    let ticks = matches!(kernel.options().cadence, Cadence::Ticks(_));
                    let target = ticks.then(|| field(record, "tick").as_f64().expect("tick"));
                    let prepared = match timeout.take() {
                        Some(t) => kernel.prepare_timeout(&t, None)?,
                        None => kernel.prepare_advance(target)?,
                    };
                    kernel.apply_now(prepared).map(drop)
                }
                "timeout" => {
                    let participant = record.get("participantId").and_then(Value::as_str);
                    let tick = field(record, "tick").as_u64().expect("tick");
                    let mut input =
                        TimeoutInput::new(text(record, "timeoutId"), tick, participant, text(record, "reason"));
                    input.timeout_policy_ref =
                        record.get("timeoutPolicyRef").and_then(Value::as_str).map(str::to_owned);
                    timeout = Some(input);
                    Ok(())
                }
                "seat-signature" => {
                    let prepared = kernel.prepare_seat_signature(&seat_signature(record))?;
                    kernel.apply_now(prepared).map(drop)
                }
                "extension" => {
                    let prepared = kernel.prepare_extension(text(record, "lane"), field(record, "record"))?;
                    kernel.apply_now(prepared).map(drop)
                }
                _ => Ok(()),
            }
        };
        step(&mut kernel).map_err(|e| (n, e))?;
    }
    Ok(kernel)
}

#[test]
fn signed_sessions_replay_rehydrate_and_finalize_to_the_reference_bytes() {
    for file in
        ["hilo-signed.gaos-replay.jsonl", "counter-signed.gaos-replay.jsonl", "race-deadline-signed.gaos-replay.jsonl"]
    {
        let kernel = play(file).unwrap_or_else(|(n, e)| panic!("{file}: record {n} refused: {e}"));
        let transcript = kernel.live_transcript();
        let header = transcript.header.to_value();
        assert!(header.get("seatKeys").is_some() && header.get("signaturePolicy").is_some(), "{header}");
        let replay = finalize_replay(&transcript, &FinalizeOptions { perm: vec![0], ..FinalizeOptions::default() })
            .expect("finalize");
        let expected = std::fs::read_to_string(conformance_dir().join("replays/signed").join(file)).expect("file");
        assert_eq!(replay.to_jsonl(), expected, "{file}: byte for byte");
        // Rehydration re-checks every link and signature and lands on the same heads.
        let rehydrated = SessionKernel::rehydrate(
            Arc::new(options(&lines(file)[0])),
            Some(&transcript.header),
            transcript.events.clone(),
        )
        .unwrap_or_else(|e| panic!("{file}: rehydrate: {e}"));
        for seat in kernel.options().seats.clone() {
            assert_eq!(rehydrated.chain_position(&seat), kernel.chain_position(&seat), "{file}: {seat}");
        }
        assert!(kernel.compacted_checkpoint().is_err(), "a signed session keeps its whole log");
    }
}

#[test]
fn signed_ingest_refuses_what_the_verifier_would_reject() {
    let refused = |file: &str, record: usize, needle: &str| {
        let Err((n, error)) = play(file) else { panic!("{file}: every record was accepted") };
        assert_eq!(n, record, "{file}: refused at record {n}: {error}");
        assert_eq!((error.kind(), error.code()), ("signature", "invalid_signature"), "{file}: {error}");
        assert!(error.to_string().contains(needle), "{file}: {error}");
    };
    refused("hilo-signed.forged-sig.gaos-replay.jsonl", 4, "signature of alice's submission alice-r1 does not verify");
    refused("hilo-signed.chain-fork.gaos-replay.jsonl", 6, "is not seat alice's chain head");
    refused("hilo-signed.roster-key-swapped.gaos-replay.jsonl", 0, "is not seat alice's chain head");
    refused("counter-signed-tier1.gaos-replay.jsonl", 3, "b must sign this submission");
    refused("race-deadline-signed.wrong-seat-key.gaos-replay.jsonl", 5, "signature of p2's submission p2-t2");
}

#[test]
fn signed_sessions_check_shapes_roster_and_timeouts() {
    let records = lines("hilo-signed.gaos-replay.jsonl");
    let header = &records[0];
    let session = text(header, "sessionId").to_owned();
    let kernel = SessionKernel::new(options(header)).expect("signed options");
    let input = &field(&records[1], "inputs").as_array().expect("inputs")[0];
    let mut missing = submission(&session, input);
    missing.prev_chain_hash = None;
    let error = refused(kernel.prepare_ingest(&missing));
    assert_eq!((error.kind(), error.code()), ("intent", "invalid_submission"), "{error}");
    let mut unchained = submission(&session, input);
    (unchained.client_time, unchained.prev_chain_hash, unchained.sig) = (None, None, None);
    let error = refused(kernel.prepare_ingest(&unchained));
    assert_eq!(error.code(), "invalid_signature", "{error}");
    let mut bad_base64 = submission(&session, input);
    bad_base64.sig = Some("not base64".into());
    assert_eq!(refused(kernel.prepare_ingest(&bad_base64)).code(), "invalid_submission");
    assert_eq!(kernel.prepare_ingest(&submission(&session, input)).map(|p| p.events().len()).expect("valid"), 1);
    // A roster must name every declared seat exactly once.
    let mut options = options(header);
    let one = Roster::new(options.signing.as_ref().expect("roster").keys()[..1].to_vec()).expect("roster");
    options.signing = Some(one);
    assert_eq!(refused(SessionKernel::new(options)).code(), "type");
    // Signed sessions time out only through the game's mapper.
    let mut options = self::options(header);
    options.timeout_to_action = None;
    let kernel = SessionKernel::new(options).expect("signed options");
    let timeout = TimeoutInput::new("t", 0, Some("bob"), "elapsed");
    let forced = gaos_kernel::SubmittedAction::new("Action 1");
    assert_eq!(refused(kernel.prepare_timeout(&timeout, Some(&forced))).code(), "conflict");
    // A signed session's timeout policy is the tick-bounded form, on ticks.
    let mut options = self::options(header);
    options.timeout_policy = Some(gaos_json::parse(r#"{"mode":"ticks","windowTicks":2}"#).expect("json"));
    assert_eq!(refused(SessionKernel::new(options)).code(), "type", "turns cadence cannot be tick-bounded");
    // Tick-bounded: below the deadline an advance is a no-op, at it a timeout is required.
    let race = lines("race-deadline-signed.gaos-replay.jsonl");
    let kernel = SessionKernel::new(self::options(&race[0])).expect("race options");
    assert_eq!(kernel.next_deadline(), Some(2));
    let noop = kernel.prepare_advance(Some(1.0)).map(|p| p.events().len()).unwrap_or(usize::MAX);
    assert_eq!(noop, 0, "nothing resolves before the deadline");
    assert_eq!(refused(kernel.prepare_advance(Some(2.0))).code(), "not_ready");
    let early = TimeoutInput::new("t", 1, Some("p2"), "elapsed");
    assert_eq!(refused(kernel.prepare_timeout(&early, None)).code(), "conflict", "the policy must be named");
    // Periodic signatures need the seat's head and a valid signature.
    let periodic = seat_signature(&records[3]);
    assert_eq!(refused(kernel.prepare_seat_signature(&periodic)).code(), "conflict");
}
