//! `gaos.session-attach-receipt.v1`: the receipt a host issues for each
//! attach, its SHA-256 digest and the verification of a receipt chain
//! (lifecycle spec §3).
//!
//! `receiptDigest` is the lowercase hex SHA-256 of the UTF-8 canonical JSON of
//! every receipt field except `receiptDigest` itself (`schema` included,
//! absent optional fields omitted). Receipts of one session form a chain:
//! `sequence` counts up from the first receipt, `revision` never decreases and
//! `previousReceiptDigest` links each receipt to the one before.

use gaos_json::{MAX_SAFE_INTEGER, Map, Value, canonical_json, canonical_sha256_hex};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::words::quoted;

/// The schema id every attach receipt carries.
pub const RECEIPT_SCHEMA: &str = "gaos.session-attach-receipt.v1";

/// A receipt that cannot be built or decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReceiptError {
    /// A required string field is empty or only whitespace.
    #[error("receipt field {0} must be a non-blank string")]
    Blank(&'static str),
    /// `sequence` or `revision` is beyond the JavaScript safe-integer range.
    #[error("receipt field {0} must be a safe integer >= 0")]
    UnsafeInteger(&'static str),
    /// `attachedAt` is NaN or infinite.
    #[error("receipt field attachedAt must be a finite number")]
    NonFiniteAttachedAt,
    /// The JSON does not have the receipt's shape (missing or unknown fields, wrong types, wrong schema).
    #[error("malformed attach receipt: {0}")]
    Shape(String),
}

/// A `gaos.session-attach-receipt.v1` receipt. Optional fields are omitted
/// from JSON when absent, never written as `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttachReceipt {
    /// Always [`RECEIPT_SCHEMA`].
    pub schema: String,
    /// The session attached to.
    pub session_id: String,
    /// The attach request this receipt answers.
    pub request_id: String,
    /// Number of receipts the session issued before this one.
    pub sequence: u64,
    /// The session head (kernel cursor) at attach time.
    pub revision: u64,
    /// Opaque host digest of the durable transcript at `revision`.
    pub transcript_digest: String,
    /// Opaque host digest of the session state at `revision`.
    pub state_digest: String,
    /// Host time of the attach (an operational claim only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attached_at: Option<f64>,
    /// `receiptDigest` of the previous receipt; absent on the first one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_receipt_digest: Option<String>,
    /// The controller identity the attach was made under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<Map>,
    /// Product extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map>,
    /// SHA-256 hex over every other field (see [`receipt_digest`]).
    pub receipt_digest: String,
}

/// The fields of a receipt before its digest is computed.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceiptBody {
    /// The session attached to.
    pub session_id: String,
    /// The attach request this receipt answers.
    pub request_id: String,
    /// Number of receipts the session issued before this one.
    pub sequence: u64,
    /// The session head at attach time.
    pub revision: u64,
    /// Opaque host digest of the durable transcript at `revision`.
    pub transcript_digest: String,
    /// Opaque host digest of the session state at `revision`.
    pub state_digest: String,
    /// Host time of the attach, when the host records one.
    pub attached_at: Option<f64>,
    /// `receiptDigest` of the previous receipt, if any.
    pub previous_receipt_digest: Option<String>,
    /// The controller identity, if any.
    pub controller: Option<Map>,
    /// Product extensions, if any.
    pub extensions: Option<Map>,
}

impl ReceiptBody {
    /// A body with the required fields and no optional ones.
    pub fn new(
        session_id: impl Into<String>,
        request_id: impl Into<String>,
        sequence: u64,
        revision: u64,
        transcript_digest: impl Into<String>,
        state_digest: impl Into<String>,
    ) -> Self {
        ReceiptBody {
            session_id: session_id.into(),
            request_id: request_id.into(),
            sequence,
            revision,
            transcript_digest: transcript_digest.into(),
            state_digest: state_digest.into(),
            attached_at: None,
            previous_receipt_digest: None,
            controller: None,
            extensions: None,
        }
    }

