//! A deterministic simulated host for the kernel gate and property tests: an
//! append-only event store, per-seat clients that apply observation deltas,
//! and crash injection at every boundary of a transition (before persist,
//! between persist and commit, between commit and delivery, after delivery).
//!
//! Shared by `kernel_gates.rs` and `kernel_properties.rs`; each uses a subset.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::{Value, canonical_json};
use gaos_kernel::{
    AnyState, Cadence, CommandSubmission, DynReducer, EventBody, IngestReceipt, KernelError, KernelOptions,
    ObservationDelta, Prepared, PreparedResult, RejectionNotice, SeedPolicy, SessionEvent, SessionKernel,
    SessionLimits, SubmittedAction, TickRate, TimeoutInput, apply_observation_delta,
};

/// Options for a built-in game: seed 7, default limits, and the game's
/// timeout mapper when it has one. Tests adjust the fields they care about.
pub fn game_options(
    game_id: &str,
    session_id: &str,
    level: Value,
    seats: &[&str],
    cadence: Cadence,
) -> KernelOptions<DynReducer> {
    let game = GameRegistry::builtin().get(game_id).unwrap_or_else(|| panic!("no built-in game {game_id}"));
    KernelOptions::builder(&game, session_id)
        .level("level-1", level)
        .seed(7, SeedPolicy::Explicit)
        .seats(seats.iter().map(|s| (*s).to_owned()).collect())
        .cadence(cadence)
        .timeout_mapper(true)
        .build()
}

/// `options` with other limits.
pub fn with_limits(mut options: KernelOptions<DynReducer>, limits: SessionLimits) -> KernelOptions<DynReducer> {
    options.limits = limits;
    options
}

pub fn ticks(ticks_per_second: f64) -> Cadence {
    Cadence::Ticks(TickRate::new(ticks_per_second).expect("a positive tick rate"))
}

pub fn json(text: &str) -> Value {
    gaos_json::parse(text).unwrap_or_else(|e| panic!("bad JSON in test {text}: {e}"))
}

/// One host-level operation that prepares a transition.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A submission addressed to the open window.
    Ingest {
        seat: String,
        id: String,
        command: Value,
    },
    /// A submission addressed to an explicit revision (stale or future).
    IngestAt {
        seat: String,
        id: String,
        command: Value,
        revision: u64,
    },
    Advance(Option<u64>),
    /// A timeout of the open tick; `forced` is the input when the game has
    /// no timeout mapper.
    Timeout {
        seat: Option<String>,
        forced: Option<Box<SubmittedAction>>,
    },
    Extension {
        lane: String,
        record: Value,
    },
}

pub fn ingest(seat: &str, id: &str, command: &str) -> Step {
    Step::Ingest { seat: seat.into(), id: id.into(), command: json(command) }
}

pub fn advance() -> Step {
    Step::Advance(None)
}

pub fn advance_to(target: u64) -> Step {
    Step::Advance(Some(target))
}

pub fn timeout(seat: &str) -> Step {
    Step::Timeout { seat: Some(seat.into()), forced: None }
}

pub fn extension(lane: &str, record: &str) -> Step {
    Step::Extension { lane: lane.into(), record: json(record) }
}

/// Everything observable about a kernel that must survive a crash.
#[derive(Debug, Clone, PartialEq)]
pub struct Fingerprint {
    pub digest: u32,
    pub cursor: u64,
    pub tick: u64,
    pub transition_revision: u64,
    pub awaiting: Vec<String>,
    pub view_revisions: Vec<(String, u64)>,
    pub views: Vec<(String, String)>,
    /// Every durable rejection notice, as a snapshot from revision 0 routes it to each seat.
    pub notices: Vec<RejectionNotice>,
    pub events: Vec<String>,
}

pub fn fingerprint<R>(kernel: &SessionKernel<R>) -> Fingerprint
where
    R: gaos_kernel::TickReducer,
    R::State: Clone + 'static,
{
    let seats = kernel.options().seats.clone();
    Fingerprint {
        digest: kernel.digest(),
        cursor: kernel.cursor(),
        tick: kernel.tick(),
        transition_revision: kernel.transition_revision(),
        awaiting: kernel.awaiting_seats(),
        view_revisions: seats.iter().map(|s| (s.clone(), kernel.view_revision(s).expect("declared seat"))).collect(),
        views: seats.iter().map(|s| (s.clone(), canonical_json(&kernel.observe(s).expect("declared seat")))).collect(),
        notices: seats.iter().flat_map(|s| kernel.snapshot(s, Some(0)).expect("declared seat").rejections).collect(),
        events: kernel.events().iter().map(SessionEvent::canonical).collect(),
    }
}

/// A seat's client: its current view built only from what was delivered.
#[derive(Debug, Clone)]
pub struct SeatClient {
    pub seat: String,
    pub view: Value,
    pub view_revision: u64,
    /// The transition revision of the last delta or snapshot applied.
    pub last_transition: u64,
    pub notices: Vec<RejectionNotice>,
    /// Every delta and snapshot delivered, in order (for leak checks).
    pub received: Vec<ObservationDelta>,
}

