//! Issue 26, item 2, against the real `gaos serve`: `POST /v1/replays/frames`
//! no longer lets any token holder exhaust the host's memory. The attack: a
//! spectator token (watch links carry one) posts a ~270 KiB hilo replay
//! whose header names its own level (`handSize: 4000`) and 800 rounds;
//! before, the host built every seat's view of every frame (a 44 MB answer,
//! +613 MB). Now a level the game does not ship is the operator's alone
//! (`403 foreign_level`), and the operator's answer stops at a byte budget
//! (`truncated`).

use std::time::{Duration, Instant};

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// A structurally valid hilo replay of `rounds` rounds at `hand_size` cards.
fn big_hilo_replay(hand_size: u32, rounds: u32) -> String {
    let header = json!({
        "format": "gaos.replay", "formatVersion": "1.3", "kind": "header",
        "game": {"adapter": {"id": "conformance/hilo/reducer", "version": "1"}, "id": "conformance/hilo", "version": "1"},
        "levels": [{"id": "default", "index": 0, "level": {"handSize": hand_size, "maxCard": 9},
                    "result": {"actionsUsed": rounds * 2, "stars": null, "status": "ended"}, "seed": 7}],
        "perm": [0], "seed": 7, "seedPolicy": "explicit", "sessionId": "big-hilo",
        "totals": {"totalActionsUsed": rounds * 2, "totalStars": 0}
    });
    let mut lines = vec![header.to_string()];
    for round in 0..rounds {
        let input = |seat: &str, prefix: &str| {
            json!({"canonicalCommand": "{\"card\":0}", "canonicalId": "Action 1", "cursor": round, "index": 0,
                   "seat": seat, "submissionId": format!("{prefix}-r{round}"), "wireId": "Action 1"})
        };
        let record = json!({"cause": "complete", "inputs": [input("alice", "a"), input("bob", "b")],
                            "kind": "resolution", "levelIndex": 0, "n": round, "tick": round});
        lines.push(record.to_string());
    }
    lines.join("\n") + "\n"
}

#[test]
fn a_spectator_cannot_make_the_host_simulate_a_level_of_its_own_and_the_operator_gets_a_bounded_answer() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    let session = create_session(base, server.operator_token(), &json!({"game": "conformance/hilo"}));
    let replay = big_hilo_replay(4000, 800);
    assert!(replay.len() < 300 * 1024, "the attack's size: {} bytes", replay.len());

    let before = server.peak_rss_kib();
    let started = Instant::now();
    let refused = post_bytes(base, "/v1/replays/frames", Some(&session.spectator), replay.as_bytes());
    assert_error(&refused, 403, "foreign_level");
    assert!(refused.text().contains("operator"), "{}", refused.text());
    assert!(started.elapsed() < Duration::from_secs(2), "refused before any work: {:?}", started.elapsed());
    // A seat's token too: only the operator chooses levels.
    let refused = post_bytes(base, "/v1/replays/frames", Some(session.token("alice")), replay.as_bytes());
    assert_error(&refused, 403, "foreign_level");

    let answer = post_bytes(base, "/v1/replays/frames", Some(server.operator_token()), replay.as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert!(answer.body.len() < 9 * 1024 * 1024, "the answer is bounded: {} bytes", answer.body.len());
    let frames: Value = answer.json();
    assert_eq!(frames["truncated"], json!(true));
    let shown = frames["levels"][0]["frames"].as_array().map_or(0, Vec::len);
    assert!(shown > 0 && shown < 801, "{shown} frames shown");
    let grown_mib = server.peak_rss_kib().saturating_sub(before) / 1024;
    assert!(grown_mib < 300, "the host grew by {grown_mib} MiB for one answer");

    // The game's own level re-simulates for any token of the host.
    let own = big_hilo_replay(3, 3);
    let answer = post_bytes(base, "/v1/replays/frames", Some(&session.spectator), own.as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json()["truncated"], json!(false));
}
