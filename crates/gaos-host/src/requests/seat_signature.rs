//! `POST /v1/sessions/{id}/seat-signature`: a seat's periodic signature over
//! its chain head (RFC-010 `seat-signature`, kernel spec §5.9), which covers
//! the chained-but-unsigned submissions a `signingTier.N > 1` lets it send.

use gaos_json::Value;

use super::{FromBody, object_with};
use crate::error::HostError;

const FIELDS: [&str; 4] = ["tick", "clientTime", "prevChainHash", "sig"];

/// `{"tick", "clientTime", "prevChainHash", "sig"}`, every field required:
/// the session's current tick, the seat's clock, the seat's chain head and
/// the Ed25519 signature over the periodic preimage (both canonical base64;
/// the kernel checks their encodings, the head and the signature).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatSignatureRequest {
    pub(crate) tick: u64,
    pub(crate) client_time: u64,
    pub(crate) prev_chain_hash: String,
    pub(crate) sig: String,
}

impl SeatSignatureRequest {
    /// Read and check a seat-signature body.
    pub fn from_value(body: Value) -> Result<Self, HostError> {
        let map = object_with(&body, "seat-signature", &FIELDS)?;
        let integer = |key: &str, what: &str| {
            map.get(key).and_then(Value::as_u64).filter(|n| (*n as f64) <= gaos_json::MAX_SAFE_INTEGER).ok_or_else(
                || HostError::invalid_request(format!("{key} must be a non-negative safe integer ({what})")),
            )
        };
        let text = |key: &str, what: &str| {
            map.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| HostError::invalid_request(format!("{key} must be a string ({what})")))
        };
        Ok(SeatSignatureRequest {
            tick: integer("tick", "the session's current tick")?,
            client_time: integer("clientTime", "the seat's clock")?,
            prev_chain_hash: text("prevChainHash", "the seat's chain head, base64")?,
            sig: text("sig", "Ed25519 over the periodic preimage, base64")?,
        })
    }
}

impl FromBody for SeatSignatureRequest {
    fn from_body(body: Value) -> Result<Self, HostError> {
        Self::from_value(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<SeatSignatureRequest, HostError> {
        SeatSignatureRequest::from_value(gaos_json::parse(text).expect("JSON"))
    }

    #[test]
    fn a_seat_signature_body_is_read_whole() {
        let request = read(r#"{"tick":3,"clientTime":9,"prevChainHash":"aGVhZA==","sig":"c2ln"}"#).expect("valid");
        assert_eq!(request.tick, 3);
        assert_eq!(request.client_time, 9);
        assert_eq!(request.prev_chain_hash, "aGVhZA==");
        for bad in [
            "[]",
            r#"{"tick":3,"clientTime":9,"prevChainHash":"x"}"#,
            r#"{"tick":-1,"clientTime":9,"prevChainHash":"x","sig":"y"}"#,
            r#"{"tick":3,"clientTime":1.5,"prevChainHash":"x","sig":"y"}"#,
            r#"{"tick":3,"clientTime":9,"prevChainHash":5,"sig":"y"}"#,
            r#"{"tick":3,"clientTime":9,"prevChainHash":"x","sig":"y","seat":"alice"}"#,
        ] {
            let error = read(bad).expect_err(bad);
            assert_eq!(error.code, gaos_session::ErrorCode::InvalidRequest, "{bad}");
        }
    }
}
