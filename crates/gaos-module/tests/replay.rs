//! `gaos replay verify --adapter FILE` at the crate level: a game module and
//! the reference verifier-adapter shape both verify a module game's replay,
//! strictly, and refuse a tampered one.

mod support;

use gaos_kernel::replay::{FinalizeOptions, Verdict, VerifyOptions, finalize_replay, verify_replay};
use gaos_module::load_replay_adapter;
use support::{advance, fixture, kernel, load, submit, test_limits};

fn duel_replay() -> String {
    let game = load("duel.mjs");
    let mut session = kernel(&game, "duel-replay");
    for round in 0..3 {
        submit(&mut session, "east", &format!("e{round}"), r#"{"card":0}"#).unwrap();
        submit(&mut session, "west", &format!("w{round}"), r#"{"card":0}"#).unwrap();
        advance(&mut session).unwrap();
    }
    let options = FinalizeOptions { perm: vec![0], ..FinalizeOptions::default() };
    finalize_replay(&session.live_transcript(), &options).expect("a finished duel finalizes").to_jsonl()
}

#[test]
fn the_game_module_verifies_its_own_replay_strictly() {
    let replay = duel_replay();
    let adapter = load_replay_adapter(&fixture("duel.mjs"), &test_limits()).unwrap();
    assert!(adapter.game().is_some());
    for strict in [false, true] {
        let report = verify_replay(&replay, &adapter, &VerifyOptions { strict, ..VerifyOptions::default() });
        assert_eq!(report.verdict, Verdict::AcceptedUnsigned, "strict {strict}: {:?}", report.problems);
        assert_eq!(report.resolutions, 3);
    }
}

#[test]
fn the_verifier_adapter_shape_verifies_the_same_replay() {
    let replay = duel_replay();
    let adapter = load_replay_adapter(&fixture("duel-adapter.mjs"), &test_limits()).unwrap();
    assert!(adapter.game().is_none());
    let files: Vec<&str> = adapter.identity().files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, ["duel-adapter.mjs", "duel.mjs"]);
    for strict in [false, true] {
        let report = verify_replay(&replay, &adapter, &VerifyOptions { strict, ..VerifyOptions::default() });
        assert_eq!(report.verdict, Verdict::AcceptedUnsigned, "strict {strict}: {:?}", report.problems);
    }
    let reducer_only = load_replay_adapter(&fixture("reducer-only-adapter.mjs"), &test_limits()).unwrap();
    let report = verify_replay(&replay, &reducer_only, &VerifyOptions { strict: true, ..VerifyOptions::default() });
    assert_eq!(report.verdict, Verdict::AcceptedUnsigned, "{:?}", report.problems);
    assert!(report.notes.iter().any(|n| n.contains("no command mapper")), "{:?}", report.notes);
}

#[test]
fn a_level_the_adapter_does_not_know_is_unverifiable() {
    let replay = duel_replay().replace(r#""id":"standard""#, r#""id":"other""#);
    let adapter = load_replay_adapter(&fixture("duel-adapter.mjs"), &test_limits()).unwrap();
    let report = verify_replay(&replay, &adapter, &VerifyOptions::default());
    assert_eq!(report.verdict, Verdict::Unverifiable, "{:?}", report.problems);
    assert!(report.problems.to_strings().iter().any(|p| p.contains("resolves no reducer for this level")));
}

#[test]
fn a_tampered_result_is_rejected_by_both_shapes() {
    let replay = duel_replay();
    let tampered = tamper_score(&replay);
    for file in ["duel.mjs", "duel-adapter.mjs"] {
        let adapter = load_replay_adapter(&fixture(file), &test_limits()).unwrap();
        let report = verify_replay(&tampered, &adapter, &VerifyOptions::default());
        assert_eq!(report.verdict, Verdict::Rejected, "{file}: {:?}", report.problems);
    }
}

/// The first resolution's east input plays another card.
fn tamper_score(replay: &str) -> String {
    let mut lines: Vec<String> = replay.lines().map(str::to_owned).collect();
    let line = lines.iter_mut().find(|l| l.contains(r#""kind":"resolution""#)).expect("a resolution line");
    *line = line.replacen(r#""index":0"#, r#""index":2"#, 1);
    lines.join("\n") + "\n"
}
