//! RFC-010 signed play on the host: what a create request may carry
//! (`seatKeys` + `signaturePolicy` in the kernel header's shape,
//! `seatKeysAtAttach` for seats that register their key at attach, and the
//! tick-bounded `timeoutPolicy`), the registered keys as stored, and the
//! chain position a seat's envelope tells its signing client
//! (`extensions["gaos.session.signing"]`).
//!
//! The host never signs and holds no seat's private key; it checks every
//! signed submission with the kernel before anything is persisted
//! (`400 invalid_signature`).

use gaos_json::{Map, Value};
use gaos_kernel::signing::{Roster, SIGNATURE_SCHEME, SeatKey, check_signature_policy, to_base64};
use gaos_kernel::{Cadence, Game};
use gaos_session::ErrorCode;

use crate::error::HostError;

/// The envelope extension naming the seat's chain position.
pub(crate) const SIGNING_EXTENSION: &str = "gaos.session.signing";

/// `timeoutPolicy` windows longer than this are refused (a bound on how
/// long a tick-bounded window may wait for a seat).
pub(crate) const MAX_WINDOW_TICKS: u64 = 1_000_000;

/// What a create request says about signed play: the keys it fixes
/// (`seatKeys`, the kernel header's shape), the seats that register theirs
/// at attach (`seatKeysAtAttach`), and the tick-bounded `timeoutPolicy`.
#[derive(Debug, Default)]
pub(crate) struct CreateSigning {
    pub seat_keys: Option<Roster>,
    pub at_attach: Vec<String>,
    pub timeout_policy: Option<Value>,
}

/// Read a create body's `seatKeys`, `seatKeysAtAttach`, `signaturePolicy`
/// and `timeoutPolicy`. A session is signed when it names keys or seats
/// that register them; then `signaturePolicy` is required, the two lists
/// together name every declared seat exactly once, and a multi-level run
/// is refused (its recorded ticks restart at each level while the envelope
/// revision a client signs does not). `timeoutPolicy` is only for signed
/// sessions and must be the tick-bounded form (kernel spec §4.10).
pub(crate) fn parse_create_signing(
    map: &Map,
    seats: &[String],
    run: bool,
    cadence: &Cadence,
    game: &dyn Game,
) -> Result<CreateSigning, HostError> {
    let bad = |message: String| HostError::invalid_request(message);
    let (keys, later) = (map.get("seatKeys"), map.get("seatKeysAtAttach"));
    let signed = keys.is_some() || later.is_some();
    match (signed, map.get("signaturePolicy")) {
        (false, None) => {
            if map.contains_key("timeoutPolicy") {
                return Err(HostError::new(
                    ErrorCode::InvalidTimeoutPolicy,
                    "timeoutPolicy is for signed sessions (seatKeys): the kernel enforces the tick-bounded form \
                     only there (kernel spec §4.10); an unsigned session times out with timeouts.turnMs",
                ));
            }
            return Ok(CreateSigning::default());
        }
        (true, Some(policy)) => check_signature_policy(policy).map_err(bad)?,
        _ => {
            return Err(bad(
                "seatKeys (or seatKeysAtAttach) and signaturePolicy come together (RFC-010 signed play)".into()
            ));
        }
    }
    let at_attach = match later {
        None => Vec::new(),
        Some(value) => {
            let items = value.as_array().filter(|items| !items.is_empty()).ok_or_else(|| {
                bad("seatKeysAtAttach must be a non-empty array of the seats that register their key at attach".into())
            })?;
            let mut named: Vec<String> = Vec::with_capacity(items.len());
            for item in items {
                let seat = item.as_str().filter(|s| seats.iter().any(|d| d == s)).ok_or_else(|| {
                    bad(format!("seatKeysAtAttach names {item}, which is not a seat ({})", seats.join(", ")))
                })?;
                if named.iter().any(|n| n == seat) {
                    return Err(bad(format!("seatKeysAtAttach names seat {seat:?} twice")));
                }
                named.push(seat.to_owned());
            }
            named
        }
    };
    let roster = match keys {
        None => None,
        Some(Value::Array(items)) if items.is_empty() && !at_attach.is_empty() => None,
        Some(keys) => Some(Roster::from_value(keys).map_err(bad)?),
    };
    let fixed: Vec<&str> = roster.iter().flat_map(|r| r.keys().iter().map(|k| k.id.as_str())).collect();
    let every_seat_once = fixed.len() + at_attach.len() == seats.len()
        && seats.iter().all(|seat| fixed.contains(&seat.as_str()) != at_attach.contains(seat));
    if !every_seat_once {
        return Err(bad(format!(
            "seatKeys (each with its Ed25519 public key) and seatKeysAtAttach together must name every seat exactly \
             once ({})",
            seats.join(", ")
        )));
    }
    if run {
        return Err(bad("a multi-level run cannot be signed (seatKeys): sign single-level sessions".into()));
    }
    let timeout_policy =
        map.get("timeoutPolicy").map(|policy| check_timeout_policy(policy, cadence, game)).transpose()?;
    Ok(CreateSigning { seat_keys: roster, at_attach, timeout_policy })
}

