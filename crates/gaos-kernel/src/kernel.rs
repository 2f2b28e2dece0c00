//! `SessionKernel`: the single-writer, IO-free authoritative session.
//!
//! Every change goes through a prepared transition: `prepare_*` computes the
//! events, deltas and next state without touching live state; the host
//! persists the events; `commit` publishes the next state (or `abort` drops
//! it). A prepared transition holds a *patch* against its base revision, not
//! a copy of the kernel, so preparing costs the same at revision 10 and at
//! revision 10 million.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use gaos_json::{CanonicalSink, Value, canonical_json};
use serde::{Deserialize, Serialize};

use crate::action::{COMMIT_SCHEME, SubmittedAction};
use crate::commitment::{CommitmentBinding, CommitmentBook, RevealCheck, SaltOwner, validate_commit_envelope};
use crate::error::{AdvanceCode, IntentError, IntentErrorCode, KernelError, LifecycleCode};
use crate::event::{
    AttemptedReveal, CanonicalInput, EventBody, EventLog, ResolutionCause, ResolutionResult, SessionEvent,
    SessionHeader, SessionTranscript, SubmissionIdentity, event_id,
};
use crate::game::{CommandContext, TimeoutContext, TimeoutInput};
use crate::hash::{StableHashMap, StableHashSet, new_map, new_set};
use crate::observation::{DeltaBody, DeltaOrigin, ObservationDelta, RejectionNotice};
use crate::options::{Cadence, HostTime, KernelOptions, ResolvedLimits};
use crate::protocol::{
    CommandSubmission, Intent, IntentWindow, PROTOCOL_ID, PROTOCOL_VERSION, validate_intent_submission,
};
use crate::reducer::{CloneIsolation, StateIsolation, TickReducer};

mod rehydrate;

pub use rehydrate::validate_timeout_audit;

static NEXT_KERNEL_ID: AtomicU64 = AtomicU64::new(1);

/// `IngestReceipt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IngestReceipt {
    /// `"accepted"` or `"duplicate"`.
    pub status: String,
    pub participant_id: String,
    pub submission_id: String,
    pub cursor: u64,
    pub tick: u64,
    pub submitted_participants: Vec<String>,
    pub awaiting_participants: Vec<String>,
    pub resolved: bool,
}

impl IngestReceipt {
    pub fn is_duplicate(&self) -> bool {
        self.status == "duplicate"
    }
}

/// A live warning (never an error): a salt reused across commitments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionWarning {
    pub code: String,
    pub message: String,
    pub participant_id: String,
    pub commitment_id: u32,
}

/// `AdvanceSummary` (also the result of timeouts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdvanceSummary {
    pub resolutions: u64,
    pub partial: bool,
    pub cursor: u64,
    pub tick: u64,
    pub digest: u32,
    pub deltas: Vec<ObservationDelta>,
    pub rejections: Vec<RejectionNotice>,
    pub warnings: Vec<SessionWarning>,
}

/// What a prepared transition will report when committed.
#[derive(Debug, Clone, PartialEq)]
pub enum PreparedResult {
    Ingest(IngestReceipt),
    Advance(AdvanceSummary),
    Extension,
    /// [`SessionKernel::prepare_ingest_and_resolve`]: the ingest and the
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
enum Completion {
    Open,
    Committed,
    Aborted,
}

/// A prepared transition: single-use, bound to its base revision, completed
/// exactly once by `commit` or `abort`.
pub struct Prepared<S> {
    base: u64,
    next: u64,
    events: Vec<SessionEvent>,
    deltas: Vec<ObservationDelta>,
    result: PreparedResult,
    owner: u64,
    completion: Completion,
    patch: Option<Patch<S>>,
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

/// A durable rejection, for snapshot notices.
#[derive(Debug, Clone, PartialEq)]
struct RejectionRecord {
    transition_revision: u64,
    tick: u64,
    participant_id: String,
    submission_id: String,
}

#[derive(Debug, Clone)]
struct StoredReceipt {
    canonical_command: String,
    tick_id: String,
    revision: u64,
    receipt: IngestReceipt,
}

/// One seat's current partitioned view.
#[derive(Debug, Clone)]
struct SeatView {
    view: Arc<Value>,
    canonical: Arc<str>,
    digest: u32,
    revision: u64,
}

fn identity_key(participant: &str, submission: &str) -> String {
    let mut key = String::with_capacity(participant.len() + submission.len() + 1);
    key.push_str(participant);
    key.push('\u{0}');
    key.push_str(submission);
    key
}

/// The changes a prepared transition applies on commit.
enum Patch<S> {
    Noop,
    Ingest(Box<IngestPatch>),
    Extension,
    Advance(Box<AdvancePatch<S>>),
    /// Consecutive transitions prepared together (persisted in one write),
    /// each with its transition revision.
    Chain(Vec<(u64, Patch<S>)>),
}

/// Ingests prepared earlier in the same batch, not committed yet.
#[derive(Default)]
struct IngestOverlay {
    patches: Vec<IngestPatch>,
}

impl IngestOverlay {
    fn receipt(&self, key: &str) -> Option<&StoredReceipt> {
        self.patches.iter().rev().find(|p| p.receipt_key == key).map(|p| &p.receipt)
    }
    fn holds(&self, seat: &str) -> bool {
        self.patches.iter().any(|p| p.seat == seat)
    }
    fn accepted(&self, key: &str) -> bool {
        self.patches.iter().any(|p| p.receipt_key == key)
    }
}

enum IngestStep {
    Duplicate(IngestReceipt),
    Accepted { events: Vec<SessionEvent>, patch: Box<IngestPatch>, receipt: IngestReceipt },
}

/// What became of one submission of [`SessionKernel::prepare_ingest_batch`].
#[derive(Debug, Clone, PartialEq)]
pub enum IngestOutcome {
    /// Accepted: its `intent-accepted` event is in the batch's transition.
    Accepted(IngestReceipt),
    /// An exact retry of an accepted submission (nothing to persist).
    Duplicate(IngestReceipt),
    /// Not tried: an earlier submission completed the window; submit it
    /// again once the batch is committed.
    Deferred,
}

/// The result of [`SessionKernel::prepare_ingest_batch`].
pub struct IngestBatch<S> {
    /// The accepted ingests (and the resolution they completed), if any.
    pub prepared: Option<Prepared<S>>,
    /// One outcome per submission, in order.
    pub outcomes: Vec<Result<IngestOutcome, KernelError>>,
}

struct IngestPatch {
    seat: String,
    intent: Intent,
    action: SubmittedAction,
    receipt_key: String,
    receipt: StoredReceipt,
}

struct AdvancePatch<S> {
    state: Option<S>,
    cursor: u64,
    tick: u64,
    window: IntentWindow,
    window_actions: BTreeMap<String, SubmittedAction>,
    full_view: Value,
    seat_views: Vec<SeatView>,
    /// The resolution's commitment changes, layered over the live book.
    commitments: CommitmentBook<String>,
    removed_receipts: Vec<String>,
    rejections: Vec<RejectionRecord>,
    last_checkpoint_tick: u64,
    evict: bool,
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
    events: EventLog,
    last_checkpoint_tick: u64,
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
}

/// What a freshly advanced reducer state implies: its views and next window.
struct Derived {
    full_view: Value,
    facts: ViewFacts,
    seat_views: Vec<SeatView>,
    window: IntentWindow,
}

/// Status and metrics derived from a full view.
struct ViewFacts {
    status: String,
    stars: Option<f64>,
    actions_used: u64,
    participants: Vec<String>,
}

fn invalid_view(message: impl Into<String>) -> KernelError {
    KernelError::advance(AdvanceCode::InvalidView, message)
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
        };
        Ok(SessionKernel {
            id: NEXT_KERNEL_ID.fetch_add(1, Ordering::Relaxed),
            options,
            isolation,
            limits,
            sorted_seats,
            live,
        })
    }

