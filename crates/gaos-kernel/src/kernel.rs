//! `SessionKernel`: the single-writer, IO-free authoritative session.
//!
//! Every change goes through a prepared transition: `prepare_*` computes the
//! events, deltas and next state without touching live state; the host
//! persists the events; `commit` publishes the next state (or `abort` drops
//! it). A prepared transition holds a *patch* against its base revision, not
//! a copy of the kernel, so preparing costs the same at revision 10 and at
//! revision 10 million.
//!
//! Where things are: this file holds the live state and construction;
//! `query` the read-only API; `ingest`, `extension`, `advance` and `timeout`
//! the `prepare_*` entry points; `resolve` one resolution of the open window
//! (commit–reveal through the [`CommitmentBook`](crate::commitment));
//! `derive` what a reducer state implies (view facts, seat views, next
//! window); `prepared` the prepared transition; `commit` how its patch is
//! applied; `rehydrate` rebuilding a kernel from its transcript, one function
//! per event kind; `checkpoint` checkpoints, restore and compaction;
//! `signing` signed sessions (chain heads, ingest checks, seat signatures).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use gaos_json::Value;

use crate::action::SubmittedAction;
use crate::commitment::CommitmentBook;
use crate::error::{AdvanceCode, KernelError};
use crate::event::{EventBody, EventLog, SessionEvent, event_id};
use crate::hash::{StableHashMap, StableHashSet, new_map, new_set};
use crate::history::HistoryLookup;
use crate::observation::ObservationDelta;
use crate::options::{HostTime, KernelOptions, ResolvedLimits};
use crate::protocol::IntentWindow;
use crate::reducer::{CloneIsolation, StateIsolation, TickReducer};

mod advance;
mod checkpoint;
mod commit;
mod derive;
mod extension;
mod ingest;
mod prepared;
mod query;
mod rehydrate;
mod resolve;
mod signing;
mod timeout;

use commit::Patch;
use ingest::{IngestOverlay, StoredReceipt};
use prepared::Completion;
use resolve::RejectionRecord;

// Kept at its old path (`kernel::validate_timeout_audit`); defined in audit.rs.
pub use crate::audit::validate_timeout_audit;
pub use crate::receipt::{IngestReceipt, ReceiptStatus};
pub use advance::{AdvanceSummary, SessionWarning};
pub use checkpoint::{CompactRequest, CompactSummary};
pub use ingest::{IngestBatch, IngestOutcome};
pub use prepared::{Prepared, PreparedResult};
use signing::SeatChains;
pub use signing::{ChainPosition, SeatSignatureInput};

static NEXT_KERNEL_ID: AtomicU64 = AtomicU64::new(1);

/// One seat's current partitioned view.
#[derive(Debug, Clone)]
struct SeatView {
    view: Arc<Value>,
    canonical: Arc<str>,
    digest: u32,
    revision: u64,
}

/// The live state.
struct Live<S> {
    state: S,
    transition_revision: u64,
    cursor: u64,
    tick: u64,
    window: IntentWindow,
    window_actions: BTreeMap<String, SubmittedAction>,
    full_view: Value,
    seat_views: Vec<SeatView>,
    receipts: StableHashMap<String, StoredReceipt>,
    /// Receipt keys in insertion order with their cursor, for eviction.
    receipt_order: std::collections::VecDeque<(u64, String)>,
    /// Every identity ever accepted: never applicable again.
    accepted: StableHashSet<String>,
    commitments: CommitmentBook<String>,
    rejections: Vec<RejectionRecord>,
    /// The events since the retention floor (all of them before any
    /// compaction).
    events: EventLog,
    last_checkpoint_tick: u64,
    /// Transition revision of the last compaction (0: never compacted).
    retention_floor: u64,
    /// Each seat's RFC-010 chain (signed sessions only).
    chains: Option<SeatChains>,
}

