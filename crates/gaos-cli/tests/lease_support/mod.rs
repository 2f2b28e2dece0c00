//! Helpers for the controller-lease end-to-end tests (`tests/lease_*.rs`):
//! lease-aware requests (`Gaos-Lease`, `Gaos-Lease-Epoch`), the test clock,
//! the `gaos.lease` extension events of a transcript, and the gameplay part
//! of a replay (everything but the non-gameplay extension lane).
//!
//! Built on the shared HTTP helpers of `gaos_testkit::http`.

#![allow(dead_code)] // each test binary uses a different subset

use std::time::Duration;

use serde_json::{Value, json};

use gaos_testkit::http::*;

/// The lane every lease event is recorded on.
pub const LEASE_LANE: &str = "gaos.lease";

/// A claim's credentials as the host handed them out (`gaos.host.lease`).
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    pub token: String,
    pub epoch: u64,
}

impl Lease {
    /// The same token presenting another epoch.
    pub fn at_epoch(&self, epoch: u64) -> Lease {
        Lease { token: self.token.clone(), epoch }
    }
}

/// `extensions["gaos.host.lease"]` of a create or attach answer, with a token.
#[track_caller]
pub fn lease_of(answer: &Value) -> Lease {
    let ext = &answer["extensions"]["gaos.host.lease"];
    let token = ext["token"].as_str().unwrap_or_else(|| panic!("the answer carries a lease token: {answer}"));
    assert!(token.starts_with("gaos_lease_"), "lease tokens are prefixed: {ext}");
    let epoch = ext["epoch"].as_u64().unwrap_or_else(|| panic!("the answer carries the lease epoch: {answer}"));
    assert!(ext["expiresAt"].as_i64().is_some(), "the answer carries expiresAt: {ext}");
    assert!(ext["durationMs"].as_u64().is_some(), "the answer carries durationMs: {ext}");
    Lease { token: token.to_owned(), epoch }
}

/// Send a request for `seat` with its bearer token and, when given, a lease.
pub fn send_as(
    base: &str,
    method: &str,
    path: &str,
    bearer: &str,
    lease: Option<&Lease>,
    body: Option<&Value>,
) -> Response {
    let auth = format!("Bearer {bearer}");
    let epoch = lease.map(|l| l.epoch.to_string());
    let mut headers: Vec<(&str, &str)> = vec![("Accept", "application/json"), ("Authorization", &auth)];
    if let (Some(lease), Some(epoch)) = (lease, epoch.as_deref()) {
        headers.push(("Gaos-Lease", &lease.token));
        headers.push(("Gaos-Lease-Epoch", epoch));
    }
    let bytes = body.map(|b| b.to_string().into_bytes());
    if bytes.is_some() {
        headers.push(("Content-Type", "application/json"));
    }
    send(base, method, path, &headers, bytes.as_deref()).unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}

/// `POST /v1/sessions/{id}/{route}` as `seat`, optionally lease-aware.
pub fn seat_post(
    base: &str,
    session: &Session,
    seat: &str,
    route: &str,
    lease: Option<&Lease>,
    body: &Value,
) -> Response {
    send_as(base, "POST", &session.path(route), session.token(seat), lease, Some(body))
}

/// `POST /actions` as `seat`, optionally lease-aware.
pub fn act_as(base: &str, session: &Session, seat: &str, lease: Option<&Lease>, body: &Value) -> Response {
    seat_post(base, session, seat, "actions", lease, body)
}

/// `POST /lease/renew` as `seat`.
pub fn renew(base: &str, session: &Session, seat: &str, lease: Option<&Lease>) -> Response {
    seat_post(base, session, seat, "lease/renew", lease, &json!({}))
}

/// `GET /v1/sessions/{id}/lease` as `seat`; asserts 200.
#[track_caller]
pub fn lease_info(base: &str, session: &Session, seat: &str, lease: Option<&Lease>) -> Value {
    let response = send_as(base, "GET", &session.path("lease"), session.token(seat), lease, None);
    assert_eq!(response.status, 200, "GET /lease: {}", response.text());
    response.json()
}

/// The state `GET /lease` reports for `seat` (as seen by `lease`'s holder).
#[track_caller]
pub fn lease_state(base: &str, session: &Session, seat: &str, lease: Option<&Lease>) -> String {
    lease_info(base, session, seat, lease)["state"].as_str().unwrap_or("none").to_owned()
}

