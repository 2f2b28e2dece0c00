//! The duel under the real session kernel: simultaneous bids resolve once
//! both are in, a seat never sees the other's budget nor a pending bid,
//! unaffordable bids are refused, and a finished match finalizes into a
//! replay that verifies by re-simulation.

use std::sync::Arc;

use gaos_example_duel::{DuelGame, GAME_ID};
use gaos_json::Value;
use gaos_kernel::replay::{FinalizeOptions, VerifyOptions, finalize_replay, verify_replay};
use gaos_kernel::{Cadence, CommandSubmission, DynReducer, Game, GameRef, KernelOptions, SeedPolicy, SessionKernel};

fn kernel() -> SessionKernel<DynReducer> {
    let game: Arc<dyn Game> = Arc::new(DuelGame);
    let level = DuelGame.levels().remove(0);
    let options = KernelOptions::builder(&game, "duel-1")
        .level(&level.id, level.level)
        .seed(7, SeedPolicy::Explicit)
        .seats(DuelGame.seats())
        .cadence(Cadence::Turns)
        .build();
    SessionKernel::new(options).expect("a duel session")
}

fn bid(kernel: &mut SessionKernel<DynReducer>, seat: &str, points: u64) -> Result<(), String> {
    let command = gaos_json::parse(&format!(r#"{{"bid":{points}}}"#)).expect("JSON");
    let id = format!("{seat}-{}", kernel.cursor());
    let submission = CommandSubmission::new("duel-1", kernel.cursor(), seat, &id, command);
    let mut prepared = kernel.prepare_ingest(&submission).map_err(|e| e.to_string())?;
    kernel.commit(&mut prepared).map_err(|e| e.to_string())?;
    Ok(())
}

fn view(kernel: &SessionKernel<DynReducer>, seat: &str) -> Value {
    let observed = kernel.observe(seat).expect("a seat view");
    observed.get("view").cloned().unwrap_or_else(|| (*observed).clone())
}

fn field(view: &Value, key: &str) -> String {
    view.get(key).map(|v| v.to_string()).unwrap_or_else(|| "absent".into())
}

#[test]
fn a_round_resolves_when_both_seats_have_bid_and_views_hide_what_is_secret() {
    let mut kernel = kernel();
    assert_eq!(kernel.awaiting_seats(), ["blue", "red"]);
    bid(&mut kernel, "red", 4).expect("red bids");
    // The window is still open: blue's view shows neither red's bid nor red's budget.
    let blue = view(&kernel, "blue");
    assert_eq!(field(&blue, "round"), "0");
    assert_eq!(field(&blue, "history"), "[]");
    assert_eq!(field(&blue, "budget"), "10");
    assert!(!blue.to_string().contains(":4"), "a pending bid leaked: {blue}");
    bid(&mut kernel, "blue", 2).expect("blue bids");
    kernel.commit(&mut kernel.prepare_advance(None).expect("resolve")).expect("commit");

    let red = view(&kernel, "red");
    assert_eq!(field(&red, "round"), "1");
    assert_eq!(field(&red, "budget"), "6");
    assert_eq!(field(&red, "history"), r#"[{"blue":2,"red":4,"winner":"red"}]"#);
    assert_eq!(field(&view(&kernel, "blue"), "budget"), "8");
    assert_eq!(field(kernel.full_view(), "wins"), r#"{"blue":0,"red":1}"#);
}

#[test]
fn a_bid_over_budget_is_refused_and_changes_nothing() {
    let mut kernel = kernel();
    let before = kernel.digest();
    let refused = bid(&mut kernel, "red", 11).expect_err("over budget");
    assert!(refused.contains("budget"), "the refusal says why: {refused}");
    assert_eq!(kernel.digest(), before);
    let malformed = bid_raw(&mut kernel, "blue", r#"{"bid":"all"}"#).expect_err("not a number");
    assert!(malformed.contains("{\"bid\": N}"), "{malformed}");
}

fn bid_raw(kernel: &mut SessionKernel<DynReducer>, seat: &str, command: &str) -> Result<(), String> {
    let command = gaos_json::parse(command).expect("JSON");
    let submission = CommandSubmission::new("duel-1", kernel.cursor(), seat, "raw", command);
    kernel.prepare_ingest(&submission).map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn a_whole_match_ends_decided_and_its_replay_verifies() {
    let mut kernel = kernel();
    for (red, blue) in [(5, 3), (1, 4), (4, 3)] {
        if !kernel.awaiting_seats().is_empty() {
            bid(&mut kernel, "red", red).expect("red");
            bid(&mut kernel, "blue", blue).expect("blue");
        }
        if !kernel.is_terminal() && kernel.awaiting_seats().is_empty() {
            kernel.commit(&mut kernel.prepare_advance(None).expect("resolve")).expect("commit");
        }
    }
    assert!(kernel.is_terminal(), "three rounds end the default level");
    let outcome = field(kernel.full_view(), "outcome");
    assert_eq!(
        outcome,
        r#"{"kind":"decided","ranking":[{"rank":1,"score":2,"seat":"red"},{"rank":2,"score":1,"seat":"blue"}]}"#
    );
    let artifact =
        finalize_replay(&kernel.live_transcript(), &FinalizeOptions { perm: vec![0], ..FinalizeOptions::default() })
            .expect("a replay");
    let text = artifact.to_jsonl();
    let resolve =
        |game: &GameRef| -> Option<Arc<dyn Game>> { (game.id == GAME_ID).then(|| Arc::new(DuelGame) as Arc<dyn Game>) };
    let report = verify_replay(text.as_str(), &resolve, &VerifyOptions::default());
    assert!(report.is_accepted(), "{:?}", report.problems.to_strings());
}

#[test]
fn legal_actions_are_every_affordable_bid_of_the_seats_own_view() {
    let kernel = kernel();
    let actions = DuelGame.legal_actions(&view(&kernel, "red"), "red");
    assert_eq!(actions.len(), 11);
    assert_eq!(actions[10].to_string(), r#"{"bid":10}"#);
    assert!(DuelGame.legal_actions(kernel.full_view(), "red").is_empty(), "the public view has no budget");
}
