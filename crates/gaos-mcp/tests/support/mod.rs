//! A real host for the seat-tool tests: `gaos-host` over SQLite in a temp
//! directory, with the adjustable test clock, serving its HTTP API on a
//! loopback port; sessions are created in process as the operator and the
//! seats attached over HTTP exactly as `gaos mcp` attaches them.

#![allow(dead_code)] // each test binary uses a different subset

use std::sync::Arc;
use std::time::Duration;

use gaos_host::auth::Caller;
use gaos_host::handle::open_local_host;
use gaos_host::{Host, HostOptions};
use gaos_json::{Value, canonical_json};
use gaos_mcp::remote::{LeaseMode, RemoteSeat, SeatOptions};
use gaos_mcp::{SeatSession, ToolOutput, call_tool};
use gaos_testkit::server::TempDir;

pub fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

pub struct TestHost {
    pub host: Host,
    pub base_url: String,
    _dir: TempDir,
}

/// A host with the test clock, serving HTTP on 127.0.0.1.
pub async fn start_host() -> TestHost {
    let dir = TempDir::new("gaos-mcp");
    let host = open_local_host(
        dir.path(),
        HostOptions { test_clock: true, ..HostOptions::new(gaos_games::GameRegistry::builtin()) },
    )
    .await
    .expect("a host over SQLite");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let address = listener.local_addr().expect("the bound address");
    let router = gaos_host::http::router(host.clone());
    tokio::spawn(async move { axum::serve(listener, router).await });
    TestHost { host, base_url: format!("http://{address}"), _dir: dir }
}

/// A created session: its id, seat tokens and the creator's lease token.
pub struct Created {
    pub session_id: String,
    pub answer: Value,
}

impl Created {
    pub fn seat_token(&self, seat: &str) -> String {
        let path = ["extensions", "gaos.host.credentials", "seats", seat];
        at(&self.answer, &path).as_str().expect("a seat token").to_owned()
    }

    pub fn creator_lease(&self) -> String {
        at(&self.answer, &["extensions", "gaos.host.lease", "token"]).as_str().expect("the creator's lease").to_owned()
    }
}

/// `value[key]` for test JSON (Null when absent).
pub fn at<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    static NULL: Value = Value::Null;
    let mut current = value;
    for key in path {
        current = current.get(key).unwrap_or(&NULL);
    }
    current
}

impl TestHost {
    /// Create a session as the operator.
    pub async fn create(&self, request: &str) -> Created {
        let answer = self.host.create(&Caller::Operator, json(request)).await.expect("create");
        let answer = json(&answer.body);
        let session_id = answer.get("sessionId").and_then(Value::as_str).expect("a session id").to_owned();
        Created { session_id, answer }
    }

    /// Attach `seat` the way `gaos mcp` does.
    pub async fn attach(&self, created: &Created, seat: &str, lease: LeaseMode) -> Arc<dyn SeatSession> {
        Arc::new(self.try_attach(created, seat, lease).await.expect("attach"))
    }

    pub async fn try_attach(
        &self,
        created: &Created,
        seat: &str,
        lease: LeaseMode,
    ) -> Result<RemoteSeat, gaos_session::SessionError> {
        RemoteSeat::attach(SeatOptions {
            host_url: self.base_url.clone(),
            session_id: created.session_id.clone(),
            seat: seat.to_owned(),
            seat_token: created.seat_token(seat),
            lease,
            keep_alive: false,
            signing_key: None,
        })
        .await
    }

    /// The number of durable events of a session (what "nothing changed" compares).
    pub async fn event_count(&self, session_id: &str) -> usize {
        let text = self.host.transcript(&Caller::Operator, session_id).await.expect("transcript");
        text.lines().count()
    }

    /// The `gaos.lease` records of the transcript.
    pub async fn lease_records(&self, session_id: &str) -> Vec<Value> {
        let text = self.host.transcript(&Caller::Operator, session_id).await.expect("transcript");
        text.lines()
            .map(json)
            .filter(|e| e.get("kind").and_then(Value::as_str) == Some("extension"))
            .filter(|e| e.get("lane").and_then(Value::as_str) == Some("gaos.lease"))
            .filter_map(|e| e.get("record").cloned())
            .collect()
    }

    pub async fn advance_clock(&self, ms: i64) {
        self.host.advance_clock(&Caller::Operator, ms).await.expect("the test clock moves");
    }
}

/// Call a tool with JSON arguments (text; `""` for none).
pub async fn call(seat: &dyn SeatSession, tool: &str, arguments: &str) -> ToolOutput {
    let arguments: Option<serde_json::Map<String, serde_json::Value>> = if arguments.is_empty() {
        None
    } else {
        Some(serde_json::from_str(arguments).expect("tool arguments are a JSON object"))
    };
    call_tool(seat, tool, arguments.as_ref()).await
}

/// Call a tool that must succeed.
#[track_caller]
pub fn ok(output: ToolOutput) -> ToolOutput {
    assert!(!output.is_error, "the tool failed:\n{}", output.text);
    output
}

/// A structured field of a tool output.
pub fn field<'a>(output: &'a ToolOutput, path: &[&str]) -> &'a Value {
    static NULL: Value = Value::Null;
    match path.split_first() {
        None => &NULL,
        Some((first, rest)) => at(output.structured.get(*first).unwrap_or(&NULL), rest),
    }
}

/// The seat's own hand in an observation output.
pub fn hand(output: &ToolOutput) -> Vec<u64> {
    field(output, &["view", "hand"])
        .as_array()
        .map(|h| h.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// Every card of the history an output shows (played cards are public).
pub fn played(output: &ToolOutput) -> Vec<u64> {
    let mut cards = Vec::new();
    for round in field(output, &["view", "history"]).as_array().map(Vec::as_slice).unwrap_or_default() {
        for seat in ["alice", "bob"] {
            if let Some(card) = round.get(seat).and_then(Value::as_u64) {
                cards.push(card);
            }
        }
    }
    cards
}

/// True when `text` holds `n` as a whole number (not inside a longer run of
/// letters or digits: timestamps, hashes and ids do not count).
pub fn mentions_number(text: &str, n: u64) -> bool {
    let needle = n.to_string();
    let bytes = text.as_bytes();
    text.match_indices(&needle).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + needle.len()).copied();
        !before.is_some_and(|b| b.is_ascii_alphanumeric()) && !after.is_some_and(|b| b.is_ascii_alphanumeric())
    })
}

/// The information boundary: no card the other seat still holds (and has
/// not played in this output's history) appears in `output`.
#[track_caller]
pub fn assert_hides(output: &ToolOutput, other_hand: &[u64], other: &str) {
    let everything = format!("{}\n{}", output.text, canonical_json(&Value::Object(output.structured.clone())));
    let public = played(output);
    for card in other_hand.iter().filter(|c| !public.contains(c)) {
        assert!(
            !mentions_number(&everything, *card),
            "a tool result shows card {card} of {other}'s hidden hand:\n{everything}"
        );
    }
    assert!(!everything.contains("\"hands\""), "a tool result carries the full state's hands:\n{everything}");
}

/// Wait (bounded) until `seat`'s lease is in `state`.
pub async fn wait_for_lease_state(seat: &dyn SeatSession, state: &str) {
    for _ in 0..250 {
        let status = ok(call(seat, "status", "").await);
        if field(&status, &["lease", "state"]).as_str() == Some(state) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the lease of {} never became {state}", seat.handle().seat());
}
