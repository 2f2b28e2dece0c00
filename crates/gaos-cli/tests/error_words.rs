//! Errors in the user's words, through the real `gaos serve` and the real
//! `gaos` binary: a seat acting out of turn hears whose turn it is, an
//! out-of-range tictactoe cell is refused in the command's terms, a stale
//! revision names the revision sent and the one expected, each with its
//! code unchanged; then a sweep of bad commands to every built-in game,
//! out-of-turn and stale acts, and bad command lines, none of whose
//! messages may show an internal name (`gaos_testkit::words`).

use std::process::Command;

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use gaos_testkit::words::assert_users_words;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// The `error` text of a refused act, after checking status and code.
#[track_caller]
fn refused(response: &Response, status: u16, code: &str) -> String {
    assert_error(response, status, code);
    response.json()["error"].as_str().expect("error text").to_owned()
}

#[test]
fn out_of_turn_out_of_range_and_stale_acts_say_what_to_do() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    let session = create_session(base, server.operator_token(), &json!({"game": "conformance/tictactoe"}));
    let envelope = tick(base, &session, session.token("o"));
    assert_eq!(envelope["tick"]["toMove"], json!("x"), "x moves first on the default level: {envelope}");

    let out_of_turn = act(base, &session, "o", &submission(&envelope, "o", "o-1", json!({"cell": 4})));
    assert_eq!(refused(&out_of_turn, 409, "unknown_participant"), "it is x's turn; o moves after x");

    let off_board = act(base, &session, "x", &submission(&envelope, "x", "x-1", json!({"cell": 9})));
    assert_eq!(
        refused(&off_board, 422, "illegal_command"),
        r#"the game refused {"cell":9}: that is not a cell on the board: a move is {"cell": C} with C a free cell from 0 to 8"#
    );

    let mut ahead = submission(&envelope, "x", "x-2", json!({"cell": 4}));
    ahead["revision"] = json!(5);
    ahead["tickId"] = json!(format!("{}:5", session.id));
    let tick_id = envelope["tickId"].as_str().expect("tickId");
    assert_eq!(
        refused(&act(base, &session, "x", &ahead), 409, "stale_tick"),
        format!(
            "the submission is for revision 5, but the session is at revision 0 (tickId {tick_id:?}): \
             observe again and act at revision 0"
        )
    );

    // x moves; o acting on the old window is told the revision to use now.
    let moved = act(base, &session, "x", &submission(&envelope, "x", "x-3", json!({"cell": 4})));
    assert_eq!(moved.status, 200, "{}", moved.text());
    let now = moved.json()["revision"].as_u64().expect("revision");
    let stale =
        refused(&act(base, &session, "o", &submission(&envelope, "o", "o-2", json!({"cell": 0}))), 409, "stale_tick");
    assert!(
        stale.starts_with(&format!("the submission is for revision 0, but the session is at revision {now} ")),
        "{stale}"
    );
    let taken = tick(base, &session, session.token("o"));
    let on_taken = act(base, &session, "o", &submission(&taken, "o", "o-3", json!({"cell": 4})));
    assert_eq!(
        refused(&on_taken, 422, "illegal_command"),
        r#"the game refused {"cell":4}: cell 4 is taken: choose a free cell"#
    );
    // And x, now out of turn, hears it is o's.
    let x_again = act(base, &session, "x", &submission(&taken, "x", "x-4", json!({"cell": 0})));
    assert_eq!(refused(&x_again, 409, "unknown_participant"), "it is o's turn; x moves after o");
}

#[test]
fn a_card_not_in_the_hand_names_the_card_and_the_hand() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    let session = create_session(base, server.operator_token(), &json!({"game": "conformance/hilo", "seed": 4}));
    let envelope = tick(base, &session, session.token("alice"));
    let held = envelope["tick"]["legalActions"].as_array().expect("legal actions").len();
    assert!(held > 0, "{envelope}");
    let answer = act(base, &session, "alice", &submission(&envelope, "alice", "a-1", json!({"card": 7})));
    assert_eq!(
        refused(&answer, 422, "illegal_command"),
        format!(r#"the game refused {{"card":7}}: card 7 is not in the hand: play a card from 0 to {}"#, held - 1)
    );
}

/// Commands each built-in game refuses, of every kind: wrong shapes, wrong
/// types, out-of-range values.
fn bad_commands() -> Vec<Value> {
    vec![
        json!("x"),
        json!(null),
        json!([]),
        json!({}),
        json!({"cell": 9}),
        json!({"cell": -1}),
        json!({"cell": 2.5}),
        json!({"card": 99}),
        json!({"card": -1}),
        json!({"card": "ace"}),
        json!({"n": "one"}),
        json!({"move": "up"}),
        json!({"commit": 5}),
        json!({"reveal": {"salt": 1}}),
        json!({"reveal": {"salt": "s", "bid": 1}}),
    ]
}