    // ----- queries -------------------------------------------------------

    pub fn options(&self) -> &Arc<KernelOptions<R>> {
        &self.options
    }
    pub fn session_id(&self) -> &str {
        &self.options.session_id
    }
    pub fn limits(&self) -> &ResolvedLimits {
        &self.limits
    }
    /// The gameplay window revision.
    pub fn cursor(&self) -> u64 {
        self.live.cursor
    }
    pub fn tick(&self) -> u64 {
        self.live.tick
    }
    /// Revision of the last committed transition.
    pub fn transition_revision(&self) -> u64 {
        self.live.transition_revision
    }
    /// The open window.
    pub fn window(&self) -> &IntentWindow {
        &self.live.window
    }
    /// The reducer state (read-only).
    pub fn state(&self) -> &R::State {
        &self.live.state
    }
    /// The full (unpartitioned) view. Never send it to a seat.
    pub fn full_view(&self) -> &Value {
        &self.live.full_view
    }
    /// The full view's status (`playing`, `won`, `failed`, `ended`).
    pub fn status(&self) -> &str {
        self.live.full_view.get("status").and_then(Value::as_str).unwrap_or("playing")
    }
    /// True once the full view's status is no longer `playing`.
    pub fn is_terminal(&self) -> bool {
        self.status() != "playing"
    }

    fn seat_index(&self, seat: &str) -> Result<usize, KernelError> {
        self.options
            .seats
            .iter()
            .position(|s| s == seat)
            .ok_or_else(|| KernelError::type_error(format!("unknown seat {seat:?}")))
    }

    /// `observe(seat)`: the seat's current partitioned view.
    pub fn observe(&self, seat: &str) -> Result<Arc<Value>, KernelError> {
        Ok(Arc::clone(&self.live.seat_views[self.seat_index(seat)?].view))
    }

    /// `observeAll()`: every declared seat's view.
    pub fn observe_all(&self) -> BTreeMap<String, Arc<Value>> {
        self.options
            .seats
            .iter()
            .zip(&self.live.seat_views)
            .map(|(seat, v)| (seat.clone(), Arc::clone(&v.view)))
            .collect()
    }

    /// The canonical text of a seat's view (cached).
    pub fn observe_canonical(&self, seat: &str) -> Result<Arc<str>, KernelError> {
        Ok(Arc::clone(&self.live.seat_views[self.seat_index(seat)?].canonical))
    }

    /// Whether `(participant, submission_id)` was ever accepted (the
    /// permanent identity index): a host needs stored answers only for these.
    pub fn was_accepted(&self, participant: &str, submission_id: &str) -> bool {
        self.live.accepted.contains(&identity_key(participant, submission_id))
    }

    /// Seats the open window still awaits, in window order.
    pub fn awaiting_seats(&self) -> Vec<String> {
        self.live.window.awaiting()
    }

    pub fn view_revision(&self, seat: &str) -> Result<u64, KernelError> {
        Ok(self.live.seat_views[self.seat_index(seat)?].revision)
    }

    /// `digest()`: FNV-1a of `{"cursor":C,"tick":T,"views":{...}}`.
    pub fn digest(&self) -> u32 {
        Self::kernel_digest(&self.options, &self.sorted_seats, self.live.cursor, self.live.tick, &self.live.seat_views)
    }

    /// `sessionHeader()`.
    pub fn session_header(&self) -> SessionHeader {
        self.options.header()
    }

    /// The persisted events so far.
    pub fn events(&self) -> &EventLog {
        &self.live.events
    }

    /// `liveTranscript()`.
    pub fn live_transcript(&self) -> SessionTranscript {
        SessionTranscript { header: self.session_header(), events: self.live.events.to_vec() }
    }

    /// `snapshot(seat, afterTransitionRevision)`: a resynchronization delta
    /// with every durable rejection notice after `after` (default 0).
    pub fn snapshot(&self, seat: &str, after: Option<u64>) -> Result<ObservationDelta, KernelError> {
        let index = self.seat_index(seat)?;
        let after = after.unwrap_or(0);
        if after > self.live.transition_revision {
            return Err(KernelError::range_error(format!(
                "afterTransitionRevision {after} is beyond the live transition revision {}",
                self.live.transition_revision
            )));
        }
        let sv = &self.live.seat_views[index];
        let rejections =
            self.live.rejections.iter().filter(|r| r.transition_revision > after).map(|r| notice(seat, r)).collect();
        Ok(ObservationDelta {
            seat: seat.into(),
            scope_id: seat.into(),
            transition_revision: self.live.transition_revision,
            view_revision: sv.revision,
            tick: self.live.tick,
            codec: "v2".into(),
            origin: DeltaOrigin::Snapshot,
            acknowledgements: Vec::new(),
            rejections,
            body: DeltaBody::Snapshot { view: Arc::clone(&sv.view) },
            view_digest: sv.digest,
        })
    }

    // ----- helpers ---------------------------------------------------------

    fn kernel_digest(options: &KernelOptions<R>, sorted: &[usize], cursor: u64, tick: u64, views: &[SeatView]) -> u32 {
        let seats = sorted.iter().map(|&index| (options.seats[index].as_str(), &views[index]));
        crate::replay::verify::digest_of_views(cursor, tick, seats, |view, h| h.push_str(&view.canonical))
    }

    /// Status, stars, metrics and window participants of a full view.
    fn facts(options: &KernelOptions<R>, state: &R::State, view: &Value) -> Result<ViewFacts, KernelError> {
        let map = view.as_object().ok_or_else(|| invalid_view("a view must be a JSON object"))?;
        let status = match map.get("status").and_then(Value::as_str) {
            Some(s @ ("playing" | "won" | "failed" | "ended")) => s.to_owned(),
            _ => {
                return Err(invalid_view("view.status must be playing, won, failed or ended"));
            }
        };
        let stars = match map.get("stars") {
            None => None,
            Some(Value::Number(x)) => Some(*x),
            Some(_) => return Err(invalid_view("view.stars must be a number")),
        };
        if status == "ended" && stars.is_some() {
            return Err(invalid_view("an ended view must not report stars"));
        }
        let actions_used = match options.reducer.replay_metrics(state) {
            Some(m) => m.actions_used,
            None => view
                .get("hud")
                .and_then(|hud| hud.get("actionsUsed"))
                .and_then(Value::as_f64)
                .filter(|x| gaos_json::is_safe_integer(*x) && *x >= 0.0)
                .map(|x| x as u64)
                .ok_or_else(|| invalid_view("actionsUsed must be a non-negative safe integer"))?,
        };
        let participants = participants_of(view, &options.seats)?;
        Ok(ViewFacts { status, stars, actions_used, participants })
    }

