//! Issue 26, item 5 and the `/mcp` part of item 7, against the real
//! `gaos serve`: MCP sessions are bounded per token and per host (the oldest
//! is closed first; one seat token made 1,500 `initialize` calls in a second
//! before, +131 MB kept for five minutes), and a request from a web page of
//! another origin is refused (`403 forbidden_origin`), as the streamable-HTTP
//! transport requires.

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

fn mcp_post(base: &str, token: &str, session: Option<&str>, origin: Option<&str>, body: &str) -> Response {
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    if let Some(origin) = origin {
        headers.push(("Origin", origin));
    }
    send(base, "POST", "/mcp", &headers, Some(body.as_bytes())).expect("POST /mcp")
}

/// A new MCP session of `token`: its id.
fn initialize(base: &str, token: &str) -> String {
    let answer = mcp_post(base, token, None, None, INITIALIZE);
    assert_eq!(answer.status, 200, "{}", answer.text());
    answer.header("mcp-session-id").expect("a session id").to_owned()
}

/// Whether session `id` still answers.
fn alive(base: &str, token: &str, id: &str) -> bool {
    let answer = mcp_post(base, token, Some(id), None, PING);
    match answer.status {
        200 => true,
        404 => false,
        other => panic!("ping answered {other}: {}", answer.text()),
    }
}

#[test]
fn mcp_sessions_are_bounded_per_token_and_per_host_oldest_first() {
    let server = TestServer::start_with(GAOS, &["--mcp-max-sessions", "6"]);
    let base = server.base_url();
    let session = create_session(base, server.operator_token(), &json!({"game": "conformance/hilo"}));
    let (alice, bob) = (session.token("alice"), session.token("bob"));

    // A flood from one token keeps only its four newest sessions.
    let flood: Vec<String> = (0..40).map(|_| initialize(base, alice)).collect();
    let live: Vec<bool> = flood.iter().map(|id| alive(base, alice, id)).collect();
    assert_eq!(live.iter().filter(|l| **l).count(), 4, "{live:?}");
    assert!(live[36..].iter().all(|l| *l), "the newest four live: {live:?}");

    // Another token's sessions count toward the host's six: the oldest go.
    let bobs: Vec<String> = (0..4).map(|_| initialize(base, bob)).collect();
    assert!(bobs.iter().all(|id| alive(base, bob, id)), "a new token's sessions live");
    let alice_left = flood[36..].iter().filter(|id| alive(base, alice, id)).count();
    assert_eq!(alice_left, 2, "the host keeps six sessions in all");

    // A closed session's client initializes again and drives its seat.
    let again = initialize(base, alice);
    assert!(alive(base, alice, &again));
}

#[test]
fn a_page_of_another_origin_cannot_call_mcp() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    let session = create_session(base, server.operator_token(), &json!({"game": "conformance/hilo"}));
    let token = session.token("alice");
    let refused = mcp_post(base, token, None, Some("http://evil.example:8899"), INITIALIZE);
    assert_error(&refused, 403, "forbidden_origin");
    let own = mcp_post(base, token, None, Some(base), INITIALIZE);
    assert_eq!(own.status, 200, "the host's own origin is served: {}", own.text());
    let no_origin = mcp_post(base, token, None, None, INITIALIZE);
    assert_eq!(no_origin.status, 200, "a client that is not a browser sends no Origin: {}", no_origin.text());
}
