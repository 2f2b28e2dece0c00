//! Prepared transitions: what `prepare_*` returns and what it reports.

use gaos_json::Value;

use super::advance::AdvanceSummary;
use super::commit::Patch;
use crate::event::SessionEvent;
use crate::observation::ObservationDelta;
use crate::receipt::IngestReceipt;

/// What a prepared transition will report when committed.
#[derive(Debug, Clone, PartialEq)]
pub enum PreparedResult {
    Ingest(IngestReceipt),
    Advance(AdvanceSummary),
    Extension,
    /// [`SessionKernel::prepare_ingest_and_resolve`](crate::SessionKernel::prepare_ingest_and_resolve): the ingest and the
    /// resolution it made ready.
    IngestAndAdvance(IngestReceipt, AdvanceSummary),
}

impl PreparedResult {
    /// The result as the reference reports it (`null` for extensions).
    pub fn to_value(&self) -> Value {
        match self {
            PreparedResult::Ingest(r) => gaos_json::to_value(r).expect("receipt is JSON"),
            PreparedResult::Advance(s) => gaos_json::to_value(s).expect("summary is JSON"),
            PreparedResult::Extension => Value::Null,
            PreparedResult::IngestAndAdvance(r, s) => {
                let mut map = gaos_json::Map::new();
                map.insert("receipt".into(), gaos_json::to_value(r).expect("receipt is JSON"));
                map.insert("summary".into(), gaos_json::to_value(s).expect("summary is JSON"));
                Value::Object(map)
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Completion {
    Open,
    Committed,
    Aborted,
}

/// A prepared transition: single-use, bound to its base revision, completed
/// exactly once by `commit` or `abort`.
pub struct Prepared<S> {
    pub(super) base: u64,
    pub(super) next: u64,
    pub(super) events: Vec<SessionEvent>,
    pub(super) deltas: Vec<ObservationDelta>,
    pub(super) result: PreparedResult,
    pub(super) owner: u64,
    pub(super) completion: Completion,
    pub(super) patch: Option<Patch<S>>,
}

impl<S> std::fmt::Debug for Prepared<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("base", &self.base)
            .field("next", &self.next)
            .field("events", &self.events.len())
            .field("completion", &self.completion)
            .finish()
    }
}

impl<S> Prepared<S> {
    pub fn base_transition_revision(&self) -> u64 {
        self.base
    }
    pub fn next_transition_revision(&self) -> u64 {
        self.next
    }
    /// Events to persist before committing (empty for a noop). `commit`
    /// moves them into the kernel's transcript, so read them before.
    pub fn events(&self) -> &[SessionEvent] {
        &self.events
    }
    /// Deltas to publish after committing.
    pub fn deltas(&self) -> &[ObservationDelta] {
        &self.deltas
    }
    pub fn result(&self) -> &PreparedResult {
        &self.result
    }
    /// True for exact duplicates and other transitions with nothing to do.
    pub fn is_noop(&self) -> bool {
        self.base == self.next
    }
    pub fn receipt(&self) -> Option<&IngestReceipt> {
        match &self.result {
            PreparedResult::Ingest(r) | PreparedResult::IngestAndAdvance(r, _) => Some(r),
            _ => None,
        }
    }
    pub fn summary(&self) -> Option<&AdvanceSummary> {
        match &self.result {
            PreparedResult::Advance(s) | PreparedResult::IngestAndAdvance(_, s) => Some(s),
            _ => None,
        }
    }
    pub fn is_open(&self) -> bool {
        self.completion == Completion::Open
    }
}
