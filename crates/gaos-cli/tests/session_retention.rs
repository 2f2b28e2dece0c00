//! Issue 18 item 7, retention: `gaos serve --retention-ms` keeps a session
//! that long after its creation; then every route of it answers the typed
//! `410 expired`, also after a restart, and a create must not name another
//! retention policy than the host's. The clock moves with `--test-clock`.

use gaos_testkit::http::{assert_error, create_session, get, post};
use gaos_testkit::server::TestServer;
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn advance(server: &TestServer, ms: u64) {
    let moved = post(&server.base_url, "/v1/admin/clock", Some(&server.operator_token), &json!({"advanceMs": ms}));
    assert_eq!(moved.status, 200, "{}", moved.text());
}

#[test]
fn a_session_past_the_retention_answers_expired_on_every_route() {
    let mut server = TestServer::start_with(
        GAOS,
        &["--test-clock", "--retention-ms", "60000", "--retention-policy-id", "keep-a-minute"],
    );
    let policy = json!({"evaluation":{"kind":"none"},
        "durability":{"attachable":true,"retention":{"kind":"host-policy","policyId":"keep-a-minute"}},
        "evidence":{"kind":"replay"},"publication":{"kind":"none"}});
    let session = create_session(
        &server.base_url,
        &server.operator_token,
        &json!({"game": "conformance/counter", "policy": policy}),
    );
    let tick = get(&server.base_url, &session.path("tick"), Some(session.token("a")));
    assert_eq!(tick.status, 200, "young sessions are served: {}", tick.text());

    advance(&server, 59_000);
    assert_eq!(get(&server.base_url, &session.path("tick"), Some(session.token("a"))).status, 200);
    advance(&server, 1_000);
    let attach = json!({"requestId": "late"});
    for response in [
        get(&server.base_url, &session.path("tick"), Some(session.token("a"))),
        post(&server.base_url, &session.path("attach"), Some(session.token("b")), &attach),
        post(&server.base_url, &session.path("finalize"), Some(session.token("a")), &json!({"requestId": "f"})),
        get(&server.base_url, &session.path("transcript"), Some(&server.operator_token)),
    ] {
        assert_error(&response, 410, "expired");
        assert!(response.text().contains("retention"), "{}", response.text());
    }
    // A session created now is young again.
    let fresh = create_session(&server.base_url, &server.operator_token, &json!({"game": "conformance/counter"}));
    assert_eq!(get(&server.base_url, &fresh.path("tick"), Some(fresh.token("a"))).status, 200);

    // A rehydrated session ages from its stored creation time too (the test
    // clock starts at the wall clock again after a restart).
    server.restart();
    advance(&server, 60_000);
    assert_error(&get(&server.base_url, &session.path("tick"), Some(session.token("a"))), 410, "expired");
}

#[test]
fn a_create_naming_another_retention_policy_is_refused() {
    let server = TestServer::start_with(GAOS, &["--retention-ms", "60000"]);
    let policy = json!({"evaluation":{"kind":"none"},
        "durability":{"attachable":true,"retention":{"kind":"host-policy","policyId":"keep-for-ever"}},
        "evidence":{"kind":"replay"},"publication":{"kind":"none"}});
    let refused = post(
        &server.base_url,
        "/v1/sessions",
        Some(&server.operator_token),
        &json!({"game": "conformance/counter", "policy": policy}),
    );
    assert_error(&refused, 400, "unknown_retention_policy");
    assert!(refused.text().contains("gaos.host.retention.v1"), "names the host's policy: {}", refused.text());
}
