//! A seat that did not finalize reads the finalized result (issue 18, item
//! 7): `GET /v1/sessions/{id}/result` answers the stored `SessionResult`
//! byte for byte to any reader of the session, before and after a host
//! restart, while a second finalize with another request id stays a
//! `finalize_conflict` (lifecycle.md, host rules for finalize).

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const ROUNDS: u64 = 2;

#[test]
fn any_reader_of_the_session_reads_the_result_the_first_finalize_fixed() {
    let mut server = TestServer::start(GAOS);
    let (base, op) = (server.base_url.clone(), server.operator_token.clone());
    let session = create_session(
        &base,
        &op,
        &json!({"game": "conformance/hilo", "seed": 6, "level": {"handSize": ROUNDS, "maxCard": 1000}}),
    );
    let other = create_session(&base, &op, &json!({"game": "conformance/hilo", "seed": 6}));
    let result_of = |token: &str| get(&base, &session.path("result"), Some(token));
    assert_error(&result_of(session.token("bob")), 409, "not_finalized");
    for round in 0..ROUNDS {
        let moves = [("alice", json!({"card": 0})), ("bob", json!({"card": 0}))];
        play_simultaneous_window(&base, &session, &moves, &format!("r{round}"));
    }
    assert_error(&result_of(session.token("bob")), 409, "not_finalized");

    let finalized =
        post(&base, &session.path("finalize"), Some(session.token("alice")), &json!({"requestId": "alice-1"}));
    assert_eq!(finalized.status, 200, "{}", finalized.text());
    assert_eq!(finalized.json()["status"], json!("finalized"));
    // The result says per seat whether its moves were signed (issue 30): here none was.
    assert_eq!(
        finalized.json()["extensions"]["gaos.session.signatures"],
        json!({"state": "unsigned", "problems": [], "seats": [
            {"seat": "alice", "signed": false}, {"seat": "bob", "signed": false}]})
    );
    // bob finalizing with his own request id is refused, as the spec says ...
    let conflict = post(&base, &session.path("finalize"), Some(session.token("bob")), &json!({"requestId": "bob-1"}));
    assert_error(&conflict, 409, "finalize_conflict");
    // ... and he reads the result alice fixed, byte for byte, like every reader.
    for token in [session.token("bob"), session.token("alice"), session.spectator.as_str(), op.as_str()] {
        let read = result_of(token);
        assert_eq!((read.status, read.text()), (200, finalized.text()), "the stored result");
    }
    assert_error(&result_of(other.token("alice")), 403, "forbidden");

    server.restart();
    let read = get(&server.base_url, &session.path("result"), Some(session.token("bob")));
    assert_eq!((read.status, read.text()), (200, finalized.text()), "the result survives a restart");
}