    /// The body of the receipt that follows `previous` in its chain: same
    /// session, next sequence number, linked by digest.
    pub fn next(
        previous: &AttachReceipt,
        request_id: impl Into<String>,
        revision: u64,
        transcript_digest: impl Into<String>,
        state_digest: impl Into<String>,
    ) -> Self {
        ReceiptBody {
            previous_receipt_digest: Some(previous.receipt_digest.clone()),
            ..ReceiptBody::new(
                previous.session_id.clone(),
                request_id,
                previous.sequence.saturating_add(1),
                revision,
                transcript_digest,
                state_digest,
            )
        }
    }
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

fn check_safe(value: u64, field: &'static str) -> Result<(), ReceiptError> {
    if value as f64 > MAX_SAFE_INTEGER { Err(ReceiptError::UnsafeInteger(field)) } else { Ok(()) }
}

impl AttachReceipt {
    /// Validate `body` and seal it: sets the schema and computes `receiptDigest`.
    pub fn new(body: ReceiptBody) -> Result<Self, ReceiptError> {
        for (field, value) in [
            ("sessionId", &body.session_id),
            ("requestId", &body.request_id),
            ("transcriptDigest", &body.transcript_digest),
            ("stateDigest", &body.state_digest),
        ] {
            if is_blank(value) {
                return Err(ReceiptError::Blank(field));
            }
        }
        if body.previous_receipt_digest.as_deref().is_some_and(is_blank) {
            return Err(ReceiptError::Blank("previousReceiptDigest"));
        }
        check_safe(body.sequence, "sequence")?;
        check_safe(body.revision, "revision")?;
        if body.attached_at.is_some_and(|t| !t.is_finite()) {
            return Err(ReceiptError::NonFiniteAttachedAt);
        }
        let mut receipt = AttachReceipt {
            schema: RECEIPT_SCHEMA.into(),
            session_id: body.session_id,
            request_id: body.request_id,
            sequence: body.sequence,
            revision: body.revision,
            transcript_digest: body.transcript_digest,
            state_digest: body.state_digest,
            attached_at: body.attached_at,
            previous_receipt_digest: body.previous_receipt_digest,
            controller: body.controller,
            extensions: body.extensions,
            receipt_digest: String::new(),
        };
        receipt.receipt_digest = receipt_digest(&receipt)?;
        Ok(receipt)
    }

    /// The receipt as a JSON object (absent optional fields omitted). Fails
    /// only for a receipt built by hand with a non-finite `attachedAt` or a
    /// `sequence`/`revision` beyond 2^53−1, which JSON cannot carry.
    pub fn to_value(&self) -> Result<Value, ReceiptError> {
        gaos_json::to_value(self).map_err(|e| ReceiptError::Shape(e.to_string()))
    }

    /// Decode a receipt object. Refuses unknown fields (they would be lost,
    /// yet they are part of the digest) and a schema other than [`RECEIPT_SCHEMA`].
    /// The digest is not checked: use [`AttachReceipt::digest_matches`] or
    /// [`verify_receipt_chain`].
    pub fn from_value(value: &Value) -> Result<Self, ReceiptError> {
        let receipt: AttachReceipt =
            gaos_json::from_value(value.clone()).map_err(|e| ReceiptError::Shape(e.to_string()))?;
        if receipt.schema != RECEIPT_SCHEMA {
            return Err(ReceiptError::Shape(format!("unknown schema {:?}", receipt.schema)));
        }
        Ok(receipt)
    }

