//! The receipt issuer of one session: attach receipts numbered from 0 and,
//! in chained mode, linked by digest to the one before (spec lifecycle.md,
//! RFC-018 attach receipts), and the chain they form. Pure (but for a
//! warning about a stored receipt that does not decode): the caller passes
//! the digests and the time, and counts a receipt only once its attach
//! answer is durable.

use gaos_json::Map;
use gaos_session::receipts::{AttachReceipt, ReceiptBody};

use crate::config::ReceiptMode;
use crate::storage::{AnswerKind, StoredAnswer};

/// What a receipt attests, besides its place in the chain.
#[derive(Debug, Clone)]
pub(crate) struct ReceiptFacts<'a> {
    pub session_id: &'a str,
    pub request_id: &'a str,
    pub revision: u64,
    pub transcript_digest: String,
    pub state_digest: String,
    pub controller: Option<Map>,
    /// Host clock milliseconds.
    pub attached_at_ms: i64,
}

/// The session's receipt chain: every receipt issued so far, oldest first.
///
/// The chain's durable home is the session's attach answers (each receipt is
/// written in the same batch as the answer that carries it, and answers are
/// never compacted away), not kernel events: an event would move the
/// transition revision, and an attach must leave the revision alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ReceiptIssuer {
    chain: Vec<AttachReceipt>,
}

impl ReceiptIssuer {
    /// The mode receipts are issued in: the session's configured mode, else
    /// chained when the policy asks for attach receipts, else none.
    pub(crate) fn mode(configured: Option<ReceiptMode>, policy_wants_receipts: bool) -> Option<ReceiptMode> {
        configured.or(if policy_wants_receipts { Some(ReceiptMode::Chained) } else { None })
    }

    /// Resume from the receipts carried by stored attach answers (in any
    /// order), sorted by sequence. A retry is answered from its stored answer
    /// and never stored twice, so each receipt appears once.
    pub(crate) fn resume<'a>(answers: impl IntoIterator<Item = &'a StoredAnswer>) -> Self {
        let mut chain: Vec<AttachReceipt> = answers
            .into_iter()
            .filter(|a| a.kind == AnswerKind::Attach)
            .filter_map(|answer| {
                let body = gaos_json::parse(&answer.body).ok()?;
                match AttachReceipt::from_value(body.get("receipt")?) {
                    Ok(receipt) => Some(receipt),
                    Err(e) => {
                        tracing::warn!(session = %answer.session_id, error = %e, "a stored attach receipt does not decode");
                        None
                    }
                }
            })
            .collect();
        chain.sort_by_key(|r| r.sequence);
        ReceiptIssuer { chain }
    }

    /// The sequence number of the next receipt.
    pub(crate) fn next_sequence(&self) -> u64 {
        self.chain.last().map_or(0, |r| r.sequence + 1)
    }

    /// Every receipt issued, oldest first.
    pub(crate) fn chain(&self) -> &[AttachReceipt] {
        &self.chain
    }

    /// The next receipt (not counted until [`ReceiptIssuer::record`]).
    pub(crate) fn issue(&self, mode: ReceiptMode, facts: ReceiptFacts<'_>) -> Result<AttachReceipt, String> {
        let mut body = ReceiptBody::new(
            facts.session_id,
            facts.request_id,
            self.next_sequence(),
            facts.revision,
            facts.transcript_digest,
            facts.state_digest,
        );
        if mode == ReceiptMode::Chained {
            body.previous_receipt_digest = self.chain.last().map(|r| r.receipt_digest.clone());
        }
        body.controller = facts.controller;
        body.attached_at = Some(facts.attached_at_ms as f64);
        AttachReceipt::new(body).map_err(|e| e.to_string())
    }

    /// Count `receipt` as issued: its attach answer is durable.
    pub(crate) fn record(&mut self, receipt: AttachReceipt) {
        debug_assert_eq!(receipt.sequence, self.next_sequence(), "receipts are recorded in the order they are issued");
        self.chain.push(receipt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gaos_json::Value;
    use gaos_session::receipts::verify_typed_receipt_chain;

    fn facts(request_id: &str, revision: u64) -> ReceiptFacts<'_> {
        ReceiptFacts {
            session_id: "s",
            request_id,
            revision,
            transcript_digest: "t".repeat(64),
            state_digest: "d".repeat(64),
            controller: None,
            attached_at_ms: 1_000,
        }
    }

    fn attach_answer(receipt: &AttachReceipt) -> StoredAnswer {
        let mut body = Map::new();
        body.insert("receipt".into(), receipt.to_value().expect("JSON"));
        StoredAnswer {
            session_id: "s".into(),
            kind: AnswerKind::Attach,
            key: receipt.request_id.clone(),
            status: 200,
            request: String::new(),
            body: gaos_json::canonical_json(&Value::Object(body)),
        }
    }

    #[test]
    fn chained_receipts_count_from_zero_and_link_by_digest() {
        let mut issuer = ReceiptIssuer::default();
        let first = issuer.issue(ReceiptMode::Chained, facts("r0", 0)).expect("a receipt");
        assert_eq!((first.sequence, first.previous_receipt_digest.as_deref()), (0, None));
        assert_eq!(issuer.issue(ReceiptMode::Chained, facts("r0", 0)).expect("again").sequence, 0, "not counted yet");
        issuer.record(first.clone());
        let second = issuer.issue(ReceiptMode::Chained, facts("r1", 3)).expect("a receipt");
        assert_eq!(second.sequence, 1);
        assert_eq!(second.previous_receipt_digest.as_ref(), Some(&first.receipt_digest));
        assert_eq!(second.attached_at, Some(1_000.0));
        issuer.record(second.clone());
        assert_eq!(issuer.chain(), [first.clone(), second.clone()]);
        assert!(verify_typed_receipt_chain(&[first, second]).valid);
    }

    #[test]
    fn unlinked_receipts_carry_no_previous_digest() {
        let mut issuer = ReceiptIssuer::default();
        let first = issuer.issue(ReceiptMode::Unlinked, facts("r0", 0)).expect("a receipt");
        issuer.record(first);
        let second = issuer.issue(ReceiptMode::Unlinked, facts("r1", 1)).expect("a receipt");
        assert_eq!((second.sequence, second.previous_receipt_digest), (1, None));
    }

    #[test]
    fn a_reloaded_issuer_continues_after_the_newest_stored_receipt() {
        let mut issuer = ReceiptIssuer::default();
        let mut stored = Vec::new();
        for (i, request) in ["r0", "r1", "r2"].iter().enumerate() {
            let receipt = issuer.issue(ReceiptMode::Chained, facts(request, i as u64)).expect("a receipt");
            stored.push(attach_answer(&receipt));
            issuer.record(receipt);
        }
        stored.reverse();
        let resumed = ReceiptIssuer::resume(&stored);
        assert_eq!(resumed, issuer, "the chain comes back in sequence order");
        assert_eq!(resumed.next_sequence(), 3);
        assert!(verify_typed_receipt_chain(resumed.chain()).valid);
        assert_eq!(ReceiptIssuer::resume(&[]), ReceiptIssuer::default());
    }

    #[test]
    fn the_mode_follows_the_session_then_the_policy() {
        assert_eq!(ReceiptIssuer::mode(Some(ReceiptMode::Unlinked), true), Some(ReceiptMode::Unlinked));
        assert_eq!(ReceiptIssuer::mode(None, true), Some(ReceiptMode::Chained));
        assert_eq!(ReceiptIssuer::mode(None, false), None);
    }
}