    fn compute_seat_views(
        options: &KernelOptions<R>,
        state: &R::State,
        previous: Option<&[SeatView]>,
    ) -> Result<Vec<SeatView>, KernelError> {
        options
            .seats
            .iter()
            .enumerate()
            .map(|(i, seat)| {
                let view = options.reducer.view_for(state, seat);
                if !view.is_object() {
                    return Err(invalid_view(format!("the view for {seat} must be a JSON object")));
                }
                let canonical = canonical_json(&view);
                let revision = previous.map_or(0, |p| p[i].revision + 1);
                Ok(SeatView {
                    digest: gaos_json::fnv1a32(&canonical),
                    canonical: Arc::from(canonical),
                    view: Arc::new(view),
                    revision,
                })
            })
            .collect()
    }

    /// The window at `cursor` for participants taken from a view. They are
    /// a subset of the declared seats (checked by `participants_of`), whose
    /// ids were validated at construction.
    fn window_for(
        options: &KernelOptions<R>,
        cursor: u64,
        participants: &[String],
    ) -> Result<IntentWindow, KernelError> {
        let mut sorted = participants.to_vec();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(KernelError::type_error("view participants must be unique"));
        }
        Ok(IntentWindow {
            session_id: options.session_id.clone(),
            tick_id: crate::protocol::make_tick_id(&options.session_id, cursor),
            revision: cursor,
            participants: sorted,
            intents: BTreeMap::new(),
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

    // ----- ingest ----------------------------------------------------------

    /// `prepareIngest(submission)` for a JSON submission object.
    pub fn prepare_ingest_value(&self, submission: &Value) -> Result<Prepared<R::State>, KernelError> {
        let submission = CommandSubmission::from_value(submission)?;
        self.prepare_ingest(&submission)
    }

    /// `prepareIngest(submission)`: the reference check order, first failure
    /// wins (kernel spec §4.8).
    pub fn prepare_ingest(&self, sub: &CommandSubmission) -> Result<Prepared<R::State>, KernelError> {
        let next = self.live.transition_revision + 1;
        Ok(match self.ingest_step(sub, &IngestOverlay::default(), next)? {
            IngestStep::Duplicate(receipt) => self.prepared(
                self.live.transition_revision,
                Vec::new(),
                Vec::new(),
                PreparedResult::Ingest(receipt),
                Patch::Noop,
            ),
            IngestStep::Accepted { events, patch, receipt } => {
                self.prepared(next, events, Vec::new(), PreparedResult::Ingest(receipt), Patch::Ingest(patch))
            }
        })
    }

    /// One ingest against live state plus the ingests already prepared in
    /// the same batch (`overlay`), its events carrying `next`.
    fn ingest_step(
        &self,
        sub: &CommandSubmission,
        overlay: &IngestOverlay,
        next: u64,
    ) -> Result<IngestStep, KernelError> {
        // 1. envelope
        if sub.protocol != PROTOCOL_ID || sub.protocol_version != PROTOCOL_VERSION {
            return Err(KernelError::intent(
                IntentErrorCode::InvalidProtocol,
                format!("expected protocol {PROTOCOL_ID} {PROTOCOL_VERSION}"),
            ));
        }
        if sub.session_id != self.options.session_id {
            return Err(KernelError::intent(IntentErrorCode::WrongSession, "submission is for another session"));
        }
        let Some(command) = &sub.command else {
            return Err(KernelError::intent(IntentErrorCode::InvalidSubmission, "command must be a JSON value"));
        };
        let canonical_command = canonical_json(command);
        // 3. retained receipt
        if let Some(submission_id) = &sub.submission_id {
            let key = identity_key(&sub.participant_id, submission_id);
            if let Some(stored) = overlay.receipt(&key).or_else(|| self.live.receipts.get(&key)) {
                if stored.canonical_command != canonical_command
                    || stored.tick_id != sub.tick_id
                    || stored.revision as f64 != sub.revision
                {
                    return Err(KernelError::conflict(format!(
                        "submission {submission_id} of {} was already accepted with other content",
                        sub.participant_id
                    )));
                }
                let mut receipt = stored.receipt.clone();
                receipt.status = "duplicate".into();
                receipt.resolved = stored.receipt.cursor < self.live.cursor;
                return Ok(IngestStep::Duplicate(receipt));
            }
        }
        // 4. window
        validate_intent_submission(&self.live.window, sub)?;
        let submission_id = sub.submission_id.clone().expect("validated above");
        // 5. terminal
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        // 6. permanently single-use identities
        let key = identity_key(&sub.participant_id, &submission_id);
        if self.live.accepted.contains(&key) || overlay.accepted(&key) {
            return Err(KernelError::unknown_submission(format!(
                "submission {submission_id} of {} was accepted before and cannot be applied again",
                sub.participant_id
            )));
        }
        // 7. action
        let ctx = CommandContext {
            session_id: &self.options.session_id,
            participant_id: &sub.participant_id,
            submission_id: &submission_id,
            cursor: self.live.cursor,
            tick: self.live.tick,
        };
        let action = (self.options.command_to_action)(command, &ctx).map_err(|e| {
            KernelError::Intent(IntentError {
                code: IntentErrorCode::IllegalCommand,
                message: format!("the game cannot map this command: {}", e.message),
                cause: Some(e.message),
            })
        })?;
        self.check_action_commitments(&sub.participant_id, &action)?;
        // 8. game validation
        self.options.reducer.validate_command(&self.live.state, &sub.participant_id, &action).map_err(|e| {
            KernelError::Intent(IntentError {
                code: IntentErrorCode::IllegalCommand,
                message: format!("illegal command: {}", e.message),
                cause: Some(e.message),
            })
        })?;
        // 9. collection
        if self.live.window.intents.contains_key(&sub.participant_id) || overlay.holds(&sub.participant_id) {
            // A different intent already holds the seat (an exact retry was
            // answered from its receipt above).
            return Err(KernelError::intent(
                IntentErrorCode::ConflictingIntent,
                format!("{} already submitted an intent for this window", sub.participant_id),
            ));
        }
        let intent = Intent {
            participant_id: sub.participant_id.clone(),
            submission_id: submission_id.clone(),
            command: command.clone(),
            client_time: sub.client_time.clone(),
            prev_chain_hash: sub.prev_chain_hash.clone(),
            sig: sub.sig.clone(),
        };
        let (submitted, awaiting) = self.lists_with(&sub.participant_id, overlay);
        let receipt = IngestReceipt {
            status: "accepted".into(),
            participant_id: sub.participant_id.clone(),
            submission_id: submission_id.clone(),
            cursor: self.live.cursor,
            tick: self.live.tick,
            submitted_participants: submitted,
            awaiting_participants: awaiting,
            resolved: false,
        };
        let body = EventBody::IntentAccepted {
            tick: self.live.tick,
            revision: self.live.cursor,
            participant_id: sub.participant_id.clone(),
            submission_id: submission_id.clone(),
            command: command.clone(),
            canonical_command: canonical_command.clone(),
            action: Some(Box::new(action.clone())),
            client_time: sub.client_time.clone(),
            prev_chain_hash: sub.prev_chain_hash.clone(),
            sig: sub.sig.clone(),
        };
        let events = self.finish_events(next, vec![body])?;
        let patch = IngestPatch {
            seat: sub.participant_id.clone(),
            intent,
            action,
            receipt_key: key,
            receipt: StoredReceipt {
                canonical_command,
                tick_id: self.live.window.tick_id.clone(),
                revision: self.live.cursor,
                receipt: receipt.clone(),
            },
        };
        Ok(IngestStep::Accepted { events, patch: Box::new(patch), receipt })
    }

    /// Ingest a submission and, in turns cadence, resolve the window it
    /// completes in the same prepared value: two consecutive transitions
    /// (the `intent-accepted` event at revision n+1, the resolution at n+2)
    /// that a host persists in one write. Identical in events, deltas and
    /// state to `prepare_ingest` + commit + `prepare_advance` + commit.
    /// Anything else (pending windows, duplicates, ticks cadence) is a plain
    /// ingest.
    pub fn prepare_ingest_and_resolve(&self, sub: &CommandSubmission) -> Result<Prepared<R::State>, KernelError> {
        let mut batch = self.prepare_ingest_batch(std::slice::from_ref(sub))?;
        match batch.outcomes.pop() {
            Some(Err(e)) => Err(e),
            Some(Ok(IngestOutcome::Duplicate(receipt))) => Ok(self.prepared(
                self.live.transition_revision,
                Vec::new(),
                Vec::new(),
                PreparedResult::Ingest(receipt),
                Patch::Noop,
            )),
            _ => batch.prepared.ok_or_else(|| KernelError::type_error("an accepted ingest yields a transition")),
        }
    }

    /// Prepare several submissions as consecutive transitions of one
    /// prepared value (a host persists them in one write): each ingest is
    /// checked against live state plus the ingests before it in the batch,
    /// exactly as if the earlier ones had been committed; in turns cadence
    /// the ingest that completes the window is followed by its resolution,
    /// and the submissions after it are left for later (`Deferred`).
    /// Refused submissions change nothing; `Err` only when game code fails
    /// while resolving (the ingests are then not prepared either).
    pub fn prepare_ingest_batch(&self, subs: &[CommandSubmission]) -> Result<IngestBatch<R::State>, KernelError> {
        let mut overlay = IngestOverlay::default();
        let mut events = Vec::new();
        let mut outcomes = Vec::with_capacity(subs.len());
        let mut resolved = false;
        for sub in subs {
            if resolved {
                outcomes.push(Ok(IngestOutcome::Deferred));
                continue;
            }
            let next = self.live.transition_revision + 1 + overlay.patches.len() as u64;
            match self.ingest_step(sub, &overlay, next) {
                Err(e) => outcomes.push(Err(e)),
                Ok(IngestStep::Duplicate(receipt)) => outcomes.push(Ok(IngestOutcome::Duplicate(receipt))),
                Ok(IngestStep::Accepted { events: mut step_events, patch, receipt }) => {
                    resolved =
                        matches!(self.options.cadence, Cadence::Turns) && receipt.awaiting_participants.is_empty();
                    events.append(&mut step_events);
                    overlay.patches.push(*patch);
                    outcomes.push(Ok(IngestOutcome::Accepted(receipt)));
                }
            }
        }
        if overlay.patches.is_empty() {
            return Ok(IngestBatch { prepared: None, outcomes });
        }
        let last_receipt = overlay.patches.last().map(|p| p.receipt.receipt.clone()).expect("non-empty");
        let ingests = overlay.patches.len() as u64;
        let mut chain: Vec<(u64, Patch<R::State>)> = Vec::with_capacity(overlay.patches.len() + 1);
        let mut deltas = Vec::new();
        let mut result = PreparedResult::Ingest(last_receipt.clone());
        let mut next = self.live.transition_revision + ingests;
        if resolved {
            let mut draft = self.start_draft();
            draft.next_revision += ingests;
            for patch in &overlay.patches {
                draft.window.intents.insert(patch.seat.clone(), patch.intent.clone());
                draft.window_actions.insert(patch.seat.clone(), patch.action.clone());
            }
            self.resolve_once(&mut draft, ResolutionCause::Complete, None)?;
            let mut advance = self.finish_advance(draft, false)?;
            let summary = advance.summary().cloned().expect("an advance has a summary");
            let Some(Patch::Advance(advance_patch)) = advance.patch.take() else {
                return Err(KernelError::lifecycle(LifecycleCode::AlreadyCompleted, "the advance holds no patch"));
            };
            events.append(&mut advance.events);
            deltas = std::mem::take(&mut advance.deltas);
            result = PreparedResult::IngestAndAdvance(last_receipt, summary);
            next = advance.next;
            for (i, patch) in overlay.patches.into_iter().enumerate() {
                chain.push((self.live.transition_revision + 1 + i as u64, Patch::Ingest(Box::new(patch))));
            }
            chain.push((next, Patch::Advance(advance_patch)));
        } else {
            for (i, patch) in overlay.patches.into_iter().enumerate() {
                chain.push((self.live.transition_revision + 1 + i as u64, Patch::Ingest(Box::new(patch))));
            }
        }
        let patch = if chain.len() == 1 { chain.pop().expect("one link").1 } else { Patch::Chain(chain) };
        Ok(IngestBatch { prepared: Some(self.prepared(next, events, deltas, result, patch)), outcomes })
    }

    /// Submitted/awaiting lists of the open window once `seat` submitted.
    fn lists_with(&self, seat: &str, overlay: &IngestOverlay) -> (Vec<String>, Vec<String>) {
        let window = &self.live.window;
        let mut submitted = Vec::with_capacity(window.participants.len());
        let mut awaiting = Vec::new();
        for p in &window.participants {
            if p == seat || window.intents.contains_key(p) || overlay.holds(p) {
                submitted.push(p.clone());
            } else {
                awaiting.push(p.clone());
            }
        }
        (submitted, awaiting)
    }

    /// Ingest step 7: impersonation and commit–reveal envelope checks.
    fn check_action_commitments(&self, participant: &str, action: &SubmittedAction) -> Result<(), KernelError> {
        if let Some(seat) = &action.seat
            && seat != participant
        {
            return Err(KernelError::conflict(format!("{participant} cannot submit an action for {seat}")));
        }
        if action.verified_payload.is_some() {
            return Err(KernelError::conflict("verifiedPayload is set by the kernel, never by a submission"));
        }
        match (&action.commit, &action.reveal) {
            (Some(_), Some(_)) => Err(KernelError::conflict("an action cannot commit and reveal at once")),
            (Some(commit), None) => {
                validate_commit_envelope(commit).map_err(KernelError::conflict)?;
                let seat = participant.to_owned();
                let expected = self.live.commitments.view().next_id(&seat);
                if commit.commitment_id != expected {
                    return Err(KernelError::conflict(format!(
                        "{participant}'s next commitment id is {expected}, not {}",
                        commit.commitment_id
                    )));
                }
                let open = self.live.commitments.open_count(&seat);
                if open >= self.limits.max_open_commitments_per_seat {
                    return Err(KernelError::conflict(format!("{participant} already holds {open} open commitments")));
                }
                Ok(())
            }
            (None, Some(reveal)) => {
                let record = self
                    .live
                    .commitments
                    .view()
                    .commitment(&participant.to_owned(), reveal.commitment_id)
                    .filter(|r| !r.revealed)
                    .ok_or_else(|| {
                        KernelError::conflict(format!("{participant} has no open commitment {}", reveal.commitment_id))
                    })?;
                let binding = CommitmentBinding {
                    session_id: &self.options.session_id,
                    seat: participant,
                    commitment_id: reveal.commitment_id,
                    window_ref: record.window_ref,
                };
                // Well-formedness only; the match is decided at resolution.
                crate::commitment::commitment_preimage(&binding, &reveal.salt, &reveal.payload)
                    .map_err(|e| KernelError::conflict(format!("malformed reveal: {e}")))?;
                Ok(())
            }
            (None, None) => Ok(()),
        }
    }

    // ----- extension -------------------------------------------------------

    /// `prepareExtension(lane, record)`: a non-gameplay record; never reaches
    /// the reducer, views or digest.
    pub fn prepare_extension(&self, lane: &str, record: &Value) -> Result<Prepared<R::State>, KernelError> {
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        if lane.is_empty() {
            return Err(KernelError::type_error("extension lane must be a non-empty string"));
        }
        let Some(map) = record.as_object() else {
            return Err(KernelError::type_error("extension record must be a JSON object"));
        };
        let bytes = canonical_json(record).len() as u64;
        if bytes > self.limits.max_extension_bytes {
            return Err(KernelError::range_error(format!(
                "extension record is {bytes} bytes, over maxExtensionBytes {}",
                self.limits.max_extension_bytes
            )));
        }
        let next = self.live.transition_revision + 1;
        let events = self.finish_events(
            next,
            vec![EventBody::Extension { tick: self.live.tick, lane: lane.into(), record: map.clone() }],
        )?;
        Ok(self.prepared(next, events, Vec::new(), PreparedResult::Extension, Patch::Extension))
    }

    // ----- advance / timeout ----------------------------------------------

    fn start_draft(&self) -> Draft<R::State> {
        Draft {
            state: None,
            cursor: self.live.cursor,
            tick: self.live.tick,
            window: self.live.window.clone(),
            window_actions: self.live.window_actions.clone(),
            full_view: None,
            seat_views: None,
            commitments: CommitmentBook::new(),
            removed_receipts: Vec::new(),
            rejections: Vec::new(),
            last_checkpoint_tick: self.live.last_checkpoint_tick,
            bodies: Vec::new(),
            deltas: Vec::new(),
            notices: Vec::new(),
            warnings: Vec::new(),
            resolutions: 0,
            terminal: self.is_terminal(),
            rejected: false,
            next_revision: self.live.transition_revision + 1,
        }
    }

    /// `prepareAdvance(target)`: resolve the open window (turns) or the ticks
    /// up to `target` inclusive (ticks), bounded by the catch-up limit.
    pub fn prepare_advance(&self, target: Option<f64>) -> Result<Prepared<R::State>, KernelError> {
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        let mut draft = self.start_draft();
        let mut partial = false;
        match self.options.cadence {
            Cadence::Turns => {
                if target.is_some() {
                    return Err(KernelError::advance(AdvanceCode::InvalidTarget, "turns cadence takes no target"));
                }
                if !draft.window.is_complete() {
                    return Err(KernelError::advance(
                        AdvanceCode::NotReady,
                        format!("the window still awaits {}", draft.window.awaiting().join(", ")),
                    ));
                }
                self.resolve_once(&mut draft, ResolutionCause::Complete, None)?;
            }
            Cadence::Ticks(_) => {
                let tick = self.live.tick;
                let target = match target {
                    None => tick,
                    Some(t) => {
                        if !(gaos_json::is_safe_integer(t) && t >= 0.0) {
                            return Err(KernelError::advance(
                                AdvanceCode::InvalidTarget,
                                "target must be a non-negative safe integer",
                            ));
                        }
                        t as u64
                    }
                };
                if target < tick {
                    return Err(KernelError::advance(
                        AdvanceCode::StaleTarget,
                        format!("target {target} is behind the open tick {tick}"),
                    ));
                }
                if target - tick > self.limits.max_future_ticks {
                    return Err(KernelError::advance(
                        AdvanceCode::InvalidTarget,
                        format!("target {target} is more than maxFutureTicks {} ahead", self.limits.max_future_ticks),
                    ));
                }
                let requested = target - tick + 1;
                let count = requested.min(self.limits.max_catch_up_ticks);
                partial = requested > count;
                for _ in 0..count {
                    let cause =
                        if draft.window.is_complete() { ResolutionCause::Complete } else { ResolutionCause::Tick };
                    self.resolve_once(&mut draft, cause, None)?;
                    if draft.terminal || draft.rejected {
                        break;
                    }
                }
            }
        }
        self.finish_advance(draft, partial)
    }

    /// `timeoutToAction(ctx, timeout)` with the session's mapper, if any.
    pub fn timeout_to_action(&self, timeout: &TimeoutInput) -> Option<Result<SubmittedAction, KernelError>> {
        let mapper = self.options.timeout_to_action.as_ref()?;
        let ctx = TimeoutContext {
            session_id: self.options.session_id.clone(),
            game: self.options.game.clone(),
            level_id: self.options.level_id.clone(),
            level_version: self.options.level_version.clone(),
            level: self.options.level.clone(),
            seed: self.options.init_seed(),
            participant_id: timeout.participant_id.clone(),
            window_ref: self.live.cursor,
        };
        Some(mapper(&ctx, timeout).map_err(KernelError::from))
    }

    /// `prepareTimeout(timeout, forcedInput)`: resolve the open window with a
    /// recorded system input (from the timeout mapper, or `forced_input`).
    pub fn prepare_timeout(
        &self,
        timeout: &TimeoutInput,
        forced_input: Option<&SubmittedAction>,
    ) -> Result<Prepared<R::State>, KernelError> {
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        if timeout.timeout_id.is_empty() || timeout.reason.is_empty() {
            return Err(KernelError::type_error("timeoutId and reason must be non-empty strings"));
        }
        if timeout.tick != self.live.tick as f64 {
            return Err(KernelError::advance(
                AdvanceCode::StaleTarget,
                format!("timeout tick {} is not the open tick {}", timeout.tick, self.live.tick),
            ));
        }
        if let Some(seat) = &timeout.participant_id {
            if !self.live.window.has_participant(seat) {
                return Err(KernelError::conflict(format!("{seat} is not a participant of the open window")));
            }
            if self.live.window.intents.contains_key(seat) {
                return Err(KernelError::conflict(format!("{seat} already submitted for the open window")));
            }
        }
        let mut action = match self.timeout_to_action(timeout) {
            Some(mapped) => {
                let mapped = mapped?;
                if let Some(forced) = forced_input
                    && canonical_json(&forced.to_value()) != canonical_json(&mapped.to_value())
                {
                    return Err(KernelError::conflict("the forced input differs from the game's timeout mapping"));
                }
                mapped
            }
            None => forced_input.cloned().ok_or_else(|| {
                KernelError::type_error("a timeout needs a forced input when the game has no timeout mapper")
            })?,
        };
        match (&timeout.participant_id, &action.seat) {
            (Some(seat), Some(action_seat)) if action_seat != seat => {
                return Err(KernelError::conflict(format!("a timeout for {seat} cannot act for {action_seat}")));
            }
            (Some(seat), None) => action.seat = Some(seat.clone()),
            (None, Some(action_seat)) => {
                return Err(KernelError::conflict(format!(
                    "a window-wide timeout cannot carry an action for {action_seat}"
                )));
            }
            _ => {}
        }
        if action.commit.is_some() || action.reveal.is_some() || action.verified_payload.is_some() {
            return Err(KernelError::conflict("a timeout input cannot carry commit, reveal or verifiedPayload"));
        }
        let mut draft = self.start_draft();
        draft.bodies.push(EventBody::Timeout {
            tick: self.live.tick,
            timeout_id: timeout.timeout_id.clone(),
            window_ref: self.live.cursor,
            participant_id: timeout.participant_id.clone(),
            reason: timeout.reason.clone(),
            timeout_policy_ref: timeout.timeout_policy_ref.clone(),
        });
        let system_input = CanonicalInput {
            participant_id: timeout.participant_id.clone(),
            submission_id: None,
            canonical_command: None,
            cursor: None,
            action,
            client_time: None,
            prev_chain_hash: None,
            sig: None,
        };
        self.resolve_once(&mut draft, ResolutionCause::Timeout, Some(system_input))?;
        self.finish_advance(draft, false)
    }

    /// One resolution (or rejection) of the draft's open window.
    fn resolve_once(
        &self,
        draft: &mut Draft<R::State>,
        cause: ResolutionCause,
        system_input: Option<CanonicalInput>,
    ) -> Result<(), KernelError> {
        let next_revision = draft.next_revision;
        let window = &draft.window;
        let mut inputs: Vec<CanonicalInput> = Vec::with_capacity(window.intents.len() + 1);
        for participant in &window.participants {
            let Some(intent) = window.intents.get(participant) else {
                continue;
            };
            let mut action = draft.window_actions.get(participant).cloned().unwrap_or_default();
            if action.seat.is_none() {
                action.seat = Some(participant.clone());
            }
            inputs.push(CanonicalInput {
                participant_id: Some(participant.clone()),
                submission_id: Some(intent.submission_id.clone()),
                canonical_command: Some(canonical_json(&intent.command)),
                cursor: Some(window.revision),
                action,
                client_time: intent.client_time.clone(),
                prev_chain_hash: intent.prev_chain_hash.clone(),
                sig: intent.sig.clone(),
            });
        }
        // Verify every reveal before anything is applied.
        for input in &inputs {
            let Some(reveal) = &input.action.reveal else {
                continue;
            };
            let seat = input.participant_id.clone().expect("user input");
            let book = draft.commitments.over(&self.live.commitments);
            match book.check_reveal(
                &self.options.session_id,
                &seat,
                reveal.commitment_id,
                &reveal.salt,
                &reveal.payload,
            ) {
                RevealCheck::Match(_) => {}
                RevealCheck::Mismatch(_) | RevealCheck::Unhashable(_) => {
                    self.reject(draft, input, reveal.commitment_id, next_revision);
                    return Ok(());
                }
                RevealCheck::Unknown | RevealCheck::AlreadyRevealed(_) => {
                    return Err(KernelError::conflict(format!(
                        "{seat} has no open commitment {}",
                        reveal.commitment_id
                    )));
                }
            }
        }
        // Commitment bookkeeping, verified payloads.
        for input in &mut inputs {
            let seat = input.participant_id.clone().expect("user input");
            if let Some(commit) = &input.action.commit {
                draft.commitments.record_commit(
                    seat.clone(),
                    commit.commitment_id,
                    commit.hash.clone(),
                    draft.tick,
                    (),
                );
            }
            if let Some(reveal) = input.action.reveal.clone() {
                let live = Some(&self.live.commitments);
                let revealed = draft.commitments.mark_revealed(live, &seat, reveal.commitment_id);
                debug_assert!(revealed, "verified above");
                let owner = SaltOwner { seat: seat.clone(), commitment_id: reveal.commitment_id, origin: () };
                if let Some(first) = draft.commitments.note_salt(live, &reveal.salt, owner) {
                    draft.warnings.push(SessionWarning {
                        code: "salt_reuse".into(),
                        message: format!(
                            "salt of {seat}'s commitment {} was already used by {}'s commitment {}",
                            reveal.commitment_id, first.seat, first.commitment_id
                        ),
                        participant_id: seat.clone(),
                        commitment_id: reveal.commitment_id,
                    });
                }
                input.action.verified_payload = Some(reveal.payload.clone());
            }
        }
        let consumed: Vec<SubmissionIdentity> = inputs
            .iter()
            .map(|i| SubmissionIdentity {
                participant_id: i.participant_id.clone().expect("user input"),
                submission_id: i.submission_id.clone().expect("user input"),
            })
            .collect();
        if let Some(system) = &system_input {
            inputs.push(system.clone());
        }
        let actions: Vec<SubmittedAction> = inputs.iter().map(|i| i.action.clone()).collect();
        let forked = match draft.state.take() {
            Some(state) => state,
            None => self.isolation.fork(&self.live.state),
        };
        // `advance` takes the draft by value: a reducer that fails drops it
        // itself, so `discard` is never called for that draft.
        let next_state = self.options.reducer.advance(forked, &actions)?;
        let previous_views = draft.seat_views.as_deref().unwrap_or(&self.live.seat_views);
        let derived = self.derive(&next_state, previous_views, draft.cursor + 1, |_| Ok(()));
        let Derived { full_view, facts, seat_views, window: next_window } = match derived {
            Ok(derived) => derived,
            Err(e) => {
                // The reducer's result is a draft nobody will publish.
                self.isolation.discard(next_state);
                return Err(e);
            }
        };
        let resolved_cursor = draft.cursor;
        let resolved_tick = draft.tick;
        draft.cursor += 1;
        draft.tick += 1;
        let acks = consumed.clone();
        for (i, seat) in self.options.seats.iter().enumerate() {
            let sv = &seat_views[i];
            let unchanged = previous_views[i].canonical == sv.canonical;
            draft.deltas.push(ObservationDelta {
                seat: seat.clone(),
                scope_id: seat.clone(),
                transition_revision: next_revision,
                view_revision: sv.revision,
                tick: draft.tick,
                codec: "v2".into(),
                origin: DeltaOrigin::Resolution,
                acknowledgements: acks.clone(),
                rejections: Vec::new(),
                body: if unchanged { DeltaBody::Unchanged } else { DeltaBody::Snapshot { view: Arc::clone(&sv.view) } },
                view_digest: sv.digest,
            });
        }
        let result =
            ResolutionResult { status: facts.status.clone(), stars: facts.stars, actions_used: facts.actions_used };
        let system = if cause == ResolutionCause::Timeout { system_input } else { None };
        draft.bodies.push(EventBody::Resolution {
            tick: resolved_tick,
            cursor: resolved_cursor,
            cause,
            consumed,
            inputs,
            system_input: system.map(Box::new),
            result,
        });
        draft.window = next_window;
        draft.window_actions.clear();
        draft.terminal = facts.status != "playing";
        draft.state = Some(next_state);
        draft.full_view = Some(full_view);
        draft.seat_views = Some(seat_views);
        draft.resolutions += 1;
        Ok(())
    }

    /// Full view, facts, seat views and next window of a freshly advanced
    /// state; `check` vets the facts before the seat views are computed.
    fn derive(
        &self,
        state: &R::State,
        previous_views: &[SeatView],
        next_cursor: u64,
        check: impl FnOnce(&ViewFacts) -> Result<(), KernelError>,
    ) -> Result<Derived, KernelError> {
        let full_view = self.options.reducer.view(state);
        let facts = Self::facts(&self.options, state, &full_view)?;
        check(&facts)?;
        let seat_views = Self::compute_seat_views(&self.options, state, Some(previous_views))?;
        let window = Self::window_for(&self.options, next_cursor, &facts.participants)?;
        Ok(Derived { full_view, facts, seat_views, window })
    }

    /// A mismatching reveal: record the rejection, drop the seat's intent and
    /// receipt, notify every seat; nothing resolves.
    fn reject(&self, draft: &mut Draft<R::State>, input: &CanonicalInput, commitment_id: u32, next_revision: u64) {
        let seat = input.participant_id.clone().expect("user input");
        let submission_id = input.submission_id.clone().expect("user input");
        let reveal = input.action.reveal.clone().expect("a rejection concerns a reveal");
        draft.bodies.push(EventBody::Rejection {
            code: "commit_mismatch".into(),
            tick: draft.tick,
            participant_id: seat.clone(),
            submission_id: submission_id.clone(),
            commitment_id,
            scheme: COMMIT_SCHEME.into(),
            attempted_reveal: AttemptedReveal { salt: reveal.salt, payload: reveal.payload },
            canonical_command: input.canonical_command.clone(),
            cursor: input.cursor,
            client_time: input.client_time.clone(),
            prev_chain_hash: input.prev_chain_hash.clone(),
            sig: input.sig.clone(),
        });
        draft.window.intents.remove(&seat);
        draft.window_actions.remove(&seat);
        draft.removed_receipts.push(identity_key(&seat, &submission_id));
        let record = RejectionRecord {
            transition_revision: next_revision,
            tick: draft.tick,
            participant_id: seat,
            submission_id,
        };
        let views = draft.seat_views.as_deref().unwrap_or(&self.live.seat_views);
        for (i, dest) in self.options.seats.iter().enumerate() {
            let n = notice(dest, &record);
            draft.deltas.push(ObservationDelta {
                seat: dest.clone(),
                scope_id: dest.clone(),
                transition_revision: next_revision,
                view_revision: views[i].revision,
                tick: draft.tick,
                codec: "v2".into(),
                origin: DeltaOrigin::Resolution,
                acknowledgements: Vec::new(),
                rejections: vec![n.clone()],
                body: DeltaBody::Unchanged,
                view_digest: views[i].digest,
            });
            draft.notices.push(n);
        }
        draft.rejections.push(record);
        draft.rejected = true;
    }

    fn finish_advance(&self, mut draft: Draft<R::State>, partial: bool) -> Result<Prepared<R::State>, KernelError> {
        let views = draft.seat_views.as_deref().unwrap_or(&self.live.seat_views);
        let digest = Self::kernel_digest(&self.options, &self.sorted_seats, draft.cursor, draft.tick, views);
        let last_is_rejection = matches!(draft.bodies.last(), Some(EventBody::Rejection { .. }));
        if (draft.resolutions > 0 && draft.tick - draft.last_checkpoint_tick >= self.limits.checkpoint_interval)
            || last_is_rejection
        {
            draft.bodies.push(EventBody::Checkpoint { tick: draft.tick, digest });
            draft.last_checkpoint_tick = draft.tick;
        }
        let next = draft.next_revision;
        let events = match self.finish_events(next, std::mem::take(&mut draft.bodies)) {
            Ok(events) => events,
            Err(e) => {
                // A failed prepare has no completion that would discard its draft.
                if let Some(state) = draft.state.take() {
                    self.isolation.discard(state);
                }
                return Err(e);
            }
        };
        let summary = AdvanceSummary {
            resolutions: draft.resolutions,
            partial,
            cursor: draft.cursor,
            tick: draft.tick,
            digest,
            deltas: draft.deltas.clone(),
            rejections: std::mem::take(&mut draft.notices),
            warnings: std::mem::take(&mut draft.warnings),
        };
        let deltas = std::mem::take(&mut draft.deltas);
        let patch = AdvancePatch {
            cursor: draft.cursor,
            tick: draft.tick,
            full_view: draft.full_view.take().unwrap_or_else(|| self.live.full_view.clone()),
            seat_views: draft.seat_views.take().unwrap_or_else(|| self.live.seat_views.clone()),
            state: draft.state.take(),
            window: draft.window,
            window_actions: draft.window_actions,
            commitments: draft.commitments,
            removed_receipts: draft.removed_receipts,
            rejections: draft.rejections,
            last_checkpoint_tick: draft.last_checkpoint_tick,
            evict: draft.resolutions > 0,
        };
        Ok(self.prepared(next, events, deltas, PreparedResult::Advance(summary), Patch::Advance(Box::new(patch))))
    }

    // ----- completion ------------------------------------------------------

    fn discard_patch(&self, patch: Option<Patch<R::State>>) {
        match patch {
            Some(Patch::Advance(advance)) => {
                if let Some(draft) = advance.state {
                    self.isolation.discard(draft);
                }
            }
            Some(Patch::Chain(links)) => {
                for (_, link) in links {
                    self.discard_patch(Some(link));
                }
            }
            _ => {}
        }
    }

    /// `commit(prepared)`: publish a prepared transition. A transition
    /// prepared against an older revision is aborted and reported `stale`.
    pub fn commit(&mut self, prepared: &mut Prepared<R::State>) -> Result<(), KernelError> {
        if prepared.owner != self.id {
            return Err(KernelError::lifecycle(
                LifecycleCode::Foreign,
                "this transition was prepared by another kernel",
            ));
        }
        if prepared.completion != Completion::Open {
            return Err(KernelError::lifecycle(
                LifecycleCode::AlreadyCompleted,
                "this transition was already completed",
            ));
        }
        if prepared.base != self.live.transition_revision {
            prepared.completion = Completion::Aborted;
            self.discard_patch(prepared.patch.take());
            return Err(KernelError::lifecycle(
                LifecycleCode::Stale,
                format!(
                    "prepared at revision {}, but the kernel is at {}; it was aborted",
                    prepared.base, self.live.transition_revision
                ),
            ));
        }
        prepared.completion = Completion::Committed;
        let patch = prepared.patch.take().expect("an open transition holds its patch");
        // The events move into the transcript; the host persisted them already.
        let events = std::mem::take(&mut prepared.events);
        self.apply(patch, events, prepared.next);
        Ok(())
    }

    /// `abort(prepared)`: drop an open transition (idempotent after abort).
    pub fn abort(&mut self, prepared: &mut Prepared<R::State>) -> Result<(), KernelError> {
        if prepared.owner != self.id {
            return Err(KernelError::lifecycle(
                LifecycleCode::Foreign,
                "this transition was prepared by another kernel",
            ));
        }
        match prepared.completion {
            Completion::Committed => {
                Err(KernelError::lifecycle(LifecycleCode::AlreadyCompleted, "this transition was already committed"))
            }
            Completion::Aborted => Ok(()),
            Completion::Open => {
                prepared.completion = Completion::Aborted;
                self.discard_patch(prepared.patch.take());
                Ok(())
            }
        }
    }

    /// Prepare and commit in one step (for callers without persistence).
    pub fn apply_now(&mut self, mut prepared: Prepared<R::State>) -> Result<Prepared<R::State>, KernelError> {
        self.commit(&mut prepared)?;
        Ok(prepared)
    }

    fn apply(&mut self, patch: Patch<R::State>, mut events: Vec<SessionEvent>, next: u64) {
        if let Patch::Chain(links) = patch {
            for (revision, link) in links {
                let split = events.iter().position(|e| e.transition_revision != revision).unwrap_or(events.len());
                let rest = events.split_off(split);
                self.apply(link, std::mem::replace(&mut events, rest), revision);
            }
            return;
        }
        let live = &mut self.live;
        match patch {
            Patch::Chain(..) => unreachable!("chains are split above"),
            Patch::Noop => {}
            Patch::Extension => {}
            Patch::Ingest(ingest) => {
                let IngestPatch { seat, intent, action, receipt_key, receipt } = *ingest;
                live.window.intents.insert(seat.clone(), intent);
                live.window_actions.insert(seat, action);
                live.accepted.insert(receipt_key.clone());
                live.receipt_order.push_back((receipt.revision, receipt_key.clone()));
                live.receipts.insert(receipt_key, receipt);
            }
            Patch::Advance(patch) => {
                let AdvancePatch {
                    state,
                    cursor,
                    tick,
                    window,
                    window_actions,
                    full_view,
                    seat_views,
                    commitments,
                    removed_receipts,
                    rejections,
                    last_checkpoint_tick,
                    evict,
                } = *patch;
                if let Some(state) = state {
                    let previous = std::mem::replace(&mut live.state, state);
                    self.isolation.retire(previous);
                }
                live.cursor = cursor;
                live.tick = tick;
                live.window = window;
                live.window_actions = window_actions;
                live.full_view = full_view;
                live.seat_views = seat_views;
                live.commitments.absorb(commitments);
                for key in removed_receipts {
                    live.receipts.remove(&key);
                }
                live.rejections.extend(rejections);
                live.last_checkpoint_tick = last_checkpoint_tick;
                if evict {
                    Self::evict_receipts(live, self.limits.receipt_retention);
                }
            }
        }
        if !events.is_empty() {
            live.transition_revision = next;
            live.events.extend(events);
        }
    }

    /// Move receipts older than the retention window out (their identities
    /// stay in the permanent index).
    fn evict_receipts(live: &mut Live<R::State>, retention: u64) {
        while let Some((cursor, _)) = live.receipt_order.front() {
            if cursor + retention >= live.cursor {
                break;
            }
            let (_, key) = live.receipt_order.pop_front().expect("front exists");
            live.receipts.remove(&key);
        }
    }
}

/// A notice of `record` routed to `seat`.
fn notice(seat: &str, record: &RejectionRecord) -> RejectionNotice {
    RejectionNotice {
        seat: seat.into(),
        transition_revision: record.transition_revision,
        tick: record.tick,
        participant_id: record.participant_id.clone(),
        submission_id: record.submission_id.clone(),
        code: "commit_mismatch".into(),
    }
}

/// Window participants from a full view (§2.3).
pub(crate) fn participants_of(view: &Value, seats: &[String]) -> Result<Vec<String>, KernelError> {
    let participation = view.get("participation");
    let mode = participation.and_then(|p| p.get("mode")).and_then(Value::as_str);
    let from_active =
        |v: Option<&Value>| -> Option<Vec<String>> { v.and_then(Value::as_str).map(|s| vec![s.to_owned()]) };
    let participants: Vec<String> = match mode {
        Some("sequential") => from_active(participation.and_then(|p| p.get("activeSeat"))).unwrap_or_default(),
        Some("simultaneous") => participation
            .and_then(|p| p.get("seats"))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
            .unwrap_or_default(),
        _ => from_active(view.get("activeSeat")).unwrap_or_else(|| seats.to_vec()),
    };
    if participants.is_empty() || participants.iter().any(|p| !seats.contains(p)) {
        let mut sorted_declared: Vec<&String> = seats.iter().collect();
        sorted_declared.sort();
        let mut sorted: Vec<&String> = participants.iter().collect();
        sorted.sort();
        return Err(KernelError::type_error(format!(
            "view participants {sorted:?} must be a non-empty subset of the declared seats {sorted_declared:?}"
        )));
    }
    Ok(participants)
}

struct Draft<S> {
    state: Option<S>,
    cursor: u64,
    tick: u64,
    window: IntentWindow,
    window_actions: BTreeMap<String, SubmittedAction>,
    full_view: Option<Value>,
    seat_views: Option<Vec<SeatView>>,
    /// The resolution's commitment changes, layered over the live book.
    commitments: CommitmentBook<String>,
    removed_receipts: Vec<String>,
    rejections: Vec<RejectionRecord>,
    last_checkpoint_tick: u64,
    bodies: Vec<EventBody>,
    deltas: Vec<ObservationDelta>,
    notices: Vec<RejectionNotice>,
    warnings: Vec<SessionWarning>,
    resolutions: u64,
    terminal: bool,
    rejected: bool,
    /// Transition revision the draft's events and deltas carry.
    next_revision: u64,
}
