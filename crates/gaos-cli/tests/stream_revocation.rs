//! Issue 26, item 4, against the real `gaos serve`: a seat's open SSE
//! stream ends when its credentials change. Rotating a seat token
//! (`POST …/seats/{seat}/token`, the answer to a leaked token) ends every
//! stream the old token opened, with a last `revoked` event and before any
//! later delta of the seat reaches it; revoking the session (emergency stop,
//! a seat's stop) ends every stream of the session, the spectator's too.

use std::time::Duration;

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn open(base: &str, session: &Session, token: &str) -> SseReader {
    let stream = SseReader::open(base, &session.path("stream"), token);
    stream.wait_until_open(Duration::from_secs(5));
    // The first event (the seat's snapshot, or the public frame) is there.
    wait_until(Duration::from_secs(5), "the stream's first event", || !stream.events().is_empty());
    stream
}

/// One simultaneous counter window: each seat adds `n`, with its own token.
fn round(base: &str, session: &Session, tokens: &[(&str, &str)], tag: &str) {
    for (seat, token) in tokens {
        let envelope = get(base, &session.path("tick"), Some(token)).json();
        let body = submission(&envelope, seat, &format!("{seat}-{tag}"), json!({"n": 1}));
        let answer = post(base, &session.path("actions"), Some(token), &body);
        assert!(answer.is_success(), "{seat}: {}", answer.text());
    }
}

#[test]
fn rotating_a_seat_token_ends_the_streams_the_old_token_opened() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    let operator = server.operator_token();
    let session = create_session(base, operator, &json!({"game": "conformance/counter"}));
    let old_stream = open(base, &session, session.token("a"));
    let other_seat = open(base, &session, session.token("b"));

    let rotated = post(base, &session.path("seats/a/token"), Some(operator), &json!({}));
    assert_eq!(rotated.status, 200, "{}", rotated.text());
    let new_token = rotated.json()["token"].as_str().expect("the new token").to_owned();
    wait_until(Duration::from_secs(3), "the old token's stream to end", || old_stream.is_closed());

    // The seat plays on with its new token; nothing of it reaches the old stream.
    round(base, &session, &[("a", &new_token), ("b", session.token("b"))], "after");
    wait_until(Duration::from_secs(5), "seat b's delta", || other_seat.events().len() >= 2);
    let (_, events) = old_stream.stop();
    let last = events.last().expect("events");
    assert_eq!(last.event, "revoked", "{events:?}");
    let last_body: Value = serde_json::from_str(&last.data).expect("JSON");
    assert_eq!(last_body["code"], json!("unauthorized"));
    let deltas: Vec<&SseEvent> = events.iter().filter(|e| e.event == "delta").collect();
    assert_eq!(deltas.len(), 1, "only the snapshot from before the rotation: {events:?}");
    assert!(!other_seat.is_closed(), "another seat's stream is untouched");

    // The old token opens nothing any more; the new one streams.
    let refused = get(base, &session.path("stream"), Some(session.token("a")));
    assert_error(&refused, 401, "unauthorized");
    let renewed = open(base, &session, &new_token);
    assert!(!renewed.is_closed());
}

#[test]
fn revoking_the_session_ends_every_stream_of_it() {
    let server = TestServer::start(GAOS);
    let base = server.base_url();
    let operator = server.operator_token();
    for how in ["emergency-stop", "stop"] {
        let session = create_session(base, operator, &json!({"game": "conformance/counter"}));
        let streams = [
            open(base, &session, session.token("a")),
            open(base, &session, session.token("b")),
            open(base, &session, &session.spectator),
        ];
        let answer = match how {
            "emergency-stop" => post(base, &session.path("emergency-stop"), Some(operator), &json!({"reason": "test"})),
            _ => post(base, &session.path("stop"), Some(session.token("b")), &json!({"reason": "leaving"})),
        };
        assert_eq!(answer.status, 200, "{how}: {}", answer.text());
        for stream in &streams {
            wait_until(Duration::from_secs(3), &format!("{how} to end the streams"), || stream.is_closed());
        }
        for stream in streams {
            let (_, events) = stream.stop();
            assert!(events.iter().any(|e| e.event == "lease"), "{how}: the revocation reached the stream: {events:?}");
        }
    }
}