    /// True when `receiptDigest` matches the other fields.
    pub fn digest_matches(&self) -> bool {
        receipt_digest(self).is_ok_and(|digest| digest == self.receipt_digest)
    }
}

/// The digest preimage of a receipt object: the canonical JSON of every
/// member except `receiptDigest`. `None` for a non-object.
pub fn receipt_preimage_value(receipt: &Value) -> Option<String> {
    let mut map = receipt.as_object()?.clone();
    map.remove("receiptDigest");
    Some(canonical_json(&Value::Object(map)))
}

/// The digest preimage of a typed receipt (canonical JSON without `receiptDigest`).
/// Fails like [`AttachReceipt::to_value`].
pub fn receipt_preimage(receipt: &AttachReceipt) -> Result<String, ReceiptError> {
    Ok(canonical_json(&without_digest(receipt)?))
}

/// `receiptDigest` of a typed receipt: lowercase hex SHA-256 of its preimage.
/// Fails like [`AttachReceipt::to_value`].
pub fn receipt_digest(receipt: &AttachReceipt) -> Result<String, ReceiptError> {
    Ok(canonical_sha256_hex(&without_digest(receipt)?))
}

fn without_digest(receipt: &AttachReceipt) -> Result<Value, ReceiptError> {
    let mut value = receipt.to_value()?;
    if let Some(map) = value.as_object_mut() {
        map.remove("receiptDigest");
    }
    Ok(value)
}

/// `receiptDigest` recomputed for a receipt object. `None` for a non-object.
pub fn receipt_value_digest(receipt: &Value) -> Option<String> {
    let mut map = receipt.as_object()?.clone();
    map.remove("receiptDigest");
    Some(canonical_sha256_hex(&Value::Object(map)))
}

/// The result of [`verify_receipt_chain`]: `valid` exactly when `problems` is empty.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainVerification {
    /// True when no problem was found.
    pub valid: bool,
    /// One human-readable line per problem, in chain order.
    pub problems: Vec<String>,
}

/// What the chain checks keep of the previous accepted receipt.
struct Link<'a> {
    session_id: Option<&'a str>,
    sequence: Option<u64>,
    revision: Option<u64>,
    receipt_digest: Option<&'a str>,
}

fn safe_uint(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64).filter(|&n| n as f64 <= MAX_SAFE_INTEGER)
}

/// Verify a chain of receipt objects (oldest first) with the problem rules of
/// lifecycle spec §3. Every check runs on each receipt and adds one problem:
///
/// - a wrong schema (or a non-object): the receipt is then skipped, so the
///   next one is compared with the last receipt that was not skipped;
/// - a missing `receiptDigest`, or one that does not match the content;
/// - a blank `sessionId`, `requestId`, `transcriptDigest` or `stateDigest`;
/// - a `sequence` or `revision` that is not a safe integer >= 0;
/// - a `previousReceiptDigest` on the first receipt;
/// - against the previous receipt: a `sessionId` change, a `sequence` that is
///   not the previous one plus one, a `revision` lower than the previous one
///   (equal is fine), and a `previousReceiptDigest` that is not the previous
///   receipt's stated `receiptDigest` (a broken link).
///
/// An empty chain is valid.
pub fn verify_receipt_chain(receipts: &[Value]) -> ChainVerification {
    ReceiptLinks::Chained.verify(receipts)
}

/// [`verify_receipt_chain`] for a host that issues unlinked receipts (each
/// one verifies alone, for the reference Python client): every rule holds
/// except the link, and instead no receipt may carry `previousReceiptDigest`.
pub fn verify_unlinked_receipts(receipts: &[Value]) -> ChainVerification {
    ReceiptLinks::Unlinked.verify(receipts)
}

/// Whether a host links consecutive receipts by `previousReceiptDigest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReceiptLinks {
    /// Every receipt after the first links to the one before (the default).
    #[default]
    Chained,
    /// No receipt carries a link; each verifies alone.
    Unlinked,
}

impl ReceiptLinks {
    /// Verify `receipts` (oldest first) under these links:
    /// [`verify_receipt_chain`] or [`verify_unlinked_receipts`].
    pub fn verify(self, receipts: &[Value]) -> ChainVerification {
        let items: Vec<Result<&Value, String>> = receipts.iter().map(Ok).collect();
        verify_items(&items, self)
    }
}

/// [`verify_receipt_chain`] over typed receipts. A receipt that cannot be
/// written as JSON (see [`AttachReceipt::to_value`]) is a problem and is
/// skipped like a receipt with a wrong schema.
pub fn verify_typed_receipt_chain(receipts: &[AttachReceipt]) -> ChainVerification {
    let values: Vec<Result<Value, String>> = receipts.iter().map(|r| r.to_value().map_err(|e| e.to_string())).collect();
    let items: Vec<Result<&Value, String>> = values.iter().map(|v| v.as_ref().map_err(Clone::clone)).collect();
    verify_items(&items, ReceiptLinks::Chained)
}