#[test]
fn no_refusal_of_any_built_in_game_shows_an_internal_name() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    let listing = get(base, "/v1/games", Some(server.operator_token())).json();
    let mut checked = 0;
    for game in listing["games"].as_array().expect("games") {
        let id = game["id"].as_str().expect("id");
        let session = create_session(base, server.operator_token(), &json!({"game": id, "seed": 7}));
        for seat in game["seats"].as_array().expect("seats").iter().map(|s| s.as_str().expect("seat")) {
            let envelope = tick(base, &session, session.token(seat));
            for (i, command) in bad_commands().into_iter().enumerate() {
                let answer =
                    act(base, &session, seat, &submission(&envelope, seat, &format!("bad-{i}"), command.clone()));
                if answer.is_success() {
                    continue; // a command this game takes (it moved on; later ones meet a new window)
                }
                let text = answer.json()["error"].as_str().unwrap_or_default().to_owned();
                assert!(!text.is_empty(), "{id} {seat} {command}: {}", answer.text());
                assert_users_words(&format!("{id}: {seat} sends {command}"), &text);
                checked += 1;
            }
            let mut stale = submission(&envelope, seat, "stale", json!({}));
            stale["revision"] = json!(1000);
            let answer = act(base, &session, seat, &stale);
            assert_users_words(&format!("{id}: {seat} at revision 1000"), &answer.text());
            checked += 1;
        }
    }
    assert!(checked >= 6 * 10, "the sweep reached every game: {checked} refusals");
}

/// Run `gaos ARGS`; its exit code and stderr.
fn gaos(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut command = Command::new(GAOS);
    command.args(args).env_remove("GAOS_OPERATOR_TOKEN").env_remove("GAOS_HOST").env_remove("GAOS_SEAT_TOKEN");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap_or_else(|e| panic!("gaos {args:?}: {e}"));
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// `gaos session act` arguments: `seat` of `session` sends `command`.
fn session_act<'a>(base: &'a str, session: &'a Session, seat: &'a str, command: &'a str) -> Vec<&'a str> {
    let token = session.token(seat);
    vec!["session", "act", "--host", base, "--session", &session.id, "--seat", seat, "--token", token, command]
}

#[test]
fn the_command_line_says_the_hosts_words_and_its_own() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    let session = create_session(base, server.operator_token(), &json!({"game": "conformance/tictactoe"}));
    let (code, stderr) = gaos(&session_act(base, &session, "o", r#"{"cell":4}"#), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("it is x's turn; o moves after x"), "{stderr}");
    assert!(stderr.contains("unknown_participant"), "the code is named too: {stderr}");
    assert_users_words("gaos session act out of turn", &stderr);

    let scratch = TempDir::new("error-words");
    let missing = scratch.path().join("missing");
    let missing = missing.to_str().expect("utf-8 path");
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("an unknown game to play", vec!["play", "--game", "no/such-game"]),
        ("a seat the game lacks", vec!["play", "--game", "conformance/hilo", "--seat", "carol", "--driver", "random"]),
        ("a driver that does not exist", vec!["play", "--game", "conformance/hilo", "--driver", "clever"]),
        (
            "an unknown game to create",
            vec![
                "session",
                "new",
                "--host",
                base,
                "--game",
                "no/such-game",
                "--operator-token",
                server.operator_token(),
            ],
        ),
        ("a command that is not JSON", session_act(base, &session, "x", "{cell: 4}")),
        (
            "a session that does not exist",
            vec!["session", "observe", "--host", base, "--session", "nope", "--token", session.token("x")],
        ),
        ("a replay that is not there", vec!["replay", "verify", missing]),
        ("a game module that is not there", vec!["games", "--game", missing]),
        ("a bundle that is not there", vec!["bench", "verify", missing]),
        ("a script that is not there", vec!["conformance", "run", missing, "--out", missing]),
        ("mcp without a seat token", vec!["mcp", "--session", "s", "--seat", "x"]),
        ("loadgen without the operator token", vec!["loadgen", "--host", base]),
        ("an address that is not one", vec!["serve", "--listen", "nowhere", "--data", missing]),
        ("an unknown flag", vec!["games", "--colour"]),
    ];
    for (case, args) in cases {
        let (code, stderr) = gaos(&args, &[]);
        assert!(code.is_some_and(|c| c != 0), "{case}: gaos {args:?} must fail: {stderr}");
        assert!(!stderr.trim().is_empty(), "{case}: a failure says why");
        assert_users_words(case, &stderr);
    }
}
