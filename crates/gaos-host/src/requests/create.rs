//! `POST /v1/sessions`: the create request.

use gaos_json::{Map, Value};
use gaos_kernel::protocol::is_valid_participant_id;
use gaos_kernel::{Cadence, SessionLimits};
use gaos_session::policy::SessionPolicy;

use super::FromBody;
use crate::answers::fingerprint;
use crate::config::{LeaseBounds, ReceiptMode, Timeouts};
use crate::error::HostError;

/// Longest accepted create `requestId`.
const MAX_REQUEST_ID_BYTES: usize = 256;

/// Every field a create may carry.
const FIELDS: [&str; 21] = [
    "game",
    "requestId",
    "sessionId",
    "levelId",
    "levelVersion",
    "level",
    "seats",
    "participantId",
    "seed",
    "cadence",
    "timeouts",
    "receipts",
    "policy",
    "limits",
    "lease",
    "run",
    "manifest",
    "seatKeys",
    "seatKeysAtAttach",
    "signaturePolicy",
    "timeoutPolicy",
];

/// The fields of RFC-010 signed play, read against the session's seats,
/// cadence and game once those are known (`signing::parse_create_signing`).
const SIGNING_FIELDS: [&str; 4] = ["seatKeys", "seatKeysAtAttach", "signaturePolicy", "timeoutPolicy"];

/// The `lease` of a create or attach: a claim asked for, `{}` (the host's
/// default duration) or `{"durationMs": N}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LeaseAsk {
    pub duration_ms: Option<u64>,
}

impl LeaseAsk {
    pub(crate) fn from_value(value: &Value) -> Result<Self, HostError> {
        let map = value.as_object().ok_or_else(|| bad("lease must be an object like {\"durationMs\": N}"))?;
        if let Some(key) = map.keys().find(|k| k.as_str() != "durationMs") {
            return Err(bad(format!("unknown lease field {key:?} (known: durationMs)")));
        }
        let duration_ms = match map.get("durationMs") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| bad("lease.durationMs must be a non-negative integer"))?),
        };
        Ok(LeaseAsk { duration_ms })
    }

    /// The asked duration within this host's `bounds` (`None`: the default).
    pub(crate) fn duration(&self, bounds: &LeaseBounds) -> Result<Option<u64>, HostError> {
        self.duration_ms.map(|ms| bounds.check(ms).map_err(HostError::invalid_request)).transpose()
    }
}

/// A create request, every field of its documented shape checked. What
/// belongs to the game (its `level`, a `run`'s levels: only the game can
/// read them) or to another contract (a benchmark `manifest`) stays JSON
/// until the create reads it against the game (`host/create_config.rs`).
#[derive(Debug, Clone)]
pub struct CreateRequest {
    pub(crate) game: String,
    /// Makes the create idempotent (`host/create_request.rs`).
    pub(crate) request_id: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) level_id: Option<String>,
    /// A string or a number (read only with an explicit `level`).
    pub(crate) level_version: Option<Value>,
    /// The game's level (opaque to the host).
    pub(crate) level: Option<Value>,
    /// Seat ids, valid and distinct.
    pub(crate) seats: Option<Vec<String>>,
    /// The creator seat.
    pub(crate) participant_id: Option<String>,
    pub(crate) seed: Option<u32>,
    pub(crate) cadence: Option<Cadence>,
    pub(crate) limits: Option<SessionLimits>,
    pub(crate) timeouts: Option<Timeouts>,
    pub(crate) receipts: Option<ReceiptMode>,
    pub(crate) policy: Option<SessionPolicy>,
    /// The creator's claim, when asked for.
    pub(crate) lease: Option<LeaseAsk>,
    /// A multi-level run (read against the game's levels).
    pub(crate) run: Option<Value>,
    /// The benchmark manifest an official evaluation is bound to.
    pub(crate) manifest: Option<Value>,
    /// RFC-010 signed play: the create's `seatKeys`, `seatKeysAtAttach`,
    /// `signaturePolicy` and `timeoutPolicy` as sent (see [`SIGNING_FIELDS`]).
    pub(crate) signing: Map,
    /// SHA-256 of the body's canonical JSON (a `requestId`'s exact retry).
    pub(crate) fingerprint: String,
}

