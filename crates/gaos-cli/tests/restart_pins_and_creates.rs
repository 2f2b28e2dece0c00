//! Pins and creates survive restarts (issue 15, item 6), against the real
//! server process killed and started again over its data directory:
//! - the controller identity the first attach pinned still holds after a
//!   restart: another controller is refused (`409 controller_mismatch`);
//! - a create with a `requestId` is idempotent: an exact retry gets the
//!   byte-identical answer before and after a restart, its tokens work, no
//!   second session is made, and another body under the same `requestId`
//!   is `409 create_request_reused`.

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn session_count(base: &str, op: &str) -> usize {
    let list = get(base, "/v1/sessions", Some(op));
    assert_eq!(list.status, 200, "{}", list.text());
    list.json()["sessions"].as_array().map_or(0, Vec::len)
}

#[test]
fn the_attach_controller_pin_is_restored_after_a_restart() {
    let mut server = TestServer::start(GAOS);
    let session = create_session(&server.base_url, &server.operator_token, &json!({"game": "conformance/hilo"}));
    let first = json!({"kind": "local-agent", "id": "agent-1"});
    let other = json!({"kind": "local-agent", "id": "agent-2"});
    let attach = |base: &str, request: &str, controller: &serde_json::Value| {
        post(
            base,
            &session.path("attach"),
            Some(session.token("bob")),
            &json!({"requestId": request, "controller": controller}),
        )
    };
    let pinned = attach(&server.base_url, "pin", &first);
    assert_eq!(pinned.status, 200, "{}", pinned.text());
    assert_error(&attach(&server.base_url, "before", &other), 409, "controller_mismatch");

    server.kill();
    server.restart();
    assert_error(&attach(&server.base_url, "after", &other), 409, "controller_mismatch");
    let same = attach(&server.base_url, "again", &first);
    assert_eq!(same.status, 200, "the pinned controller still attaches: {}", same.text());
}

#[test]
fn a_create_with_a_request_id_is_idempotent_across_restarts() {
    let mut server = TestServer::start(GAOS);
    let op = server.operator_token.clone();
    let body = json!({"game": "conformance/hilo", "seed": 9, "requestId": "episode-7"});
    let created = post(&server.base_url, "/v1/sessions", Some(&op), &body);
    assert_eq!(created.status, 201, "{}", created.text());
    let retry = post(&server.base_url, "/v1/sessions", Some(&op), &body);
    assert_eq!((retry.status, retry.text()), (201, created.text()), "an exact retry is byte-identical");
    // The same fields in another order are the same canonical body.
    let reordered: serde_json::Value =
        serde_json::from_str(r#"{"requestId":"episode-7","seed":9,"game":"conformance/hilo"}"#).expect("JSON");
    assert_eq!(post(&server.base_url, "/v1/sessions", Some(&op), &reordered).text(), created.text());
    let changed = json!({"game": "conformance/hilo", "seed": 10, "requestId": "episode-7"});
    assert_error(&post(&server.base_url, "/v1/sessions", Some(&op), &changed), 409, "create_request_reused");
    assert_eq!(session_count(&server.base_url, &op), 1, "retries made no second session");

    server.kill();
    server.restart();
    let retry = post(&server.base_url, "/v1/sessions", Some(&op), &body);
    assert_eq!((retry.status, retry.text()), (201, created.text()), "byte-identical after a restart");
    assert_error(&post(&server.base_url, "/v1/sessions", Some(&op), &changed), 409, "create_request_reused");
    assert_eq!(session_count(&server.base_url, &op), 1);

    // The retried answer's tokens are the live credentials.
    let answer = retry.json();
    let id = answer["sessionId"].as_str().expect("id");
    let alice = answer["extensions"]["gaos.host.credentials"]["seats"]["alice"].as_str().expect("alice's token");
    let tick = get(&server.base_url, &format!("/v1/sessions/{id}/tick"), Some(alice));
    assert_eq!(tick.status, 200, "{}", tick.text());

    // A create without requestId is not deduplicated; a bad requestId is refused.
    let plain = json!({"game": "conformance/hilo", "seed": 9});
    assert_eq!(post(&server.base_url, "/v1/sessions", Some(&op), &plain).status, 201);
    assert_eq!(post(&server.base_url, "/v1/sessions", Some(&op), &plain).status, 201);
    assert_eq!(session_count(&server.base_url, &op), 3);
    for bad in [json!(""), json!(7), json!(null), json!("x".repeat(300))] {
        let refused =
            post(&server.base_url, "/v1/sessions", Some(&op), &json!({"game": "conformance/hilo", "requestId": bad}));
        assert_error(&refused, 400, "invalid_request");
    }
    assert_eq!(session_count(&server.base_url, &op), 3, "refused creates made nothing");
}
