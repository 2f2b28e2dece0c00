//! Observation deltas (codec `v2`) and rejection notices.

use std::sync::Arc;

use gaos_json::Value;
use serde::{Deserialize, Serialize};

use crate::event::SubmissionIdentity;

/// A seat-routed notice that one of the submissions it saw pending was
/// rejected (`ObservationRejectionNotice`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RejectionNotice {
    /// Destination seat.
    pub seat: String,
    pub transition_revision: u64,
    pub tick: u64,
    pub participant_id: String,
    pub submission_id: String,
    pub code: String,
}

/// The body of a delta. This kernel's codec emits only `snapshot` and
/// `unchanged` (patch strategy `never`), which every v2 client accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DeltaBody {
    Snapshot { view: Arc<Value> },
    Unchanged,
}

/// Why a delta was produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeltaOrigin {
    Resolution,
    Snapshot,
}

/// `ObservationDelta`: what one seat receives for one transition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservationDelta {
    pub seat: String,
    pub scope_id: String,
    pub transition_revision: u64,
    pub view_revision: u64,
    pub tick: u64,
    pub codec: String,
    pub origin: DeltaOrigin,
    pub acknowledgements: Vec<SubmissionIdentity>,
    pub rejections: Vec<RejectionNotice>,
    pub body: DeltaBody,
    pub view_digest: u32,
}

impl ObservationDelta {
    pub fn to_value(&self) -> Value {
        gaos_json::to_value(self).expect("a delta is always a JSON value")
    }

    pub fn from_value(value: &Value) -> Result<Self, String> {
        gaos_json::from_value(value.clone()).map_err(|e| format!("malformed observation delta: {e}"))
    }
}

/// Client-side application of a delta (`applyObservationDelta`): returns the
/// seat's new view, checking the digest.
pub fn apply_observation_delta(current: Option<&Value>, delta: &ObservationDelta) -> Result<Value, String> {
    let view = match &delta.body {
        DeltaBody::Snapshot { view } => (**view).clone(),
        DeltaBody::Unchanged => current.cloned().ok_or("an unchanged delta needs a current view")?,
    };
    let digest = gaos_json::canonical_fnv1a32(&view);
    if digest != delta.view_digest {
        return Err(format!(
            "view digest mismatch at transition {}: expected {}, computed {digest}",
            delta.transition_revision, delta.view_digest
        ));
    }
    Ok(view)
}
