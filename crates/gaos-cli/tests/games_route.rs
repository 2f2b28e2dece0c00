//! `GET /v1/games` over real HTTP against `gaos serve`: every kind of token
//! reads the listing, no token reads nothing, and each game says who it is,
//! its seats, levels, default cadence and origin.

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

#[test]
fn every_authenticated_caller_lists_the_games_and_no_one_else_does() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    assert_error(&get(base, "/v1/games", None), 401, "unauthorized");
    assert_error(&get(base, "/v1/games", Some("gaos_seat_not-a-token")), 401, "unauthorized");

    let operator = get(base, "/v1/games", Some(server.operator_token()));
    assert_eq!(operator.status, 200, "{}", operator.text());
    let listing = operator.json();
    let games = listing["games"].as_array().expect("games");
    let ids: Vec<&str> = games.iter().map(|g| g["id"].as_str().expect("id")).collect();
    assert_eq!(
        ids,
        [
            "conformance/counter",
            "conformance/hilo",
            "conformance/race",
            "conformance/sealed",
            "conformance/tictactoe",
            "gaos/maze"
        ]
    );
    let hilo = &games[1];
    assert_eq!(hilo["version"], json!("1"));
    assert_eq!(hilo["adapter"], json!({"id": "conformance/hilo/reducer", "version": "1"}));
    assert_eq!(hilo["seats"], json!(["alice", "bob"]));
    assert_eq!(hilo["cadence"], json!({"mode": "turns"}));
    assert_eq!(hilo["origin"], json!({"kind": "builtin"}));
    assert!(!hilo["description"].as_str().expect("description").is_empty());
    let level = &hilo["levels"][0];
    assert!(level["id"].is_string() && level["level"].is_object(), "levels carry id and level: {level}");

    // Seat and spectator tokens of a session read the same listing.
    let session = create_session(base, server.operator_token(), &json!({"game": "conformance/hilo", "seed": 3}));
    for token in [session.token("alice"), session.token("bob"), session.spectator.as_str()] {
        let seen = get(base, "/v1/games", Some(token));
        assert_eq!(seen.status, 200, "{}", seen.text());
        assert_eq!(seen.json(), listing);
    }
    let wrong_method = post(base, "/v1/games", Some(server.operator_token()), &Value::Null);
    assert_eq!(wrong_method.status, 405);
}
