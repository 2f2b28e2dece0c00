//! `POST /v1/sessions/{id}/finalize`: `SessionFinalizeRequest`.

use gaos_json::{Map, Value};

use super::{FromBody, extensions, request_id};
use crate::answers::fingerprint;
use crate::error::HostError;

/// `{requestId, metadata?, extensions?}`, checked.
#[derive(Debug, Clone)]
pub struct FinalizeRequest {
    /// Idempotency key (non-blank): the first accepted finalize fixes the result.
    pub(crate) request_id: String,
    /// Product metadata (opaque JSON), echoed in the result.
    pub(crate) metadata: Option<Value>,
    /// Product extensions (opaque; `gaos.session.evaluation` names a manifest digest).
    pub(crate) extensions: Option<Map>,
    /// SHA-256 of the body's canonical JSON: an exact retry has the same one.
    pub(crate) fingerprint: String,
}

impl FinalizeRequest {
    /// Read and check a finalize body.
    pub fn from_value(body: Value) -> Result<Self, HostError> {
        const FIELDS: [&str; 3] = ["requestId", "metadata", "extensions"];
        let map =
            body.as_object().ok_or_else(|| HostError::invalid_request("the finalize body must be a JSON object"))?;
        if let Some(key) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(HostError::invalid_request(format!("unknown finalize field {key:?}")));
        }
        let request_id = request_id(map)?;
        let extensions = extensions(map)?;
        let metadata = map.get("metadata").cloned();
        Ok(FinalizeRequest { request_id, metadata, extensions, fingerprint: fingerprint(&body) })
    }
}

impl FromBody for FinalizeRequest {
    fn from_body(body: Value) -> Result<Self, HostError> {
        Self::from_value(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finalize_body_is_read_whole() {
        let read = |text: &str| FinalizeRequest::from_value(gaos_json::parse(text).expect("JSON"));
        let request = read(r#"{"requestId":"f","metadata":5,"extensions":{"x":1}}"#).expect("valid");
        assert_eq!(request.request_id, "f");
        assert_eq!(request.metadata, Some(Value::from(5)));
        for bad in
            ["[]", "{}", r#"{"requestId":5}"#, r#"{"requestId":"r","extensions":5}"#, r#"{"requestId":"r","x":1}"#]
        {
            assert_eq!(read(bad).expect_err(bad).code, "invalid_request", "{bad}");
        }
    }
}
