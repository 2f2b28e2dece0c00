//! `SubmittedAction`: what a reducer receives for one seat's input.

use gaos_json::{Map, Value};
use serde::{Deserialize, Serialize};

/// Scheme id of the only commitment scheme (RFC-008).
pub const COMMIT_SCHEME: &str = "gaos.commit.sha256.v1";

/// `{container, coord}` target of an action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionTarget {
    pub container: String,
    pub coord: Value,
}

/// A commitment envelope `{commitmentId, scheme, hash}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommitEnvelope {
    pub commitment_id: u32,
    pub scheme: String,
    pub hash: String,
}

/// A reveal envelope `{commitmentId, salt, payload}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevealEnvelope {
    pub commitment_id: u32,
    pub salt: String,
    pub payload: Value,
}

/// One seat's input as the reducer sees it (`SubmittedAction`). Absent fields
/// are omitted from JSON, never `null`. Fields a product adds beyond the
/// standard ones travel in `extra`: they reach the reducer live but are not
/// part of the replay projection.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmittedAction {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<ActionTarget>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<CommitEnvelope>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reveal: Option<RevealEnvelope>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified_payload: Option<Value>,
    #[serde(flatten, skip_serializing_if = "Map::is_empty")]
    pub extra: Map,
}

impl SubmittedAction {
    /// An action with only an id.
    pub fn new(id: impl Into<String>) -> Self {
        SubmittedAction { id: id.into(), ..Default::default() }
    }

    pub fn with_seat(mut self, seat: impl Into<String>) -> Self {
        self.seat = Some(seat.into());
        self
    }

    pub fn with_index(mut self, index: f64) -> Self {
        self.index = Some(index);
        self
    }

    pub fn with_payload(mut self, payload: Value) -> Self {
        self.payload = Some(payload);
        self
    }

    /// The action as a JSON value (for events, digests and replays).
    pub fn to_value(&self) -> Value {
        Value::Object(self.to_map())
    }

    /// The action as a JSON object, built directly (no serde round trip: this
    /// is on the per-transition path). Agrees with the serde form.
    pub fn to_map(&self) -> Map {
        let mut map = self.extra.clone();
        map.insert("id".into(), Value::String(self.id.clone()));
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                map.insert(key.into(), v);
            }
        };
        put("payload", self.payload.clone());
        put("x", self.x.map(Value::Number));
        put("y", self.y.map(Value::Number));
        put("index", self.index.map(Value::Number));
        put("boardId", self.board_id.clone().map(Value::String));
        put("zoneId", self.zone_id.clone().map(Value::String));
        put("seat", self.seat.clone().map(Value::String));
        put("targets", self.targets.as_ref().map(|t| gaos_json::to_value(t).expect("targets are JSON")));
        put("commit", self.commit.as_ref().map(|c| gaos_json::to_value(c).expect("commit is JSON")));
        put("reveal", self.reveal.as_ref().map(|r| gaos_json::to_value(r).expect("reveal is JSON")));
        put("verifiedPayload", self.verified_payload.clone());
        map
    }

    /// Decode an action object (`{"id": ..., ...}`).
    pub fn from_value(value: &Value) -> Result<Self, String> {
        if !value.is_object() {
            return Err(format!("an action must be an object, not {}", value.type_name()));
        }
        if value.get("id").and_then(Value::as_str).is_none() {
            return Err("an action needs a string id".into());
        }
        gaos_json::from_value(value.clone()).map_err(|e| format!("malformed action: {e}"))
    }

    /// `index` as a non-negative integer, when it is one.
    pub fn index_usize(&self) -> Option<usize> {
        self.index.filter(|i| i.fract() == 0.0 && *i >= 0.0).map(|i| i as usize)
    }

    /// `payload.<key>`, when the payload is an object holding it.
    pub fn payload_field(&self, key: &str) -> Option<&Value> {
        self.payload.as_ref().and_then(|p| p.get(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_only_present_fields_in_canonical_order() {
        let action = SubmittedAction::new("Action 1").with_index(2.0).with_seat("red");
        assert_eq!(gaos_json::canonical_json(&action.to_value()), r#"{"id":"Action 1","index":2,"seat":"red"}"#);
    }

    #[test]
    fn direct_map_agrees_with_serde() {
        let value = gaos_json::parse(
            r#"{"id":"Action 2","payload":{"p":[1]},"x":1.5,"y":-2,"index":3,"boardId":"b","zoneId":"z","seat":"s",
                "targets":[{"container":"c","coord":[1,2]}],"commit":{"commitmentId":4,"scheme":"gaos.commit.sha256.v1","hash":"ab"},
                "reveal":{"commitmentId":4,"salt":"00","payload":null},"verifiedPayload":{"v":true},"custom":7}"#,
        )
        .unwrap();
        let action = SubmittedAction::from_value(&value).unwrap();
        assert_eq!(action.to_value(), gaos_json::to_value(&action).unwrap());
        assert_eq!(action.to_value(), value);
    }

    #[test]
    fn round_trips_product_fields() {
        let value = gaos_json::parse(r#"{"id":"Action 1","custom":{"k":1},"payload":{"coast":true}}"#).unwrap();
        let action = SubmittedAction::from_value(&value).unwrap();
        assert_eq!(action.extra.get("custom"), value.get("custom"));
        assert_eq!(action.to_value(), value);
    }
}