fn bad(message: impl Into<String>) -> HostError {
    HostError::invalid_request(message)
}

impl CreateRequest {
    /// Read and check a create body.
    pub fn from_value(body: Value) -> Result<Self, HostError> {
        let map = body.as_object().ok_or_else(|| bad("the create body must be a JSON object"))?;
        if let Some(key) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(bad(format!("unknown create field {key:?} (known: {})", FIELDS.join(", "))));
        }
        let request_id = match map.get("requestId") {
            None => None,
            Some(Value::String(id)) if !id.trim().is_empty() && id.len() <= MAX_REQUEST_ID_BYTES => Some(id.clone()),
            Some(_) => {
                return Err(bad(format!(
                    "requestId must be a non-blank string of at most {MAX_REQUEST_ID_BYTES} bytes"
                )));
            }
        };
        let game = map
            .get("game")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("create needs \"game\": the id of a game this host serves"))?
            .to_owned();
        let session_id = match map.get("sessionId") {
            None => None,
            Some(Value::String(id)) if is_valid_participant_id(id) => Some(id.clone()),
            Some(_) => return Err(bad("sessionId must match ^[A-Za-z0-9_.:@-]{1,128}$")),
        };
        if map.contains_key("run") && (map.contains_key("levelId") || map.contains_key("level")) {
            return Err(bad("a create names its levels either in run.levels or in levelId/level, not both"));
        }
        let level = map.get("level").cloned();
        let level_id = match map.get("levelId") {
            None => None,
            Some(Value::String(id)) if level.is_none() || !id.is_empty() => Some(id.clone()),
            Some(_) if level.is_some() => return Err(bad("levelId must be a non-empty string")),
            Some(_) => return Err(bad("levelId must be a string")),
        };
        let level_version = map.get("levelVersion").cloned();
        if level.is_some()
            && let Some(v) = &level_version
            && !matches!(v, Value::String(_) | Value::Number(_))
        {
            return Err(bad("levelVersion must be a string or a number"));
        }
        let seats = map.get("seats").map(read_seats).transpose()?;
        let participant_id = match map.get("participantId") {
            None => None,
            Some(Value::String(seat)) => Some(seat.clone()),
            Some(_) => return Err(bad("participantId must be a seat id (a string)")),
        };
        let seed = match map.get("seed") {
            None => None,
            Some(v) => Some(v.as_u32().ok_or_else(|| bad("seed must be an integer in 0..=4294967295"))?),
        };
        let cadence = map.get("cadence").map(Cadence::from_value).transpose().map_err(bad)?;
        let limits = map.get("limits").map(SessionLimits::from_value).transpose().map_err(bad)?;
        let timeouts = map.get("timeouts").map(read_timeouts).transpose()?;
        let receipts = match map.get("receipts") {
            None => None,
            Some(v) => Some(
                v.as_str()
                    .and_then(ReceiptMode::parse)
                    .ok_or_else(|| bad("receipts must be \"chained\" or \"unlinked\""))?,
            ),
        };
        let policy = map.get("policy").map(SessionPolicy::from_value).transpose().map_err(bad)?;
        let lease = map.get("lease").map(LeaseAsk::from_value).transpose()?;
        let signing: Map = map
            .iter()
            .filter(|(k, _)| SIGNING_FIELDS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if (signing.contains_key("seatKeys") || signing.contains_key("seatKeysAtAttach"))
            != signing.contains_key("signaturePolicy")
        {
            return Err(bad("seatKeys (or seatKeysAtAttach) and signaturePolicy come together (RFC-010 signed play)"));
        }
        Ok(CreateRequest {
            game,
            request_id,
            session_id,
            level_id,
            level_version,
            level,
            seats,
            participant_id,
            seed,
            cadence,
            limits,
            timeouts,
            receipts,
            policy,
            lease,
            run: map.get("run").cloned(),
            manifest: map.get("manifest").cloned(),
            signing,
            fingerprint: fingerprint(&body),
        })
    }
}