impl SeatClient {
    /// A client that starts from `snapshot(seat)` at revision 0.
    pub fn connect(kernel: &SessionKernel<DynReducer>, seat: &str) -> Self {
        let snapshot = kernel.snapshot(seat, None).expect("declared seat");
        let mut client = SeatClient {
            seat: seat.into(),
            view: Value::Null,
            view_revision: 0,
            last_transition: 0,
            notices: Vec::new(),
            received: Vec::new(),
        };
        client.apply(&snapshot);
        client
    }

    /// Apply one delta (a snapshot, unchanged or patch body), checking its digest.
    pub fn apply(&mut self, delta: &ObservationDelta) {
        assert_eq!(delta.seat, self.seat, "a delta for {} was routed to {}", delta.seat, self.seat);
        let current = (!self.view.is_null()).then_some(&self.view);
        self.view = apply_observation_delta(current, delta).unwrap_or_else(|e| panic!("{}: {e}", self.seat));
        self.view_revision = delta.view_revision;
        self.last_transition = delta.transition_revision;
        self.notices.extend(delta.rejections.iter().cloned());
        self.received.push(delta.clone());
    }

    /// Resynchronize after missed deltas: a snapshot with every rejection
    /// notice after the last transition this client saw.
    pub fn resync(&mut self, kernel: &SessionKernel<DynReducer>) {
        let snapshot = kernel.snapshot(&self.seat, Some(self.last_transition)).expect("a revision the kernel reached");
        self.apply(&snapshot);
    }
}

/// Where a crash interrupts a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashPoint {
    /// Prepared, nothing persisted.
    BeforePersist,
    /// Events persisted, commit never observed.
    BetweenPersistAndCommit,
    /// Committed, deltas never delivered.
    BetweenCommitAndDelivery,
    /// Deltas delivered, the host crashed before it recorded the acknowledgement.
    AfterDelivery,
}

/// The simulated host.
pub struct SimHost {
    pub options: Arc<KernelOptions<DynReducer>>,
    pub kernel: SessionKernel<DynReducer>,
    /// The durable event store (append-only).
    pub store: Vec<SessionEvent>,
    pub clients: BTreeMap<String, SeatClient>,
}

impl SimHost {
    pub fn new(options: KernelOptions<DynReducer>) -> Self {
        let options = Arc::new(options);
        let kernel = SessionKernel::from_shared(Arc::clone(&options)).expect("valid options");
        let clients = options.seats.iter().map(|seat| (seat.clone(), SeatClient::connect(&kernel, seat))).collect();
        SimHost { options, kernel, store: Vec::new(), clients }
    }

    pub fn submission(&self, seat: &str, id: &str, command: Value, revision: u64) -> CommandSubmission {
        CommandSubmission::new(self.kernel.session_id(), revision, seat, id, command)
    }

    pub fn prepare(&self, step: &Step) -> Result<Prepared<AnyState>, KernelError> {
        let kernel = &self.kernel;
        match step {
            Step::Ingest { seat, id, command } => {
                kernel.prepare_ingest(&self.submission(seat, id, command.clone(), kernel.cursor()))
            }
            Step::IngestAt { seat, id, command, revision } => {
                kernel.prepare_ingest(&self.submission(seat, id, command.clone(), *revision))
            }
            Step::Advance(target) => kernel.prepare_advance(target.map(|t| t as f64)),
            Step::Timeout { seat, forced } => {
                let tick = kernel.tick();
                let input = TimeoutInput::new(&format!("t-{tick}"), tick, seat.as_deref(), "elapsed");
                kernel.prepare_timeout(&input, forced.as_deref())
            }
            Step::Extension { lane, record } => kernel.prepare_extension(lane, record),
        }
    }

    /// Persist a prepared transition's events (before its commit).
    pub fn persist(&mut self, prepared: &Prepared<AnyState>) {
        self.store.extend(prepared.events().iter().cloned());
    }

    pub fn deliver(&mut self, deltas: &[ObservationDelta]) {
        for delta in deltas {
            self.clients.get_mut(&delta.seat).expect("a delta for a declared seat").apply(delta);
        }
    }

    /// Prepare, persist, commit and deliver one step.
    pub fn execute(&mut self, step: &Step) -> Result<PreparedResult, KernelError> {
        let mut prepared = self.prepare(step)?;
        self.persist(&prepared);
        self.kernel.commit(&mut prepared).expect("a freshly prepared transition commits");
        let deltas = prepared.deltas().to_vec();
        self.deliver(&deltas);
        Ok(prepared.result().clone())
    }

    /// Run steps that must all succeed.
    pub fn execute_all(&mut self, steps: &[Step]) {
        for step in steps {
            self.execute(step).unwrap_or_else(|e| panic!("{step:?} failed: {e} ({})", e.code()));
        }
    }