/// A signed session's `timeoutPolicy`: exactly `{"mode":"ticks","windowTicks":N}`
/// (1 ≤ N ≤ [`MAX_WINDOW_TICKS`]) on ticks cadence, for a game with a timeout
/// mapper (kernel spec §4.1, §4.10).
fn check_timeout_policy(policy: &Value, cadence: &Cadence, game: &dyn Game) -> Result<Value, HostError> {
    let refuse = |why: String| {
        HostError::new(
            ErrorCode::InvalidTimeoutPolicy,
            format!(
                "signed sessions need the tick-bounded timeout form (kernel spec §4.10): timeoutPolicy must be \
                 {{\"mode\":\"ticks\",\"windowTicks\":N}} with 1 <= N <= {MAX_WINDOW_TICKS}, on ticks cadence, \
                 for a game with a timeout mapper; {why}"
            ),
        )
    };
    let map = policy.as_object().ok_or_else(|| refuse(format!("got {policy}")))?;
    let window = policy.get("windowTicks").and_then(Value::as_u64).filter(|n| (1..=MAX_WINDOW_TICKS).contains(n));
    if map.len() != 2 || policy.get("mode").and_then(Value::as_str) != Some("ticks") || window.is_none() {
        return Err(refuse(format!("got {policy}")));
    }
    if !matches!(cadence, Cadence::Ticks(_)) {
        return Err(refuse("this session runs on turns cadence (pass cadence {\"mode\":\"ticks\",...})".into()));
    }
    if !game.has_timeout_mapper() {
        return Err(refuse(format!("game {} has no timeout mapper", game.game_ref().id)));
    }
    Ok(policy.clone())
}

/// The session state `seatKeys`: the keys registered at attach so far.
pub(crate) fn registered_keys_json(keys: &[SeatKey]) -> String {
    gaos_json::canonical_json(&Value::Array(keys.iter().map(SeatKey::to_value).collect()))
}

/// Read the session state `seatKeys` back: roster entries, each of a seat
/// of `at_attach` (the create's `seatKeysAtAttach`), each at most once.
pub(crate) fn read_registered_keys(text: &str, at_attach: &[String]) -> Result<Vec<SeatKey>, String> {
    let value = gaos_json::parse(text).map_err(|e| format!("not JSON: {e}"))?;
    let items = value.as_array().ok_or("not an array of seat keys")?;
    let mut keys: Vec<SeatKey> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = SeatKey::from_value(item, i)?;
        if !at_attach.contains(&key.id) || keys.iter().any(|k| k.id == key.id) {
            return Err(format!("seat {:?} cannot have registered its key at attach (or did twice)", key.id));
        }
        keys.push(key);
    }
    Ok(keys)
}

/// The finalize answer's per-seat account of signed play.
pub(crate) const SIGNATURES_EXTENSION: &str = "gaos.session.signatures";

/// The signature report of the session's own replay (the verifier's check,
/// `{state, problems, seats: [{seat, submissions, validSignatures,
/// chainReproduced, policySatisfied, chainHead}]}`) plus, per seat,
/// `signed`: every one of its moves is on its chain and covered by its key.
/// An unsigned session's report (`state: "unsigned"`) names every declared
/// seat with `signed: false`, so the result answers the question per seat
/// either way.
pub(crate) fn signature_report(replay: &str, declared: &[String]) -> Result<Value, HostError> {
    let view = gaos_kernel::replay::read_replay(replay)
        .map_err(|e| HostError::internal(format!("the session's replay does not read back: {e}")))?;
    let report = gaos_kernel::replay::check_signatures(&view);
    let mut value = report.to_value();
    if let Some(Value::Array(seats)) = value.as_object_mut().and_then(|m| m.get_mut("seats")) {
        for seat in seats.iter_mut().filter_map(Value::as_object_mut) {
            let signed = seat.get("chainReproduced") == Some(&Value::Bool(true))
                && seat.get("policySatisfied") == Some(&Value::Bool(true));
            seat.insert("signed".into(), signed.into());
        }
        if seats.is_empty() {
            for seat in declared {
                let mut entry = Map::new();
                entry.insert("seat".into(), seat.clone().into());
                entry.insert("signed".into(), false.into());
                seats.push(Value::Object(entry));
            }
        }
    }
    Ok(value)
}

/// `{scheme, awaitingSeatKeys}`: a signed session still waits for these
/// seats to register their keys at attach; nobody signs (or moves) yet.
pub(crate) fn awaiting_extension(awaiting: &[String]) -> Value {
    let mut map = Map::new();
    map.insert("scheme".into(), SIGNATURE_SCHEME.into());
    map.insert("awaitingSeatKeys".into(), Value::Array(awaiting.iter().map(|s| Value::from(s.as_str())).collect()));
    Value::Object(map)
}

/// `{scheme, rosterHash, chainHead, submissions}`: where `seat`'s next
/// signed submission continues its chain.
pub(crate) fn chain_extension(roster: &Roster, position: &gaos_kernel::ChainPosition) -> Value {
    let mut map = Map::new();
    map.insert("scheme".into(), SIGNATURE_SCHEME.into());
    map.insert("rosterHash".into(), to_base64(roster.hash()).into());
    map.insert("chainHead".into(), position.chain_head.clone().into());
    map.insert("submissions".into(), position.submissions.into());
    Value::Object(map)
}
