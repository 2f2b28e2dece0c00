//! `gaos.kernel-checkpoint` 1.0 (kernel spec §4.16): the document a kernel
//! writes with [`SessionKernel::checkpoint`](crate::SessionKernel::checkpoint)
//! and is restored from with
//! [`SessionKernel::restore`](crate::SessionKernel::restore).
//!
//! This file owns the document's shape and its integrity digest (§1.6:
//! SHA-256 of the canonical JSON of the document without
//! `integrityDigest`). What the fields mean to a kernel — how they are
//! taken from live state and checked on restore — lives in
//! `kernel/checkpoint.rs`.

use gaos_json::Value;
use serde::{Deserialize, Serialize};

use crate::action::SubmittedAction;
use crate::error::{CheckpointCode, KernelError};
use crate::protocol::IntentWindow;
use crate::receipt::IngestReceipt;

/// `format` of a kernel checkpoint.
pub const CHECKPOINT_FORMAT: &str = "gaos.kernel-checkpoint";
/// `formatVersion` this kernel writes and reads.
pub const CHECKPOINT_FORMAT_VERSION: &str = "1.0";
/// The reducer-state codec: the reducer's own JSON
/// ([`TickReducer::encode_state`](crate::TickReducer::encode_state)).
pub const STATE_CODEC_ID: &str = "gaos.json";
pub const STATE_CODEC_VERSION: &str = "1";

/// A verified kernel checkpoint. Built by the kernel or read with
/// [`KernelCheckpoint::from_json`] / [`KernelCheckpoint::from_value`], both
/// of which check the format and the integrity digest; a value of this type
/// always hashes to its `integrityDigest`.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCheckpoint {
    pub(crate) doc: Document,
}

impl KernelCheckpoint {
    /// Seal a document: compute its integrity digest.
    pub(crate) fn seal(mut doc: Document) -> Self {
        doc.integrity_digest = String::new();
        doc.integrity_digest = integrity_of(&doc);
        KernelCheckpoint { doc }
    }

    /// The document as a JSON value.
    pub fn to_value(&self) -> Value {
        gaos_json::to_value(&self.doc).expect("a kernel checkpoint is always a JSON value")
    }

    /// The document's canonical JSON text (what an embedder stores).
    pub fn to_json(&self) -> String {
        gaos_json::to_canonical_string(&self.doc).expect("a kernel checkpoint is always a JSON value")
    }

    /// Read a stored checkpoint: JSON text → verified checkpoint.
    pub fn from_json(text: &str) -> Result<Self, KernelError> {
        let value = gaos_json::parse(text).map_err(|e| malformed(format!("not JSON: {e}")))?;
        Self::from_value(&value)
    }

    /// Read a checkpoint document: format, version, shape and integrity
    /// digest are checked here; everything that depends on the kernel
    /// options (header, codec, views, digests) on restore.
    pub fn from_value(value: &Value) -> Result<Self, KernelError> {
        let format = value.get("format").and_then(Value::as_str);
        if format != Some(CHECKPOINT_FORMAT) {
            return Err(malformed(format!("format must be {CHECKPOINT_FORMAT:?}, not {}", found(format))));
        }
        let version = value.get("formatVersion").and_then(Value::as_str);
        if version != Some(CHECKPOINT_FORMAT_VERSION) {
            return Err(malformed(format!(
                "formatVersion must be {CHECKPOINT_FORMAT_VERSION:?}, not {}",
                found(version)
            )));
        }
        let Some(recorded) = value.get("integrityDigest").and_then(Value::as_str) else {
            return Err(malformed("integrityDigest must be a string"));
        };
        let mut unsealed = value.as_object().expect("format was read from an object").clone();
        unsealed.remove("integrityDigest");
        let actual = gaos_json::canonical_sha256_hex(&Value::Object(unsealed));
        if actual != recorded {
            return Err(KernelError::checkpoint(
                CheckpointCode::Integrity,
                format!("integrityDigest {recorded} does not match the document (its SHA-256 is {actual})"),
            ));
        }
        let doc: Document = gaos_json::from_value(value.clone()).map_err(|e| malformed(e.to_string()))?;
        Ok(KernelCheckpoint { doc })
    }