/// `seats`: an array of distinct seat ids, at least one.
fn read_seats(value: &Value) -> Result<Vec<String>, HostError> {
    let Value::Array(items) = value else { return Err(bad("seats must be an array of seat ids")) };
    let seats: Vec<String> = items
        .iter()
        .map(|s| s.as_str().map(str::to_owned).ok_or_else(|| bad("seats must be strings")))
        .collect::<Result<_, _>>()?;
    check_seats(&seats)?;
    Ok(seats)
}

/// A session's seats (asked for, or the game's): at least one, each a
/// valid seat id, none twice.
pub(crate) fn check_seats(seats: &[String]) -> Result<(), HostError> {
    if seats.is_empty() {
        return Err(bad("a session needs at least one seat"));
    }
    for (i, seat) in seats.iter().enumerate() {
        if !is_valid_participant_id(seat) {
            return Err(bad(format!("seat id {seat:?} must match ^[A-Za-z0-9_.:@-]{{1,128}}$")));
        }
        if seats[..i].contains(seat) {
            return Err(bad(format!("seat {seat:?} is declared twice")));
        }
    }
    Ok(())
}

/// `timeouts`: `{"turnMs": N}` with N from 100 ms to a day.
fn read_timeouts(value: &Value) -> Result<Timeouts, HostError> {
    let t: &Map = value.as_object().ok_or_else(|| bad("timeouts must be an object like {\"turnMs\": 30000}"))?;
    if let Some(key) = t.keys().find(|k| k.as_str() != "turnMs") {
        return Err(bad(format!("unknown timeouts field {key:?} (known: turnMs)")));
    }
    let turn_ms = t
        .get("turnMs")
        .and_then(Value::as_u64)
        .filter(|ms| (100..=86_400_000).contains(ms))
        .ok_or_else(|| bad("timeouts.turnMs must be an integer between 100 and 86400000"))?;
    Ok(Timeouts { turn_ms })
}

impl FromBody for CreateRequest {
    fn from_body(body: Value) -> Result<Self, HostError> {
        Self::from_value(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<CreateRequest, HostError> {
        CreateRequest::from_value(gaos_json::parse(text).expect("JSON"))
    }

    #[test]
    fn a_create_body_is_read_whole() {
        let request = read(
            r#"{"game":"conformance/hilo","seed":3,"seats":["a","b"],"participantId":"b","lease":{"durationMs":5000},
                "timeouts":{"turnMs":1000},"receipts":"unlinked","requestId":"r-1"}"#,
        )
        .expect("valid");
        assert_eq!(
            (request.game.as_str(), request.seed, request.participant_id.as_deref()),
            ("conformance/hilo", Some(3), Some("b"))
        );
        assert_eq!(request.lease, Some(LeaseAsk { duration_ms: Some(5000) }));
        assert_eq!(request.timeouts, Some(Timeouts { turn_ms: 1000 }));
        assert_eq!(request.request_id.as_deref(), Some("r-1"));
        for bad in [
            "[]",
            "{}",
            r#"{"game":5}"#,
            r#"{"game":"g","colour":"red"}"#,
            r#"{"game":"g","seed":"x"}"#,
            r#"{"game":"g","requestId":1}"#,
            r#"{"game":"g","seats":["a","a"]}"#,
            r#"{"game":"g","seats":[]}"#,
            r#"{"game":"g","run":{},"levelId":"x"}"#,
            r#"{"game":"g","lease":{"durationMs":-1}}"#,
            r#"{"game":"g","timeouts":{"turnMs":1}}"#,
            r#"{"game":"g","seatKeys":[]}"#,
        ] {
            assert_eq!(read(bad).expect_err(bad).code, "invalid_request", "{bad}");
        }
    }

    #[test]
    fn a_lease_duration_is_checked_against_the_hosts_bounds() {
        let bounds = LeaseBounds::new(1_000, 10_000).expect("bounds");
        assert_eq!(LeaseAsk { duration_ms: None }.duration(&bounds).expect("default"), None);
        assert_eq!(LeaseAsk { duration_ms: Some(2_000) }.duration(&bounds).expect("within"), Some(2_000));
        assert!(LeaseAsk { duration_ms: Some(20_000) }.duration(&bounds).is_err());
    }
}