/// The authoritative session kernel (RFC-006).
pub struct SessionKernel<R: TickReducer> {
    id: u64,
    options: Arc<KernelOptions<R>>,
    isolation: Arc<dyn StateIsolation<R::State>>,
    limits: ResolvedLimits,
    /// Indices of `options.seats` in code-point order (for digests).
    sorted_seats: Vec<usize>,
    live: Live<R::State>,
    /// Answers for accepted identities below the retention floor.
    history: Option<Arc<dyn HistoryLookup>>,
}

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    /// `createSessionKernel(options)`.
    pub fn new(options: KernelOptions<R>) -> Result<Self, KernelError> {
        Self::from_shared(Arc::new(options))
    }

    /// Build a fresh kernel from shared options (used by rehydration).
    pub fn from_shared(options: Arc<KernelOptions<R>>) -> Result<Self, KernelError> {
        let limits = options.validate()?;
        let isolation: Arc<dyn StateIsolation<R::State>> = match &options.state_isolation {
            Some(iso) => Arc::clone(iso),
            None => Arc::new(CloneIsolation),
        };
        let state = options.reducer.init(&options.level, options.init_seed())?;
        // Probe the isolation hooks once, as the reference does.
        let probe = isolation.fork(&state);
        isolation.discard(probe);
        let mut sorted_seats: Vec<usize> = (0..options.seats.len()).collect();
        sorted_seats.sort_by(|a, b| options.seats[*a].cmp(&options.seats[*b]));
        let full_view = options.reducer.view(&state);
        let facts = Self::facts(&options, &state, &full_view)?;
        let seat_views = Self::compute_seat_views(&options, &state, None)?;
        let window = Self::window_for(&options, 0, &facts.participants)?;
        let chains = match &options.signing {
            Some(roster) => Some(SeatChains::new(&options.session_id, roster)?),
            None => None,
        };
        let live = Live {
            state,
            transition_revision: 0,
            cursor: 0,
            tick: 0,
            window,
            window_actions: BTreeMap::new(),
            full_view,
            seat_views,
            receipts: new_map(),
            receipt_order: std::collections::VecDeque::new(),
            accepted: new_set(),
            commitments: CommitmentBook::new(),
            rejections: Vec::new(),
            events: EventLog::new(),
            last_checkpoint_tick: 0,
            retention_floor: 0,
            chains,
        };
        Ok(SessionKernel {
            id: NEXT_KERNEL_ID.fetch_add(1, Ordering::Relaxed),
            options,
            isolation,
            limits,
            sorted_seats,
            live,
            history: None,
        })
    }

    fn host_time(&self) -> Result<Option<u64>, KernelError> {
        match &self.options.host_time {
            HostTime::None => Ok(None),
            HostTime::Provider(provider) => {
                let t = provider();
                if t < 0 || t as f64 > gaos_json::MAX_SAFE_INTEGER {
                    return Err(KernelError::range_error("hostTime must be a non-negative safe integer"));
                }
                Ok(Some(t as u64))
            }
        }
    }

    fn finish_events(&self, next: u64, bodies: Vec<EventBody>) -> Result<Vec<SessionEvent>, KernelError> {
        bodies
            .into_iter()
            .enumerate()
            .map(|(i, body)| {
                Ok(SessionEvent {
                    body,
                    event_id: event_id(&self.options.session_id, next, i),
                    transition_revision: next,
                    host_time: self.host_time()?,
                })
            })
            .collect()
    }

    fn prepared(
        &self,
        next: u64,
        events: Vec<SessionEvent>,
        deltas: Vec<ObservationDelta>,
        result: PreparedResult,
        patch: Patch<R::State>,
    ) -> Prepared<R::State> {
        Prepared {
            base: self.live.transition_revision,
            next,
            events,
            deltas,
            result,
            owner: self.id,
            completion: Completion::Open,
            patch: Some(patch),
        }
    }

    fn terminal_error() -> KernelError {
        KernelError::advance(AdvanceCode::Terminal, "the session has ended")
    }
}