    /// `watermark.transitionRevision`: the last transition the checkpoint holds.
    pub fn transition_revision(&self) -> u64 {
        self.doc.watermark.transition_revision
    }
    pub fn cursor(&self) -> u64 {
        self.doc.watermark.cursor
    }
    pub fn tick(&self) -> u64 {
        self.doc.watermark.tick
    }
    /// The retention floor of the kernel that wrote it (0: never compacted).
    pub fn retention_floor(&self) -> u64 {
        self.doc.retention_floor
    }
    /// The kernel state digest (§1.4) at the watermark.
    pub fn state_digest(&self) -> u32 {
        self.doc.state_digest
    }
    /// Lowercase hex SHA-256 of the document without this field (§1.6).
    pub fn integrity_digest(&self) -> &str {
        &self.doc.integrity_digest
    }
    /// The session the checkpoint belongs to.
    pub fn session_id(&self) -> Option<&str> {
        self.doc.header.get("sessionId").and_then(Value::as_str)
    }
}

/// A string field as found: quoted, or `missing`.
fn found(value: Option<&str>) -> String {
    value.map_or_else(|| "missing".to_owned(), |text| format!("{text:?}"))
}

fn malformed(message: impl Into<String>) -> KernelError {
    KernelError::checkpoint(
        CheckpointCode::Malformed,
        format!("not a {CHECKPOINT_FORMAT} 1.0 document: {}", message.into()),
    )
}

/// SHA-256 of the document without `integrityDigest` (`doc` has it empty,
/// which leaves the member out of the text).
fn integrity_of(doc: &Document) -> String {
    debug_assert!(doc.integrity_digest.is_empty(), "the digest is of the unsealed document");
    let text = gaos_json::to_canonical_string(doc).expect("a kernel checkpoint is always a JSON value");
    gaos_json::sha256_hex(text.as_bytes())
}

/// The document, field for field (§4.16).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Document {
    pub(crate) format: String,
    pub(crate) format_version: String,
    pub(crate) header: Value,
    pub(crate) codec: Codec,
    pub(crate) watermark: Watermark,
    pub(crate) reducer_state: Value,
    pub(crate) window: IntentWindow,
    pub(crate) protocol: Protocol,
    pub(crate) retention_floor: u64,
    pub(crate) state_digest: u32,
    /// Empty only while the document is being sealed: its digest is of the
    /// text without this member.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) integrity_digest: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Codec {
    pub(crate) id: String,
    pub(crate) version: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Watermark {
    pub(crate) transition_revision: u64,
    pub(crate) cursor: u64,
    pub(crate) tick: u64,
    pub(crate) last_checkpoint_tick: u64,
}

/// Protocol bookkeeping. Keyed lists are sorted by key (code points);
/// keys are `participantId \u0000 submissionId` (commitments:
/// `seat \u0000 commitmentId`). `rejections` stays in transition order.
/// This kernel has no interests, controls or receipt tombstones: those
/// lists are always empty and present for the reference's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Protocol {
    pub(crate) receipts: Vec<ReceiptEntry>,
    pub(crate) expired_receipt_keys: Vec<String>,
    pub(crate) views: Vec<ViewEntry>,
    pub(crate) commitments: Vec<CommitmentEntry>,
    pub(crate) next_commitment_ids: Vec<(String, u32)>,
    pub(crate) seen_salts: Vec<(String, String)>,
    pub(crate) interests: Vec<Value>,
    pub(crate) intent_actions: Vec<(String, SubmittedAction)>,
    pub(crate) rejections: Vec<RejectionEntry>,
    pub(crate) historical_submission_keys: Vec<String>,
    pub(crate) historical_interest_commands: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ReceiptEntry {
    pub(crate) key: String,
    pub(crate) canonical_command: String,
    pub(crate) tick_id: String,
    pub(crate) receipt: IngestReceipt,
    pub(crate) cursor: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ViewEntry {
    pub(crate) seat: String,
    pub(crate) view: Value,
    pub(crate) canonical: String,
    pub(crate) revision: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommitmentEntry {
    pub(crate) key: String,
    pub(crate) value: CommitmentValue,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CommitmentValue {
    pub(crate) envelope: crate::action::CommitEnvelope,
    pub(crate) seat: String,
    pub(crate) window_ref: u64,
    pub(crate) revealed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RejectionEntry {
    pub(crate) transition_revision: u64,
    pub(crate) tick: u64,
    pub(crate) participant_id: String,
    pub(crate) submission_id: String,
}
