//! `POST /v1/sessions/{id}/reset`: start the next level of a run that
//! advances on reset.

use gaos_json::Value;

use super::FromBody;
use crate::error::HostError;

/// `{"seed"?: uint32, "revision"?: the revision the level ended at}`. A
/// seed is read only to be refused (`reset_seed_fixed`: a run fixes its
/// level seeds), so only whether one was sent is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResetRequest {
    pub(crate) seed: bool,
    pub(crate) revision: Option<u64>,
}

impl ResetRequest {
    /// A reset asked at `revision` (the one the seat saw its level end at),
    /// with or without a seed.
    pub fn new(seed: Option<u32>, revision: Option<u64>) -> Self {
        ResetRequest { seed: seed.is_some(), revision }
    }

    /// Read and check a reset body (no body is `{}`).
    pub fn from_value(body: Value) -> Result<Self, HostError> {
        let map = body.as_object().ok_or_else(|| HostError::invalid_request("the reset body must be a JSON object"))?;
        if let Some(key) = map.keys().find(|k| !["seed", "revision"].contains(&k.as_str())) {
            return Err(HostError::invalid_request(format!("unknown reset field {key:?} (known: seed, revision)")));
        }
        let seed = match map.get("seed") {
            None => false,
            Some(v) => {
                v.as_u64()
                    .filter(|s| *s <= u64::from(u32::MAX))
                    .ok_or_else(|| HostError::invalid_request("seed must be an integer from 0 to 4294967295"))?;
                true
            }
        };
        let revision = match map.get("revision") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                HostError::invalid_request("revision must be a non-negative integer (the revision the level ended at)")
            })?),
        };
        Ok(ResetRequest { seed, revision })
    }
}

impl FromBody for ResetRequest {
    const OPTIONAL: bool = true;

    fn from_body(body: Value) -> Result<Self, HostError> {
        Self::from_value(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_body_is_read_whole() {
        let read = |text: &str| ResetRequest::from_value(gaos_json::parse(text).expect("JSON"));
        assert_eq!(read("{}").expect("empty"), ResetRequest::default());
        assert_eq!(read(r#"{"seed":0,"revision":4}"#).expect("valid"), ResetRequest::new(Some(0), Some(4)));
        for bad in ["[]", r#"{"seed":"x"}"#, r#"{"seed":-1}"#, r#"{"revision":1.5}"#, r#"{"levels":2}"#] {
            assert_eq!(read(bad).expect_err(bad).code, "invalid_request", "{bad}");
        }
    }
}