/// Move the host's test clock forward (`--test-clock` hosts).
#[track_caller]
pub fn advance_clock(base: &str, operator: &str, ms: u64) {
    let response = post(base, "/v1/admin/clock", Some(operator), &json!({"advanceMs": ms}));
    assert_eq!(response.status, 200, "POST /v1/admin/clock: {}", response.text());
    assert!(response.json()["nowMs"].as_i64().is_some(), "the clock route answers nowMs");
}

/// The `gaos.lease` records of a transcript's extension events, in order.
pub fn lease_records(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["kind"] == json!("extension") && e["lane"] == json!(LEASE_LANE))
        .map(|e| e["record"].clone())
        .collect()
}

/// The `event` names of lease records.
pub fn kinds(records: &[Value]) -> Vec<String> {
    records.iter().map(|r| r["event"].as_str().unwrap_or("?").to_owned()).collect()
}

/// The operator transcript's lease records.
pub fn session_lease_records(base: &str, operator: &str, session: &Session) -> Vec<Value> {
    lease_records(&transcript(base, operator, session).1)
}

/// Wait (briefly) until the transcript holds `count` lease records of `event`.
/// The host detects lapses eagerly, so no seat call is made meanwhile.
#[track_caller]
pub fn wait_for_lease_event(base: &str, operator: &str, session: &Session, event: &str, count: usize) -> Vec<Value> {
    let mut records = Vec::new();
    wait_until(Duration::from_secs(5), &format!("{count} {event:?} lease event(s)"), || {
        records = session_lease_records(base, operator, session);
        records.iter().filter(|r| r["event"] == json!(event)).count() >= count
    });
    records
}

/// The session's lease records right after an acknowledged clock move,
/// with at least `count` `event`s among them: `POST /v1/admin/clock` answers
/// only once every live session actor has re-checked its deadlines, so a
/// lapse the move caused is already recorded (nothing to wait for).
pub fn recorded_lease_events(base: &str, operator: &str, session: &Session, event: &str, count: usize) -> Vec<Value> {
    let records = session_lease_records(base, operator, session);
    let seen = records.iter().filter(|r| r["event"] == json!(event)).count();
    assert!(
        seen >= count,
        "the acknowledged clock move recorded {count} {event:?} lease event(s), found {seen}: {records:?}"
    );
    records
}

/// The envelope `seat` sees now (its bearer token only: a read never renews).
pub fn envelope_of(base: &str, session: &Session, seat: &str) -> Value {
    tick(base, session, session.token(seat))
}

/// The gameplay of a replay: its header's levels and totals, and every record
/// except the non-gameplay `extension` records, without the record numbers
/// (extension records take numbers too) and host times.
pub fn gameplay(replay: &str) -> Value {
    let mut lines = replay.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a replay header")).expect("header JSON");
    let records: Vec<Value> = lines
        .map(|l| serde_json::from_str::<Value>(l).expect("record JSON"))
        .filter(|r| r["kind"] != json!("extension"))
        .map(|mut r| {
            let map = r.as_object_mut().expect("a record object");
            map.remove("n");
            map.remove("hostTime");
            r
        })
        .collect();
    json!({"levels": header["levels"], "totals": header["totals"], "records": records})
}

/// The `extension` records of a replay (lane and record).
pub fn replay_extensions(replay: &str) -> Vec<Value> {
    replay
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).expect("record JSON"))
        .filter(|r| r["kind"] == json!("extension"))
        .collect()
}

/// Download the replay of a terminal session (asserts 200).
#[track_caller]
pub fn download_replay(base: &str, session: &Session, seat: &str) -> String {
    let response = get(base, &session.path("replay"), Some(session.token(seat)));
    assert_eq!(response.status, 200, "replay download: {}", response.text());
    response.text()
}

/// Timeout events of a transcript naming `seat`.
pub fn timeouts_for(events: &[Value], seat: &str) -> Vec<Value> {
    events.iter().filter(|e| e["kind"] == json!("timeout") && e["participantId"] == json!(seat)).cloned().collect()
}

/// A tictactoe level where `x` moves first.
pub fn tictactoe_level() -> Value {
    json!({"board": ".........", "first": "x"})
}
