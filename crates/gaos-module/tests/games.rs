//! Module games through `SessionKernel`: hidden information, the
//! ActionReducer shape, command validation, timeouts, prepare/abort,
//! views outside the JSON domain, and rehydration with changed code.

mod support;

use std::path::PathBuf;
use std::sync::Arc;

use gaos_kernel::{
    DynReducer, Game, KernelError, KernelOptions, SeedPolicy, SessionKernel, SubmittedAction, TickReducer, TimeoutInput,
};
use gaos_module::ModuleGame;
use support::{advance, fixture, json, kernel, load, options, submit, test_limits};

fn play_duel_round(session: &mut SessionKernel<DynReducer>, round: u64) {
    submit(session, "east", &format!("e{round}"), r#"{"card":0}"#).expect("east plays");
    submit(session, "west", &format!("w{round}"), r#"{"card":0}"#).expect("west plays");
    advance(session).expect("the round resolves");
}

#[test]
fn each_seat_sees_only_its_own_hand() {
    let game = load("duel.mjs");
    assert_eq!(game.levels()[0].version, Some(json("1")));
    let session = kernel(&game, "duel-hidden");
    let east = session.observe("east").unwrap();
    let west = session.observe("west").unwrap();
    assert_eq!(east.get("seat"), Some(&json(r#""east""#)));
    assert!(east.get("hand").is_some() && west.get("hand").is_some());
    assert_ne!(east.get("hand"), west.get("hand"), "seed 7 deals different hands");
    assert!(session.full_view().get("hand").is_none(), "the full view hides both hands");
    // legalActions sees the seat's own view.
    assert_eq!(game.legal_actions(&east, "east").len(), 3);
}

#[test]
fn a_throwing_validate_command_is_an_illegal_command_with_the_modules_reason() {
    let game = load("duel.mjs");
    let mut session = kernel(&game, "duel-illegal");
    let error = submit(&mut session, "east", "e-bad", r#"{"card":7}"#).unwrap_err();
    let KernelError::Intent(intent) = &error else { panic!("an intent error, got {error:?}") };
    assert_eq!(error.code(), "illegal_command");
    assert_eq!(intent.cause.as_deref(), Some("east has no card at position 7 (hand of 3)"));
    assert_eq!(session.cursor(), 0);
}

#[test]
fn a_duel_plays_to_its_end_and_rehydrates() {
    let game = load("duel.mjs");
    let mut session = kernel(&game, "duel-full");
    for round in 0..3 {
        play_duel_round(&mut session, round);
    }
    let view = session.full_view();
    assert_eq!(view.get("status"), Some(&json(r#""ended""#)));
    assert_eq!(view.get("outcome").and_then(|o| o.get("kind")), Some(&json(r#""decided""#)));
    let transcript = session.live_transcript();
    let rebuilt =
        SessionKernel::rehydrate(Arc::new(options(&game, "duel-full")), Some(&transcript.header), transcript.events)
            .expect("the transcript rehydrates with the same module");
    assert_eq!(rebuilt.digest(), session.digest());
    assert_eq!(rebuilt.observe_canonical("west").unwrap(), session.observe_canonical("west").unwrap());
}

#[test]
fn the_timeout_mapper_plays_for_a_silent_seat() {
    let game = load("duel.mjs");
    assert!(game.has_timeout_mapper());
    let shared: Arc<dyn Game> = Arc::new(game.clone());
    let options = KernelOptions::builder(&shared, "duel-timeout")
        .level("standard", json(r#"{"rounds":3}"#))
        .seed(7, SeedPolicy::Explicit)
        .timeout_mapper(true)
        .build();
    let mut session = SessionKernel::new(options).unwrap();
    submit(&mut session, "east", "e0", r#"{"card":1}"#).unwrap();
    let mut prepared = session.prepare_timeout(&TimeoutInput::new("t0", 0, Some("west"), "elapsed"), None).unwrap();
    session.commit(&mut prepared).unwrap();
    assert_eq!(session.cursor(), 1);
    assert_eq!(session.observe("west").unwrap().get("hand").and_then(|h| h.as_array()).map(Vec::len), Some(2));
}

#[test]
fn prepare_changes_nothing_until_commit_and_abort_discards_it() {
    let game = load("duel.mjs");
    let mut session = kernel(&game, "duel-abort");
    submit(&mut session, "east", "e0", r#"{"card":0}"#).unwrap();
    submit(&mut session, "west", "w0", r#"{"card":0}"#).unwrap();
    let before = (session.cursor(), session.digest(), session.observe_canonical("east").unwrap());
    let mut first = session.prepare_advance(None).unwrap();
    let mut second = session.prepare_advance(None).unwrap();
    assert_eq!((session.cursor(), session.digest(), session.observe_canonical("east").unwrap()), before);
    session.abort(&mut first).unwrap();
    assert_eq!((session.cursor(), session.digest(), session.observe_canonical("east").unwrap()), before);
    session.commit(&mut second).unwrap();
    assert_eq!(session.cursor(), 1);
}

#[test]
fn an_action_reducer_resolves_one_input_per_window() {
    let game = load("turns.mjs");
    let mut session = kernel(&game, "turns");
    let moves = [("first", 2), ("second", 2), ("first", 1)];
    for (i, (seat, add)) in moves.iter().enumerate() {
        submit(&mut session, seat, &format!("m{i}"), &format!(r#"{{"add":{add}}}"#)).unwrap();
        advance(&mut session).unwrap();
    }
    let view = session.full_view();
    assert_eq!(view.get("status"), Some(&json(r#""won""#)));
    assert_eq!(view.get("stars"), Some(&json("1")));
    let refused = submit(&mut kernel(&game, "turns-2"), "first", "bad", r#"{"add":3}"#).unwrap_err();
    assert_eq!(refused.code(), "illegal_command");
    // The reference dispatch: no input cannot be applied, two need
    // applyIntents (which this module lacks).
    let reducer = game.reducer();
    assert!(!reducer.supports_empty_ticks());
    let state = reducer.init(&json(r#"{"target":5}"#), 0).unwrap();
    let error = reducer.advance(state.clone(), &[]).unwrap_err();
    assert!(error.message.contains("cannot advance an empty tick"), "{error}");
    let two = [SubmittedAction::new("Action 1").with_index(1.0), SubmittedAction::new("Action 1").with_index(2.0)];
    let error = reducer.advance(state, &two).unwrap_err();
    assert!(error.message.contains("multi-input ticks require applyIntents or a TickReducer"), "{error}");
}

fn with_fault(fault: &str) -> Result<SessionKernel<DynReducer>, KernelError> {
    let game = load("badview.mjs");
    let shared: Arc<dyn Game> = Arc::new(game);
    let level = json(&format!(r#"{{"fault":"{fault}"}}"#));
    SessionKernel::new(KernelOptions::builder(&shared, "bad").level("default", level).build())
}

#[test]
fn views_outside_the_json_domain_are_refused_with_a_path() {
    let cases = [
        ("undefinedField", "view(state) of test/badview: .hand[2] is undefined"),
        ("nan", "view(state) of test/badview: .score is NaN (only finite numbers are JSON values)"),
        ("fn", "view(state) of test/badview: .onClick is a function"),
        ("cycle", "view(state) of test/badview: .items[0].items is a cycle (it contains itself)"),
        ("map", "view(state) of test/badview: .seen is a Map object"),
        ("sparse", "view(state) of test/badview: .cells[1] is a hole"),
        ("bigint", "view(state) of test/badview: .big is a BigInt"),
        ("unsafe", "view(state) of test/badview: .n is 9007199254740992, an integer outside the JavaScript safe range"),
        ("surrogate", "view(state) of test/badview: .name is a string with an unpaired surrogate"),
        ("viewThrows", "view(state) of test/badview threw Error: no view today"),
        ("stateNotJson", "the state init(level, seed) of test/badview returned: .when is undefined"),
    ];
    for (fault, expected) in cases {
        let error = with_fault(fault).err().expect(fault);
        // Not JSON is the kernel's invalid_view (kernel.md §2.1); a view
        // that throws, or a state JSON cannot carry, is game code failing.
        let code = if matches!(fault, "viewThrows" | "stateNotJson") { "reducer_failed" } else { "invalid_view" };
        assert_eq!(error.code(), code, "{fault}: {error}");
        assert!(error.to_string().contains(expected), "{fault}: {error}");
    }
    let error = with_fault("endedWithStars").err().expect("ended with stars");
    assert_eq!(error.code(), "invalid_view");
    assert!(error.to_string().contains("the view of test/badview: an ended view must not report stars"), "{error}");
    let error = with_fault("notAnObject").err().expect("a string view");
    assert_eq!(error.code(), "invalid_view");
    assert!(with_fault("none").is_ok());
}

/// A copy of `duel.mjs` in a fresh directory, with `edit` applied.
fn edited_duel(tag: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gaos-module-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = std::fs::read_to_string(fixture("duel.mjs")).unwrap();
    let path = dir.join("duel.mjs");
    std::fs::write(&path, edit(source)).unwrap();
    path
}

#[test]
fn rehydrating_with_changed_rules_names_the_first_differing_event() {
    let game = load("duel.mjs");
    let mut session = kernel(&game, "duel-changed");
    for round in 0..3 {
        play_duel_round(&mut session, round);
    }
    let transcript = session.live_transcript();
    // Ties now score for east: the first resolution with a tie or a west
    // win re-simulates differently.
    let path = edited_duel("changed", |s| {
        s.replace(r#"state.score[played.east > played.west ? "east" : "west"] += 1"#, r#"state.score.east += 1"#)
            .replace("if (played.east !== played.west) ", "")
    });
    let changed = ModuleGame::load(&path, &test_limits()).unwrap();
    assert_ne!(changed.identity().sha256, game.identity().sha256);
    let error = SessionKernel::rehydrate(
        Arc::new(options(&changed, "duel-changed")),
        Some(&transcript.header),
        transcript.events.clone(),
    )
    .err()
    .expect("changed rules cannot rehydrate the transcript");
    let text = error.to_string();
    assert!(text.starts_with("transcript event "), "{text}");
    assert!(text.contains("the game's code changed or it is not deterministic"), "{text}");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn a_view_leaving_the_safe_range_is_invalid_view_and_the_state_may_hold_it() {
    let game = load("envelope.mjs");
    let mut session = kernel(&game, "unsafe");
    submit(&mut session, "a", "a0", "{}").unwrap();
    submit(&mut session, "b", "b0", "{}").unwrap();
    let error = session.prepare_advance(None).unwrap_err();
    assert_eq!(error.code(), "invalid_view", "{error}");
    assert!(
        error.to_string().contains("view(state) of test/envelope: .total is 9007199254740992, an integer outside"),
        "{error}"
    );
}

#[test]
fn malformed_envelopes_reach_the_kernels_conflict_check() {
    let game = load("envelope.mjs");
    for (i, command) in [r#"{"commit":5}"#, r#"{"reveal":{"salt":7,"bid":30}}"#].into_iter().enumerate() {
        let mut session = kernel(&game, &format!("envelope-{i}"));
        let error = submit(&mut session, "a", "a0", command).unwrap_err();
        assert_eq!((error.kind(), error.code()), ("conflict", "conflict"), "{command}: {error}");
    }
}

#[test]
fn a_ticks_cadence_module_advances_empty_ticks() {
    let game = load("ticker.mjs");
    let gaos_kernel::Cadence::Ticks(rate) = game.cadence() else { panic!("ticks cadence, got {:?}", game.cadence()) };
    assert_eq!(rate.ticks_per_second, 2.5);
    let mut session = kernel(&game, "ticker");
    let mut prepared = session.prepare_advance(Some(3.0)).expect("empty ticks resolve");
    session.commit(&mut prepared).unwrap();
    // Every tick up to the target resolved, each one an empty advance.
    assert!(session.cursor() >= 3);
    assert_eq!(session.full_view().get("ticks"), Some(&gaos_json::Value::Number(session.cursor() as f64)));
}
