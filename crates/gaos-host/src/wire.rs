//! The host's own JSON shapes (beyond the `gaos.ticks` envelopes and the
//! session contract): serde structs, serialized through `gaos_json`, so the
//! canonical bytes are those of the field names below. Absent optional
//! fields are omitted, never `null`.

use std::collections::BTreeMap;

use gaos_json::Value;
use serde::Serialize;

use crate::lease::ClaimState;
use crate::storage::SessionStatus;

/// Serialize a wire shape into a JSON value.
pub(crate) fn value<T: Serialize>(shape: &T) -> Value {
    gaos_json::to_value(shape).expect("host wire shapes are JSON (safe integers, finite numbers)")
}

/// `gaos.host.lease`: the seat's claim (and its token, when just granted).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LeaseExtension {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    pub epoch: u64,
    pub expires_at: i64,
    pub duration_ms: u64,
}

/// `gaos.host.credentials` of a create answer.
#[derive(Debug, Serialize)]
pub(crate) struct Credentials {
    /// Bearer token by seat.
    pub seats: BTreeMap<String, String>,
    pub spectator: String,
}

/// The answer of a stop or an emergency stop.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Revoked<'a> {
    pub session_id: &'a str,
    pub status: &'static str,
    pub reason: &'a str,
}

impl<'a> Revoked<'a> {
    pub(crate) fn new(session_id: &'a str, reason: &'a str) -> Self {
        Revoked { session_id, status: SessionStatus::Revoked.as_str(), reason }
    }
}

/// A spectator stream frame: the full public view.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PublicFrame<'a> {
    pub kind: &'static str,
    pub transition_revision: u64,
    pub tick: u64,
    pub view: &'a Value,
}

/// `POST .../seats/{seat}/token`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReissuedToken<'a> {
    pub session_id: &'a str,
    pub seat: &'a str,
    pub token: String,
}

/// `POST /v1/admin/clock`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClockMoved {
    pub now_ms: i64,
}

/// `GET /v1/sessions`.
#[derive(Debug, Serialize)]
pub(crate) struct SessionList {
    pub sessions: Vec<SessionRow>,
}

/// One stored session; live ones also say where they stand.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionRow {
    pub id: String,
    pub game: String,
    pub created_at: i64,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seats: Option<Vec<String>>,
    /// Per seat: submitted/awaited in the open window and its lease.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat_states: Option<Vec<SeatState>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

/// `GET /v1/admin/reconcile`: what happened to stored sessions at start.
#[derive(Debug, Serialize)]
pub(crate) struct ReconcileReport {
    pub retained: Vec<ClaimRow>,
    pub expired: Vec<ClaimRow>,
    pub failed: Vec<FailedRow>,
    /// How many sessions were loaded.
    pub loaded: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClaimRow {
    pub session_id: String,
    pub seat: String,
    pub epoch: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FailedRow {
    pub session_id: String,
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_keep_their_canonical_bytes() {
        let lease = LeaseExtension { token: None, epoch: 2, expires_at: 1_500, duration_ms: 1_000 };
        assert_eq!(gaos_json::canonical_json(&value(&lease)), r#"{"durationMs":1000,"epoch":2,"expiresAt":1500}"#);
        let revoked = Revoked::new("s", "stopped");
        assert_eq!(
            gaos_json::canonical_json(&value(&revoked)),
            r#"{"reason":"stopped","sessionId":"s","status":"revoked"}"#
        );
        let row = SessionRow {
            id: "s".into(),
            game: "g".into(),
            created_at: 7,
            status: "active",
            cursor: None,
            tick: None,
            seats: None,
            seat_states: None,
            paused: None,
        };
        assert_eq!(gaos_json::canonical_json(&value(&row)), r#"{"createdAt":7,"game":"g","id":"s","status":"active"}"#);
        let report = ReconcileReport {
            retained: vec![ClaimRow { session_id: "s".into(), seat: "a".into(), epoch: 1 }],
            expired: Vec::new(),
            failed: vec![FailedRow { session_id: "t".into(), reason: "why".into() }],
            loaded: 1,
        };
        assert_eq!(
            gaos_json::canonical_json(&value(&report)),
            r#"{"expired":[],"failed":[{"reason":"why","sessionId":"t"}],"loaded":1,"retained":[{"epoch":1,"seat":"a","sessionId":"s"}]}"#
        );
    }
}

/// A seat's part in the open window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowPart {
    /// Its action is in; the window waits for others.
    Submitted,
    /// The window waits for this seat.
    Awaited,
    /// Not this seat's turn (or the game is over).
    Idle,
}

/// Who holds a seat's claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HolderKind {
    /// A lease-unaware caller acting with the seat token (an implicit claim).
    Bearer,
    /// A controller that attached with a lease of its own.
    Controller,
}

/// A seat's current claim.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatLeaseState {
    pub state: ClaimState,
    pub holder: HolderKind,
    pub expires_at: i64,
}

/// One seat, as `GET /v1/sessions/{id}/seats` and the session list show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatState {
    pub seat: String,
    pub window: WindowPart,
    /// `None`: nobody holds the seat.
    pub lease: Option<SeatLeaseState>,
    /// The seat's clock-driven progress is stopped (lapsed claim or a
    /// safety pause).
    pub paused: bool,
}
