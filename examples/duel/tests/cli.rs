//! The duel through its own binary (`duel`, the whole `gaos` command line
//! with one game added): served over real HTTP, two seats play a match to
//! the end, finalize, and the downloaded replay verifies with `duel replay
//! verify`; `duel play` plays one in process; `/v1/games` lists the duel as
//! a crate game beside the built-in ones.

use std::process::Command;

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const DUEL: &str = env!("CARGO_BIN_EXE_duel");

#[test]
fn a_served_duel_is_played_over_http_finalized_and_its_replay_verifies() {
    let server = TestServer::start(DUEL);
    let base = server.base_url();
    let games = get(base, "/v1/games", Some(server.operator_token())).json();
    let duel = games["games"]
        .as_array()
        .expect("games")
        .iter()
        .find(|g| g["id"] == json!("example/duel"))
        .unwrap_or_else(|| panic!("the duel is served: {games}"))
        .clone();
    assert_eq!(duel["origin"], json!({"kind": "crate"}));
    assert_eq!(duel["seats"], json!(["red", "blue"]));
    assert!(games["games"].as_array().expect("games").iter().any(|g| g["id"] == json!("conformance/hilo")));

    let session = create_session(base, server.operator_token(), &json!({"game": "example/duel", "seed": 1}));
    for (round, (red, blue)) in [(6, 2), (1, 5), (3, 2)].into_iter().enumerate() {
        let tag = format!("round-{round}");
        play_simultaneous_window(base, &session, &[("red", json!({"bid": red})), ("blue", json!({"bid": blue}))], &tag);
    }
    // Each seat sees its own budget, the spectator sees none.
    let red_view = &tick(base, &session, session.token("red"))["tick"];
    assert_eq!(red_view["budget"], json!(0), "{red_view}");
    assert_eq!(tick(base, &session, session.token("blue"))["tick"]["budget"], json!(1));
    let public = tick(base, &session, &session.spectator);
    assert!(!public.to_string().contains("budget"), "the public view has no budget: {public}");
    assert_eq!(red_view["status"], json!("ended"));

    let dir = TempDir::new("duel-replay");
    let result = finalize_and_verify(DUEL, base, dir.path(), &session, "red", "duel");
    let ranking = &result["outcome"]["outcome"]["ranking"];
    assert_eq!(ranking[0], json!({"rank": 1, "score": 2, "seat": "red"}), "{result}");
}

#[test]
fn an_over_budget_bid_is_refused_with_the_games_message() {
    let server = TestServer::start(DUEL);
    let base = server.base_url();
    let session = create_session(base, server.operator_token(), &json!({"game": "example/duel"}));
    let envelope = tick(base, &session, session.token("red"));
    let refused = act(base, &session, "red", &submission(&envelope, "red", "too-much", json!({"bid": 11})));
    assert_eq!(refused.status / 100, 4, "{}", refused.text());
    assert!(refused.text().contains("your budget"), "{}", refused.text());
}

#[test]
fn duel_play_runs_a_match_in_process_and_writes_a_verifiable_replay() {
    let dir = TempDir::new("duel-play");
    let replay = dir.path().join("match.gaos-replay.jsonl");
    let output = Command::new(DUEL)
        .args(["play", "--game", "example/duel", "--seed", "9", "--json", "--out"])
        .arg(&replay)
        .output()
        .expect("duel play runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let verified = Command::new(DUEL).args(["replay", "verify", "--json"]).arg(&replay).output().expect("verify runs");
    let report: Value = serde_json::from_slice(&verified.stdout).expect("a JSON report");
    assert_eq!(report["verdict"], json!("accepted-unsigned"), "{report}");
    assert!(verified.status.success());
}