    /// Lose the kernel and rebuild it from the durable store.
    pub fn crash_and_rehydrate(&mut self) {
        let header = self.kernel.session_header();
        self.kernel = SessionKernel::rehydrate(Arc::clone(&self.options), Some(&header), self.store.clone())
            .unwrap_or_else(|e| panic!("rehydration failed: {e}"));
    }

    /// Every client resynchronizes from a snapshot after its last seen revision.
    pub fn resync_clients(&mut self) {
        for client in self.clients.values_mut() {
            client.resync(&self.kernel);
        }
    }

    /// Each client's view equals what the kernel would show the seat now.
    pub fn assert_clients_match_observe(&self, context: &str) {
        for (seat, client) in &self.clients {
            let observed = self.kernel.observe(seat).expect("declared seat");
            assert_eq!(&client.view, &*observed, "{context}: {seat}'s client view differs from observe({seat})");
            assert_eq!(
                client.view_revision,
                self.kernel.view_revision(seat).expect("declared seat"),
                "{context}: {seat}'s client view revision"
            );
        }
    }

    /// Run `step` with a crash at `point`, recover the way a host would, and
    /// return the rehydrated kernel's fingerprint right after recovery.
    pub fn execute_with_crash(&mut self, step: &Step, point: CrashPoint) -> Fingerprint {
        let mut prepared = self.prepare(step).unwrap_or_else(|e| panic!("{step:?} failed: {e}"));
        let events = prepared.events().to_vec();
        let deltas = prepared.deltas().to_vec();
        let result = prepared.result().clone();
        match point {
            CrashPoint::BeforePersist => {}
            CrashPoint::BetweenPersistAndCommit => self.persist(&prepared),
            CrashPoint::BetweenCommitAndDelivery => {
                self.persist(&prepared);
                self.kernel.commit(&mut prepared).expect("commit");
            }
            CrashPoint::AfterDelivery => {
                self.persist(&prepared);
                self.kernel.commit(&mut prepared).expect("commit");
                self.deliver(&deltas);
            }
        }
        self.crash_and_rehydrate();
        let recovered = fingerprint(&self.kernel);
        // A prepared value of the lost kernel can never complete on the new one.
        let foreign = self.kernel.commit(&mut prepared).map_err(|e| e.code());
        assert_eq!(foreign, Err("foreign"), "{step:?}: commit on a rehydrated kernel");
        match point {
            CrashPoint::BeforePersist => {
                // Nothing durable happened: the client retries and gets the same transition.
                let mut retried = self.prepare(step).unwrap_or_else(|e| panic!("retry of {step:?} failed: {e}"));
                assert_eq!(retried.events(), &events[..], "{step:?}: the retry prepares the same events");
                assert_eq!(retried.deltas(), &deltas[..], "{step:?}: the retry prepares the same deltas");
                assert_eq!(retried.result(), &result, "{step:?}: the retry reports the same result");
                self.persist(&retried);
                self.kernel.commit(&mut retried).expect("commit of the retry");
                self.deliver(&deltas);
            }
            CrashPoint::BetweenPersistAndCommit | CrashPoint::BetweenCommitAndDelivery => {
                if let (Step::Ingest { .. }, PreparedResult::Ingest(original)) = (step, &result) {
                    // The client never saw its receipt and retries: an exact
                    // duplicate answered from the rehydrated receipt.
                    let mut retried = self.prepare(step).unwrap_or_else(|e| panic!("retry of {step:?} failed: {e}"));
                    assert!(retried.is_noop(), "{step:?}: a retry after the crash must be a noop duplicate");
                    let expected = IngestReceipt { status: gaos_kernel::ReceiptStatus::Duplicate, ..original.clone() };
                    assert_eq!(retried.receipt(), Some(&expected), "{step:?}: the duplicate receipt");
                    self.kernel.commit(&mut retried).expect("a noop duplicate commits");
                }
                self.resync_clients();
            }
            CrashPoint::AfterDelivery => {
                let before: Vec<usize> = self.clients.values().map(|c| c.notices.len()).collect();
                self.resync_clients();
                let after: Vec<usize> = self.clients.values().map(|c| c.notices.len()).collect();
                assert_eq!(before, after, "{step:?}: a resync after delivery repeats no rejection notice");
            }
        }
        recovered
    }
}

/// How many times each submission identity appears as an accepted intent and
/// as a resolution input, over an event list.
pub fn identity_uses(events: &[SessionEvent]) -> BTreeMap<(String, String), (usize, usize)> {
    let mut uses: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for event in events {
        match &event.body {
            EventBody::IntentAccepted { participant_id, submission_id, .. } => {
                uses.entry((participant_id.clone(), submission_id.clone())).or_default().0 += 1;
            }
            EventBody::Resolution { inputs, .. } => {
                for input in inputs {
                    if let (Some(p), Some(s)) = (&input.participant_id, &input.submission_id) {
                        uses.entry((p.clone(), s.clone())).or_default().1 += 1;
                    }
                }
            }
            _ => {}
        }
    }
    uses
}