fn verify_items(receipts: &[Result<&Value, String>], links: ReceiptLinks) -> ChainVerification {
    let mut problems = Vec::new();
    let mut previous: Option<Link<'_>> = None;
    for (i, receipt) in receipts.iter().enumerate() {
        let receipt: &Value = match receipt {
            Ok(receipt) => receipt,
            Err(e) => {
                problems.push(format!("receipt {i}: {e}; skipped"));
                continue;
            }
        };
        let schema = receipt.get("schema");
        if schema.and_then(Value::as_str) != Some(RECEIPT_SCHEMA) {
            let found = schema.map_or_else(|| "no schema".to_owned(), |s| s.to_string());
            problems.push(format!("receipt {i}: schema must be {RECEIPT_SCHEMA:?}, found {found}; skipped"));
            continue;
        }
        let stated_digest = receipt.get("receiptDigest").and_then(Value::as_str);
        match (stated_digest, receipt_value_digest(receipt)) {
            (Some(stated), Some(actual)) if stated == actual => {}
            (Some(stated), actual) => problems.push(format!(
                "receipt {i}: receiptDigest {stated} does not match its content ({})",
                actual.unwrap_or_default()
            )),
            (None, _) => problems.push(format!("receipt {i}: receiptDigest is missing")),
        }
        let session_id = receipt.get("sessionId").and_then(Value::as_str);
        for field in ["sessionId", "requestId", "transcriptDigest", "stateDigest"] {
            if receipt.get(field).and_then(Value::as_str).is_none_or(is_blank) {
                problems.push(format!("receipt {i}: {field} must be a non-blank string"));
            }
        }
        let sequence = safe_uint(receipt.get("sequence"));
        let revision = safe_uint(receipt.get("revision"));
        if sequence.is_none() {
            problems.push(format!("receipt {i}: sequence must be a safe integer >= 0"));
        }
        if revision.is_none() {
            problems.push(format!("receipt {i}: revision must be a safe integer >= 0"));
        }
        let link = receipt.get("previousReceiptDigest");
        match &previous {
            None => {
                if link.is_some() {
                    problems.push(format!("receipt {i}: the first receipt must not carry previousReceiptDigest"));
                }
            }
            Some(prev) => {
                if session_id != prev.session_id {
                    problems.push(format!(
                        "receipt {i}: sessionId changed from {} to {}",
                        quoted(prev.session_id),
                        quoted(session_id)
                    ));
                }
                if let (Some(seq), Some(prev_seq)) = (sequence, prev.sequence)
                    && Some(seq) != prev_seq.checked_add(1)
                {
                    problems.push(format!("receipt {i}: sequence {seq} does not follow {prev_seq}"));
                }
                if let (Some(rev), Some(prev_rev)) = (revision, prev.revision)
                    && rev < prev_rev
                {
                    problems.push(format!("receipt {i}: revision {rev} is lower than the previous {prev_rev}"));
                }
                let linked = link.and_then(Value::as_str);
                match links {
                    ReceiptLinks::Chained if linked.is_none() || linked != prev.receipt_digest => {
                        let previous = quoted(prev.receipt_digest);
                        problems.push(match linked {
                            Some(linked) => format!(
                                "receipt {i}: previousReceiptDigest {linked:?} does not link to the previous receipt \
                                 {previous}"
                            ),
                            None => format!(
                                "receipt {i}: previousReceiptDigest is missing; it must link to the previous receipt \
                                 {previous}"
                            ),
                        })
                    }
                    ReceiptLinks::Unlinked if link.is_some() => {
                        problems.push(format!("receipt {i}: an unlinked receipt must not carry previousReceiptDigest"))
                    }
                    ReceiptLinks::Chained | ReceiptLinks::Unlinked => {}
                }
            }
        }
        previous = Some(Link { session_id, sequence, revision, receipt_digest: stated_digest });
    }
    ChainVerification { valid: problems.is_empty(), problems }
}
