//! RFC-010 signed play on the host: what a create request may carry
//! (`seatKeys` + `signaturePolicy`, in the kernel header's shape), the roster
//! the session's kernel options get, and the chain position a seat's
//! envelope tells its signing client (`extensions["gaos.session.signing"]`).
//!
//! The host never signs and holds no seat's private key; it checks every
//! signed submission with the kernel before anything is persisted
//! (`400 invalid_signature`).

use gaos_json::{Map, Value};
use gaos_kernel::signing::{Roster, SIGNATURE_SCHEME, check_signature_policy, to_base64};

use crate::error::HostError;

/// The envelope extension naming the seat's chain position.
pub(crate) const SIGNING_EXTENSION: &str = "gaos.session.signing";

/// Read `seatKeys` and `signaturePolicy` of a create body: both or neither;
/// the roster must name every declared seat exactly once; a multi-level run
/// cannot be signed (its recorded ticks restart at each level while the
/// envelope revision a client signs does not).
pub(crate) fn parse_create_signing(map: &Map, seats: &[String], run: bool) -> Result<Option<Roster>, HostError> {
    let bad = |message: String| HostError::invalid_request(message);
    let (keys, policy) = match (map.get("seatKeys"), map.get("signaturePolicy")) {
        (None, None) => return Ok(None),
        (Some(keys), Some(policy)) => (keys, policy),
        _ => return Err(bad("seatKeys and signaturePolicy come together (RFC-010 signed play)".into())),
    };
    check_signature_policy(policy).map_err(bad)?;
    let roster = Roster::from_value(keys).map_err(bad)?;
    if roster.keys().len() != seats.len() || seats.iter().any(|seat| roster.key(seat).is_none()) {
        return Err(bad(format!(
            "seatKeys must name every seat exactly once ({}), each with its Ed25519 public key",
            seats.join(", ")
        )));
    }
    if run {
        return Err(bad("a multi-level run cannot be signed (seatKeys): sign single-level sessions".into()));
    }
    Ok(Some(roster))
}

/// The finalize answer's per-seat account of signed play.
pub(crate) const SIGNATURES_EXTENSION: &str = "gaos.session.signatures";

/// The signature report of the session's own replay (the verifier's check,
/// `{state, problems, seats: [{seat, submissions, validSignatures,
/// chainReproduced, policySatisfied, chainHead}]}`) plus, per seat,
/// `signed`: every one of its moves is on its chain and covered by its key.
pub(crate) fn signature_report(replay: &str) -> Result<Value, HostError> {
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
    }
    Ok(value)
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
