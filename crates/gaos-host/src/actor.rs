//! One single-writer actor per live session. It owns the kernel and runs the
//! host lane for every transition: prepare → persist (group commit) → commit →
//! publish. A persistence failure aborts the prepared transition, so live
//! state never runs ahead of the store, and nothing is acknowledged before
//! its events are durable.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gaos_json::{Map, Value, canonical_json, sha256_hex};
use gaos_kernel::replay::{FinalizeOptions, finalize_replay};
use gaos_kernel::{
    AnyState, Cadence, DeltaBody, DynReducer, EventBody, Game, ObservationDelta, Prepared, SessionKernel, TimeoutInput,
};
use gaos_session::policy::SessionPolicy;
use gaos_session::receipts::{AttachReceipt, ReceiptBody};
use sha2::{Digest, Sha256};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::auth::token_hash;
use crate::clock::HostClock;
use crate::config::{LeaseBounds, ReceiptMode, SessionConfig};
use crate::envelope::{self, EXT_ATTACH, EXT_LEASE, EXT_REJECTIONS, Finalization, Pending};
use crate::error::{HostError, from_kernel};
use crate::lease::{Granted, LeaseBook, LeaseError, LeaseEvent, LeaseOp, Presented};
use crate::metrics::Metrics;
use crate::store::{SessionStatus, StoredAnswer, StoredEvent, WriteBatch, WriteOp};
use crate::writer::Writer;

/// A stored or computed answer: status and exact body bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    fn json(status: u16, value: &Value) -> Self {
        Answer { status, body: canonical_json(value) }
    }
}

/// One server-sent event: its name (`delta`, `public`, `lease`) and data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamItem {
    pub event: &'static str,
    pub data: String,
}

/// A live observation stream: the first items, then the live channel.
pub struct Subscription {
    pub initial: Vec<Arc<StreamItem>>,
    pub live: broadcast::Receiver<Arc<StreamItem>>,
}

/// A row of `GET /v1/sessions`.
#[derive(Debug, Clone)]
pub struct SessionSummary {
    pub id: String,
    pub game: String,
    pub status: SessionStatus,
    pub cursor: u64,
    pub tick: u64,
    pub seats: Vec<String>,
    pub created_at_ms: i64,
}

type Reply<T> = oneshot::Sender<Result<T, HostError>>;

/// Messages to a session actor.
pub enum Command {
    Observe {
        seat: Option<String>,
        reply: Reply<Answer>,
    },
    Act {
        seat: String,
        presented: Presented,
        body: Value,
        reply: Reply<Answer>,
    },
    Attach {
        seat: String,
        presented: Presented,
        body: Value,
        reply: Reply<Answer>,
    },
    /// A lease dispatch: renew, heartbeat, pause, resume, stop. `seat: None`
    /// is the operator (pause only, naming the seat in `target`).
    Lease {
        seat: String,
        presented: Presented,
        op: LeaseOp,
        operator: bool,
        reply: Reply<Answer>,
    },
    /// `GET /lease`.
    LeaseInfo {
        seat: String,
        presented: Presented,
        reply: Reply<Answer>,
    },
    /// Operator emergency stop (sent on the priority channel).
    EmergencyStop {
        reason: String,
        reply: Reply<Answer>,
    },
    /// The (test) clock moved: re-check deadlines now.
    ClockChanged,
    /// Restart reconciliation report of this session's claims.
    Reconcile {
        reply: oneshot::Sender<Vec<(String, String, u64)>>,
    },
    Finalize {
        body: Value,
        reply: Reply<Answer>,
    },
    Snapshot {
        seat: String,
        after: Option<u64>,
        reply: Reply<Answer>,
    },
    Subscribe {
        seat: Option<String>,
        after: Option<u64>,
        reply: Reply<Subscription>,
    },
    Replay {
        reply: Reply<String>,
    },
    Transcript {
        reply: Reply<String>,
    },
    Summary {
        reply: oneshot::Sender<SessionSummary>,
    },
    /// Answer for the creator seat right after creation (with credentials).
    CreatorEnvelope {
        extensions: Map,
        reply: Reply<Answer>,
    },
}

/// Handle to a running actor.
#[derive(Clone)]
pub struct ActorHandle {
    pub tx: mpsc::Sender<Command>,
    /// Work that must overtake queued commands (emergency stop).
    pub priority: mpsc::Sender<Command>,
    pub seats: Arc<Vec<String>>,
}

impl ActorHandle {
    /// Send a command and wait for its answer.
    pub async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Result<T, HostError> {
        let (reply, wait) = oneshot::channel();
        self.tx.send(make(reply)).await.map_err(|_| HostError::unavailable("the session actor has stopped"))?;
        wait.await.map_err(|_| HostError::unavailable("the session actor dropped the request"))?
    }

    /// Like [`ActorHandle::ask`], ahead of every queued command.
    pub async fn ask_first<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Result<T, HostError> {
        let (reply, wait) = oneshot::channel();
        self.priority.send(make(reply)).await.map_err(|_| HostError::unavailable("the session actor has stopped"))?;
        wait.await.map_err(|_| HostError::unavailable("the session actor dropped the request"))?
    }
}

/// Everything an actor starts from.
pub struct ActorInit {
    pub config: SessionConfig,
    pub game: Arc<dyn Game>,
    pub kernel: SessionKernel<DynReducer>,
    pub status: SessionStatus,
    pub answers: Vec<StoredAnswer>,
    pub writer: Writer,
    pub metrics: Arc<Metrics>,
    pub reader: Arc<dyn crate::store::StoreReader>,
    pub leases: LeaseBook,
    pub clock: Arc<HostClock>,
    pub lease_bounds: LeaseBounds,
}

pub(crate) struct SessionActor {
    id: String,
    config: SessionConfig,
    policy: SessionPolicy,
    game: Arc<dyn Game>,
    kernel: SessionKernel<DynReducer>,
    status: SessionStatus,
    writer: Writer,
    metrics: Arc<Metrics>,
    /// Stored answers by (kind, key).
    answers: HashMap<(String, String), StoredAnswer>,
    /// Insertion order of act answers, to bound the in-memory map.
    act_answer_order: std::collections::VecDeque<String>,
    /// Some act answers live only in the store now.
    answers_evicted: bool,
    reader: Arc<dyn crate::store::StoreReader>,
    /// The lease book as last persisted (lease slides are written lazily).
    persisted_book: LeaseBook,
    /// Running SHA-256 over the persisted events' canonical JSON joined by `\n`.
    transcript_hash: Sha256,
    persisted: usize,
    /// Attach receipts issued so far and the digest of the last one.
    receipts_issued: u64,
    last_receipt_digest: Option<String>,
    pinned_controller: Option<Value>,
    seat_streams: HashMap<String, broadcast::Sender<Arc<StreamItem>>>,
    spectator_stream: broadcast::Sender<Arc<StreamItem>>,
    leases: LeaseBook,
    clock: Arc<HostClock>,
    lease_bounds: LeaseBounds,
    /// Ticks cadence scheduler (host clock milliseconds).
    tick_period_ms: Option<f64>,
    next_tick_at: Option<i64>,
    /// Turn deadline: (cursor it belongs to, when it fires, clock ms).
    turn_deadline: Option<(u64, i64)>,
    /// The turn clock, stopped while the awaited seat is paused or lapsed:
    /// (cursor it belongs to, milliseconds left).
    turn_frozen: Option<(u64, i64)>,
}

const STREAM_BUFFER: usize = 256;

/// One act command, for batching.
struct ActRequest {
    seat: String,
    presented: Presented,
    body: Value,
    reply: Reply<Answer>,
}

/// An act that passed the host's checks, ready for the kernel.
struct PendingAct {
    seat: String,
    submission: gaos_kernel::CommandSubmission,
    key: Option<String>,
    request: String,
    stored: Option<StoredAnswer>,
}

enum ActStep {
    Answered(Answer),
    Submit(Box<PendingAct>),
}

/// Most acts handled as one batch.
const ACT_BATCH: usize = 64;

/// What a stored answer keeps of its request: the SHA-256 of its canonical
/// JSON (an exact retry has the same fingerprint).
fn fingerprint(request: &Value) -> String {
    sha256_hex(canonical_json(request).as_bytes())
}

/// Act answers kept in memory per session; older ones are read back from
/// the store on the rare retry that needs them.
const ANSWERS_IN_MEMORY: usize = 256;

fn act_key(seat: &str, submission_id: &str) -> String {
    format!("{seat}\u{0}{submission_id}")
}

impl SessionActor {
    pub(crate) fn spawn(init: ActorInit) -> ActorHandle {
        let ActorInit { config, game, kernel, status, answers, writer, metrics, reader, leases, clock, lease_bounds } =
            init;
        let mut transcript_hash = Sha256::new();
        for (i, event) in kernel.events().iter().enumerate() {
            if i > 0 {
                transcript_hash.update(b"\n");
            }
            transcript_hash.update(event.canonical().as_bytes());
        }
        let mut answer_map = HashMap::new();
        let mut receipts_issued = 0;
        let mut last_receipt: Option<(u64, String)> = None;
        for answer in answers {
            if answer.kind == "attach"
                && let Ok(body) = gaos_json::parse(&answer.body)
                && let Some(receipt) = body.get("receipt")
            {
                let seq = receipt.get("sequence").and_then(Value::as_u64).unwrap_or(0);
                receipts_issued = receipts_issued.max(seq + 1);
                if last_receipt.as_ref().is_none_or(|(s, _)| seq >= *s)
                    && let Some(d) = receipt.get("receiptDigest").and_then(Value::as_str)
                {
                    last_receipt = Some((seq, d.to_owned()));
                }
            }
            answer_map.insert((answer.kind.clone(), answer.key.clone()), answer);
        }
        let policy = config.policy();
        let pinned_controller = policy.controller().cloned().or_else(|| {
            answer_map
                .values()
                .filter(|a| a.kind == "attach")
                .filter_map(|a| gaos_json::parse(&a.request).ok())
                .find_map(|r| r.get("controller").cloned())
        });
        let seats = Arc::new(config.seats.clone());
        let seat_streams = config.seats.iter().map(|s| (s.clone(), broadcast::channel(STREAM_BUFFER).0)).collect();
        let tick_period_ms = match config.cadence() {
            Ok(Cadence::Ticks(rate)) => Some(rate.milliseconds_per_tick),
            _ => None,
        };
        let persisted = kernel.events().len();
        let mut actor = SessionActor {
            id: config.session_id.clone(),
            config,
            policy,
            game,
            kernel,
            status,
            writer,
            metrics: Arc::clone(&metrics),
            answers: answer_map,
            act_answer_order: std::collections::VecDeque::new(),
            answers_evicted: true,
            reader,
            persisted_book: leases.clone(),
            transcript_hash,
            persisted,
            receipts_issued,
            last_receipt_digest: last_receipt.map(|(_, d)| d),
            pinned_controller,
            seat_streams,
            spectator_stream: broadcast::channel(STREAM_BUFFER).0,
            leases,
            clock,
            lease_bounds,
            tick_period_ms,
            next_tick_at: None,
            turn_deadline: None,
            turn_frozen: None,
        };
        actor.arm_timers();
        let (tx, rx) = mpsc::channel(1024);
        let (priority, priority_rx) = mpsc::channel(16);
        metrics.live_sessions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tokio::spawn(actor.run(rx, priority_rx));
        ActorHandle { tx, priority, seats }
    }

    async fn run(mut self, mut rx: mpsc::Receiver<Command>, mut priority: mpsc::Receiver<Command>) {
        // Claims that ran out while the host was down lapse now (restart
        // reconciliation), and a turns-cadence window left complete by a
        // crash between an ingest and its advance resolves now.
        self.expire_leases().await;
        self.resolve_ready_window().await;
        // The priority lane closes when the host drops its handle (a
        // finalized session leaves the session map) while request handles
        // may still hold the ordinary lane: stop polling it then, or the
        // biased select would spin on its `None`.
        let mut priority_open = true;
        loop {
            let deadline = self.next_deadline();
            let sleep = deadline.map(|at| Duration::from_millis((at - self.clock.now_ms()).max(0) as u64));
            tokio::select! {
                biased;
                command = priority.recv(), if priority_open => match command {
                    Some(command) => self.handle(command).await,
                    None => priority_open = false,
                },
                command = rx.recv() => match command {
                    Some(Command::Act { seat, presented, body, reply }) => {
                        // Acts queued behind this one go through the kernel and
                        // the store together.
                        let mut acts = vec![ActRequest { seat, presented, body, reply }];
                        let mut other = None;
                        if rx.is_empty() {
                            // Let request tasks that are already running (the
                            // other seats of a simultaneous window) hand over
                            // their acts, so one durable write carries them all.
                            tokio::task::yield_now().await;
                        }
                        while acts.len() < ACT_BATCH {
                            match rx.try_recv() {
                                Ok(Command::Act { seat, presented, body, reply }) => {
                                    acts.push(ActRequest { seat, presented, body, reply })
                                }
                                Ok(command) => {
                                    other = Some(command);
                                    break;
                                }
                                Err(_) => break,
                            }
                        }
                        self.act_many(acts).await;
                        if let Some(command) = other {
                            self.handle(command).await;
                        }
                    }
                    Some(command) => self.handle(command).await,
                    None => break,
                },
                _ = sleep_opt(sleep), if sleep.is_some() => self.on_timer().await,
            }
        }
        self.metrics.live_sessions.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }

    async fn handle(&mut self, command: Command) {
        match command {
            Command::Observe { seat, reply } => {
                let answer = match &self.leases.revoked {
                    Some(reason) => Err(revoked_error(reason)),
                    None => self.observe(seat.as_deref()),
                };
                let _ = reply.send(answer);
            }
            Command::Act { seat, presented, body, reply } => {
                let answer = self.act(&seat, &presented, body).await;
                let _ = reply.send(answer);
            }
            Command::Attach { seat, presented, body, reply } => {
                let answer = self.attach(&seat, &presented, body).await;
                let _ = reply.send(answer);
            }
            Command::Lease { seat, presented, op, operator, reply } => {
                let answer = self.lease_call(&seat, &presented, op, operator).await;
                let _ = reply.send(answer);
            }
            Command::LeaseInfo { seat, presented, reply } => {
                let answer = match &self.leases.revoked {
                    Some(reason) => Err(revoked_error(reason)),
                    None => {
                        self.expire_leases().await;
                        Ok(Answer::json(200, &self.leases.describe(&seat, &presented, self.clock.now_ms())))
                    }
                };
                let _ = reply.send(answer);
            }
            Command::EmergencyStop { reason, reply } => {
                let answer = self.revoke(&reason, "operator").await;
                let _ = reply.send(answer);
            }
            Command::ClockChanged => {
                self.on_timer().await;
            }
            Command::Reconcile { reply } => {
                let now = self.clock.now_ms();
                let rows = self
                    .leases
                    .seats
                    .iter()
                    .filter_map(|(seat, lease)| {
                        let claim = lease.current.as_ref()?;
                        let state = if now >= claim.expires_at { "expired" } else { "retained" };
                        Some((seat.clone(), state.to_owned(), claim.epoch))
                    })
                    .collect();
                let _ = reply.send(rows);
            }
            Command::Finalize { body, reply } => {
                let answer = self.finalize(body).await;
                let _ = reply.send(answer);
            }
            Command::Snapshot { seat, after, reply } => {
                if let Some(reason) = &self.leases.revoked {
                    let _ = reply.send(Err(revoked_error(reason)));
                    return;
                }
                let _ = reply.send(
                    self.kernel
                        .snapshot(&seat, after)
                        .map(|d| Answer::json(200, &d.to_value()))
                        .map_err(|e| HostError::invalid_request(e.to_string())),
                );
            }
            Command::Subscribe { seat, after, reply } => {
                let _ = reply.send(self.subscribe(seat.as_deref(), after));
            }
            Command::Replay { reply } => {
                let answer = match &self.leases.revoked {
                    Some(reason) => Err(revoked_error(reason)),
                    None => self.replay_text(),
                };
                let _ = reply.send(answer);
            }
            Command::Transcript { reply } => {
                let mut out = canonical_json(&self.kernel.session_header().to_value());
                out.push('\n');
                for event in self.kernel.events().iter() {
                    out.push_str(&event.canonical());
                    out.push('\n');
                }
                let _ = reply.send(Ok(out));
            }
            Command::Summary { reply } => {
                let _ = reply.send(SessionSummary {
                    id: self.id.clone(),
                    game: self.config.game.clone(),
                    status: self.status,
                    cursor: self.kernel.cursor(),
                    tick: self.kernel.tick(),
                    seats: self.config.seats.clone(),
                    created_at_ms: self.config.created_at_ms,
                });
            }
            Command::CreatorEnvelope { extensions, reply } => {
                let creator = self.config.creator.clone();
                let answer = self.observe(Some(&creator)).map(|a| {
                    let mut value = gaos_json::parse(&a.body).expect("our own canonical JSON");
                    if let Some(ext) =
                        value.as_object_mut().and_then(|m| m.get_mut("extensions")).and_then(Value::as_object_mut)
                    {
                        ext.extend(extensions);
                    }
                    Answer::json(201, &value)
                });
                let _ = reply.send(answer);
            }
        }
    }

    // ----- envelopes ---------------------------------------------------------

    fn finalization(&self) -> Finalization {
        if self.status == SessionStatus::Finalized
            && let Some(answer) = self.answers.get(&("finalize".to_owned(), "result".to_owned()))
        {
            return Finalization::Finalized { result_digest: sha256_hex(answer.body.as_bytes()) };
        }
        if self.kernel.is_terminal() { Finalization::Terminal } else { Finalization::Live }
    }

    fn seat_observation(&self, seat: &str, view: &Value, can_act: bool, done: bool) -> Value {
        let legal = if can_act && !done { self.game.legal_actions(view, seat) } else { Vec::new() };
        envelope::observation(view, legal, done)
    }

    /// The envelope `seat` sees now (spectators: the public view).
    fn observe(&self, seat: Option<&str>) -> Result<Answer, HostError> {
        let done = self.kernel.is_terminal();
        let ext = envelope::base_extensions(&self.id, &self.finalization());
        let Some(seat) = seat else {
            let tick = envelope::observation(self.kernel.full_view(), Vec::new(), done);
            return Ok(Answer::json(200, &envelope::envelope(&self.id, self.kernel.cursor(), tick, None, ext)));
        };
        let view = self.kernel.observe(seat).map_err(|e| HostError::forbidden(e.to_string()))?;
        let window = self.kernel.window();
        let submitted = window.intents.contains_key(seat);
        let awaiting = window.awaiting();
        if submitted && !awaiting.is_empty() && !done {
            let tick = self.seat_observation(seat, &view, false, done);
            let pending = Pending { submitted: window.submitted(), awaiting, accepted: None };
            return Ok(Answer::json(
                202,
                &envelope::envelope(&self.id, self.kernel.cursor(), tick, Some(pending), ext),
            ));
        }
        let tick = self.seat_observation(seat, &view, !submitted, done);
        Ok(Answer::json(200, &envelope::envelope(&self.id, self.kernel.cursor(), tick, None, ext)))
    }

    // ----- host lane ---------------------------------------------------------

    fn stored_events(&self, prepared: &Prepared<AnyState>) -> Vec<StoredEvent> {
        prepared
            .events()
            .iter()
            .enumerate()
            .map(|(i, e)| StoredEvent {
                seq: (self.persisted + i) as u64,
                event_id: e.event_id.clone(),
                transition_revision: e.transition_revision,
                body: e.canonical(),
            })
            .collect()
    }

    /// Persist a prepared transition's events (plus `extra` writes) and
    /// commit it; abort on persistence failure. Returns its deltas.
    async fn run_transition(
        &mut self,
        mut prepared: Prepared<AnyState>,
        extra: Vec<WriteOp>,
    ) -> Result<Vec<ObservationDelta>, HostError> {
        let events = self.stored_events(&prepared);
        let mut batch = WriteBatch::new();
        if !events.is_empty() {
            batch.push(WriteOp::Events { session_id: self.id.clone(), events: events.clone() });
        }
        for op in extra {
            batch.push(op);
        }
        if let Err(e) = self.writer.write(batch).await {
            let _ = self.kernel.abort(&mut prepared);
            tracing::error!(session = %self.id, error = %e, "persisting a transition failed; it was aborted");
            return Err(HostError::unavailable(format!("the transition could not be made durable: {e}")));
        }
        let deltas = prepared.deltas().to_vec();
        self.kernel
            .commit(&mut prepared)
            .map_err(|e| HostError::internal(format!("commit after persist failed: {e}")))?;
        for event in &events {
            if self.persisted > 0 {
                self.transcript_hash.update(b"\n");
            }
            self.transcript_hash.update(event.body.as_bytes());
            self.persisted += 1;
        }
        if !events.is_empty() {
            self.metrics.add_transitions(1);
        }
        self.publish(&deltas);
        if self.kernel.is_terminal() && self.status == SessionStatus::Active {
            self.status = SessionStatus::Terminal;
            let _ = self
                .writer
                .write(WriteBatch {
                    ops: vec![WriteOp::SetStatus { session_id: self.id.clone(), status: SessionStatus::Terminal }],
                })
                .await;
        }
        self.arm_timers();
        Ok(deltas)
    }

    fn publish(&self, deltas: &[ObservationDelta]) {
        for delta in deltas {
            if let Some(tx) = self.seat_streams.get(&delta.seat)
                && tx.receiver_count() > 0
            {
                let _ = tx.send(Arc::new(StreamItem { event: "delta", data: canonical_json(&delta.to_value()) }));
            }
        }
        if !deltas.is_empty() && self.spectator_stream.receiver_count() > 0 {
            let _ = self.spectator_stream.send(Arc::new(StreamItem { event: "public", data: self.public_frame() }));
        }
    }

    fn public_frame(&self) -> String {
        let mut frame = Map::new();
        frame.insert("kind".into(), "public".into());
        frame.insert("transitionRevision".into(), self.kernel.transition_revision().into());
        frame.insert("tick".into(), self.kernel.tick().into());
        frame.insert("view".into(), self.kernel.full_view().clone());
        canonical_json(&Value::Object(frame))
    }

    /// Turns cadence: resolve the open window once every participant submitted.
    async fn resolve_ready_window(&mut self) {
        if self.config.cadence().ok() != Some(Cadence::Turns)
            || self.kernel.is_terminal()
            || !self.kernel.window().is_complete()
            || self.status != SessionStatus::Active
        {
            return;
        }
        match self.kernel.prepare_advance(None) {
            Ok(prepared) => {
                if let Err(e) = self.run_transition(prepared, Vec::new()).await {
                    tracing::warn!(session = %self.id, error = %e, "resolving a ready window failed");
                }
            }
            Err(e @ gaos_kernel::KernelError::Reducer { .. }) => {
                let _ = self.game_failed(e).await;
            }
            Err(e) => tracing::error!(session = %self.id, error = %e, "a ready window could not be resolved"),
        }
    }

    // ----- act -------------------------------------------------------------------

    fn ensure_writable(&self) -> Result<(), HostError> {
        match self.status {
            SessionStatus::Finalized => Err(HostError::conflict(
                "session_finalized",
                "the session was finalized; no further actions are accepted",
            )),
            SessionStatus::Revoked => {
                Err(revoked_error(self.leases.revoked.as_deref().unwrap_or("the session was revoked")))
            }
            _ => Ok(()),
        }
    }

    async fn act(&mut self, seat: &str, presented: &Presented, body: Value) -> Result<Answer, HostError> {
        match self.act_precheck(seat, presented, body).await? {
            ActStep::Answered(answer) => Ok(answer),
            ActStep::Submit(pending) => self.submit_one(*pending).await,
        }
    }

    /// Several acts that arrived together: checked one by one, then prepared
    /// as consecutive transitions of one kernel batch and made durable in one
    /// write (the ingests of a window and its resolution), exactly as if
    /// they had been handled one after the other.
    async fn act_many(&mut self, acts: Vec<ActRequest>) {
        let mut pending: Vec<(PendingAct, Reply<Answer>)> = Vec::with_capacity(acts.len());
        for act in acts {
            match self.act_precheck(&act.seat, &act.presented, act.body).await {
                Ok(ActStep::Submit(p)) => pending.push((*p, act.reply)),
                Ok(ActStep::Answered(answer)) => {
                    let _ = act.reply.send(Ok(answer));
                }
                Err(e) => {
                    let _ = act.reply.send(Err(e));
                }
            }
        }
        if pending.len() == 1 {
            let (p, reply) = pending.pop().expect("one act");
            let answer = self.submit_one(p).await;
            let _ = reply.send(answer);
            return;
        }
        if pending.is_empty() {
            return;
        }
        let subs: Vec<gaos_kernel::CommandSubmission> = pending.iter().map(|(p, _)| p.submission.clone()).collect();
        let batch = match self.kernel.prepare_ingest_batch(&subs) {
            Ok(batch) => batch,
            Err(e) => {
                let error = match e {
                    e @ gaos_kernel::KernelError::Reducer { .. } => self.game_failed(e).await,
                    e => from_kernel(e),
                };
                for (_, reply) in pending {
                    let _ = reply.send(Err(error.clone()));
                }
                return;
            }
        };
        let resolving = batch.prepared.as_ref().is_some_and(|p| p.summary().is_some());
        let last_accepted =
            batch.outcomes.iter().rposition(|o| matches!(o, Ok(gaos_kernel::IngestOutcome::Accepted(_))));
        let mut ready: Vec<(Answer, Reply<Answer>)> = Vec::new();
        let mut later: Vec<(PendingAct, Reply<Answer>)> = Vec::new();
        let mut ops = Vec::new();
        for (i, ((p, reply), outcome)) in pending.into_iter().zip(batch.outcomes).enumerate() {
            match outcome {
                Err(e) => {
                    let _ = reply.send(Err(from_kernel(e)));
                }
                Ok(gaos_kernel::IngestOutcome::Accepted(receipt)) => {
                    let answer = match (&batch.prepared, resolving && Some(i) == last_accepted) {
                        (Some(prepared), true) => self.resolved_answer_after(&p.seat, prepared),
                        _ => match self.pending_answer(&p.seat, &receipt) {
                            Ok(answer) => answer,
                            Err(e) => {
                                let _ = reply.send(Err(e));
                                continue;
                            }
                        },
                    };
                    let key = p.key.as_deref().expect("an accepted submission has an id");
                    ops.push(self.answer_op("act", key, &p.request, &answer));
                    ready.push((answer, reply));
                }
                // Exact retries and submissions after the resolution: the
                // one-by-one path, once the batch is committed.
                Ok(_) => later.push((p, reply)),
            }
        }
        if let Some(prepared) = batch.prepared {
            let mut writes = ops.clone();
            writes.extend(self.lease_op_if_due());
            match self.run_transition(prepared, writes).await {
                Ok(_) => {
                    for op in ops {
                        self.remember(op);
                    }
                    for (answer, reply) in ready {
                        let _ = reply.send(Ok(answer));
                    }
                }
                Err(e) => {
                    for (_, reply) in ready {
                        let _ = reply.send(Err(e.clone()));
                    }
                }
            }
        }
        for (p, reply) in later {
            let answer = self.submit_one(p).await;
            let _ = reply.send(answer);
        }
    }

    /// Checks of an act before the kernel sees it: seat and session of the
    /// submission, a stored answer for an exact retry, the lease.
    async fn act_precheck(&mut self, seat: &str, presented: &Presented, body: Value) -> Result<ActStep, HostError> {
        self.ensure_writable()?;
        let Some(map) = body.as_object() else {
            return Err(HostError::bad_request("invalid_submission", "a command submission must be a JSON object"));
        };
        match map.get("participantId") {
            Some(Value::String(p)) if p == seat => {}
            Some(Value::String(p)) => {
                return Err(HostError::forbidden(format!("this token acts for seat {seat:?}, not {p:?}")));
            }
            _ => {
                return Err(HostError::bad_request(
                    "invalid_submission",
                    format!("participantId must be the token's seat {seat:?}"),
                ));
            }
        }
        if map.get("sessionId").and_then(Value::as_str) != Some(self.id.as_str()) {
            return Err(HostError::bad_request(
                "wrong_session",
                format!("the submission's sessionId must be {:?} (the session in the URL)", self.id),
            ));
        }
        let submission_id = map.get("submissionId").and_then(Value::as_str).map(str::to_owned);
        let request = fingerprint(&body);
        let key = submission_id.as_deref().map(|id| act_key(seat, id));
        // Only identities the kernel accepted before can have a stored answer.
        let accepted_before = submission_id.as_deref().is_some_and(|id| self.kernel.was_accepted(seat, id));
        let stored = match &key {
            Some(key) if accepted_before => self.stored_act_answer(key).await,
            _ => None,
        };
        if let Some(stored) = &stored
            && stored.request == request
        {
            return Ok(ActStep::Answered(Answer { status: stored.status, body: stored.body.clone() }));
        }
        // The lease decides first: a refused dispatch is never registered.
        self.dispatch_lease(seat, presented, LeaseOp::Act).await?;
        let submission = gaos_kernel::CommandSubmission::from_value(&body).map_err(|e| from_kernel(e.into()))?;
        Ok(ActStep::Submit(Box::new(PendingAct { seat: seat.to_owned(), submission, key, request, stored })))
    }

    /// The pending (or, with nobody awaited, resolved) answer to an accepted
    /// ingest that did not resolve its window.
    fn pending_answer(&self, seat: &str, receipt: &gaos_kernel::IngestReceipt) -> Result<Answer, HostError> {
        let view = self.kernel.observe(seat).map_err(from_kernel)?;
        let done = self.kernel.is_terminal();
        let tick = self.seat_observation(seat, &view, false, done);
        let ext = envelope::base_extensions(&self.id, &self.finalization());
        Ok(if receipt.awaiting_participants.is_empty() {
            Answer::json(200, &envelope::envelope(&self.id, self.kernel.cursor(), tick, None, ext))
        } else {
            let pending = Pending {
                submitted: receipt.submitted_participants.clone(),
                awaiting: receipt.awaiting_participants.clone(),
                accepted: Some(seat.to_owned()),
            };
            Answer::json(202, &envelope::envelope(&self.id, self.kernel.cursor(), tick, Some(pending), ext))
        })
    }

    /// One checked act through the kernel and the store.
    async fn submit_one(&mut self, act: PendingAct) -> Result<Answer, HostError> {
        let PendingAct { seat, submission, key, request, stored } = act;
        let seat = seat.as_str();
        let prepared = match self.kernel.prepare_ingest_and_resolve(&submission) {
            Ok(p) => p,
            Err(e @ gaos_kernel::KernelError::Reducer { .. }) => return Err(self.game_failed(e).await),
            Err(e) => return Err(from_kernel(e)),
        };
        if prepared.is_noop() {
            // An exact retry whose answer was not stored: the completing ingest
            // was persisted but its resolution (which carries the answer) was
            // not, after a crash or a storage failure. Resolve the window now if
            // that is still owed, and store the answer given now, so every
            // later retry gets these bytes.
            let mut prepared = prepared;
            let _ = self.kernel.commit(&mut prepared);
            self.resolve_ready_window().await;
            let turns = self.config.cadence().ok() == Some(Cadence::Turns);
            if turns && self.kernel.window().is_complete() && !self.kernel.is_terminal() {
                return Err(HostError::unavailable("the complete window could not be resolved yet; retry"));
            }
            // Answered before (to the first copy, or to a retry that differed
            // only in fields the kernel ignores): keep the first answer.
            let stored = match (stored, &key) {
                (Some(stored), _) => Some(stored),
                (None, Some(key)) => self.stored_act_answer(key).await,
                (None, None) => None,
            };
            if let Some(stored) = stored {
                return Ok(Answer { status: stored.status, body: stored.body });
            }
            let answer = self
                .observe(Some(seat))
                .map(|a| if a.status == 202 { a } else { Answer { status: 200, body: a.body } })?;
            if let Some(key) = key {
                let op = self.answer_op("act", &key, &request, &answer);
                self.writer
                    .write(WriteBatch { ops: vec![op.clone()] })
                    .await
                    .map_err(|e| HostError::unavailable(format!("the answer could not be made durable: {e}")))?;
                self.remember(op);
            }
            return Ok(answer);
        }
        let receipt = prepared.receipt().cloned().expect("ingest yields a receipt");
        let key = key.expect("an accepted submission has an id");
        // An ingest that completed a turns window carries its resolution: one
        // durable write holds both transitions and the answer.
        let answer = if prepared.summary().is_some() {
            self.resolved_answer_after(seat, &prepared)
        } else {
            self.pending_answer(seat, &receipt)?
        };
        let op = self.answer_op("act", &key, &request, &answer);
        let mut ops = vec![op.clone()];
        ops.extend(self.lease_op_if_due());
        self.run_transition(prepared, ops).await?;
        self.remember(op);
        Ok(answer)
    }

    /// The resolved envelope `seat` will see once `advance` commits.
    fn resolved_answer_after(&self, seat: &str, advance: &Prepared<AnyState>) -> Answer {
        let summary = advance.summary().expect("advance yields a summary");
        let current = self.kernel.observe(seat).map(|v| (*v).clone()).unwrap_or_default();
        let view = advance
            .deltas()
            .iter()
            .rev()
            .find(|d| d.seat == seat)
            .and_then(|d| match &d.body {
                DeltaBody::Snapshot { view } => Some((**view).clone()),
                DeltaBody::Unchanged => None,
            })
            .unwrap_or(current);
        let status = advance.events().iter().rev().find_map(|e| match &e.body {
            EventBody::Resolution { result, .. } => Some(result.status.clone()),
            _ => None,
        });
        let done = match &status {
            Some(s) => s != "playing",
            None => self.kernel.is_terminal(),
        };
        let finalization = if done { Finalization::Terminal } else { Finalization::Live };
        let mut ext = envelope::base_extensions(&self.id, &finalization);
        let notices: Vec<Value> = summary
            .rejections
            .iter()
            .filter(|n| n.seat == seat)
            .map(|n| gaos_json::to_value(n).expect("notice is JSON"))
            .collect();
        if !notices.is_empty() {
            ext.insert(EXT_REJECTIONS.into(), Value::Array(notices));
        }
        let tick = self.seat_observation(seat, &view, true, done);
        Answer::json(200, &envelope::envelope(&self.id, summary.cursor, tick, None, ext))
    }

    fn answer_op(&self, kind: &str, key: &str, request: &str, answer: &Answer) -> WriteOp {
        WriteOp::Answer(StoredAnswer {
            session_id: self.id.clone(),
            kind: kind.into(),
            key: key.into(),
            status: answer.status,
            request: request.into(),
            body: answer.body.clone(),
        })
    }

    fn remember(&mut self, op: WriteOp) {
        if let WriteOp::Answer(answer) = op {
            if answer.kind == "act" {
                self.act_answer_order.push_back(answer.key.clone());
                while self.act_answer_order.len() > ANSWERS_IN_MEMORY {
                    if let Some(old) = self.act_answer_order.pop_front() {
                        self.answers.remove(&("act".to_owned(), old));
                        self.answers_evicted = true;
                    }
                }
            }
            self.answers.insert((answer.kind.clone(), answer.key.clone()), answer);
        }
    }

    /// A stored act answer: from memory, or from the store when older
    /// answers were evicted (or the session was rehydrated).
    async fn stored_act_answer(&mut self, key: &str) -> Option<StoredAnswer> {
        if let Some(answer) = self.answers.get(&("act".to_owned(), key.to_owned())) {
            return Some(answer.clone());
        }
        if !self.answers_evicted {
            return None;
        }
        let reader = Arc::clone(&self.reader);
        let (id, key) = (self.id.clone(), key.to_owned());
        tokio::task::spawn_blocking(move || reader.load_answer(&id, "act", &key)).await.ok()?.ok()?
    }

    // ----- attach ------------------------------------------------------------

    fn state_digest(&self) -> String {
        let mut preimage =
            format!("{{\"cursor\":{},\"tick\":{},\"views\":{{", self.kernel.cursor(), self.kernel.tick());
        let mut seats = self.config.seats.clone();
        seats.sort();
        for (i, seat) in seats.iter().enumerate() {
            if i > 0 {
                preimage.push(',');
            }
            preimage.push_str(&canonical_json(&Value::String(seat.clone())));
            preimage.push(':');
            if let Ok(view) = self.kernel.observe_canonical(seat) {
                preimage.push_str(&view);
            }
        }
        preimage.push_str("}}");
        sha256_hex(preimage.as_bytes())
    }

    fn transcript_digest(&self) -> String {
        gaos_json::hex_encode(&self.transcript_hash.clone().finalize())
    }

    async fn attach(&mut self, seat: &str, presented: &Presented, body: Value) -> Result<Answer, HostError> {
        let map =
            body.as_object().ok_or_else(|| HostError::invalid_request("the attach body must be a JSON object"))?;
        if let Some(key) = map
            .keys()
            .find(|k| !["requestId", "participantId", "controller", "extensions", "lease"].contains(&k.as_str()))
        {
            return Err(HostError::invalid_request(format!("unknown attach field {key:?}")));
        }
        let request_id = map
            .get("requestId")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| HostError::invalid_request("requestId must be a non-blank string"))?
            .to_owned();
        match map.get("participantId") {
            None => {}
            Some(Value::String(p)) if p == seat => {}
            Some(_) => return Err(HostError::forbidden(format!("this token attaches seat {seat:?} only"))),
        }
        if let Some(controller) = map.get("controller") {
            gaos_session::policy::validate_controller(controller, "controller").map_err(HostError::invalid_request)?;
        }
        if let Some(ext) = map.get("extensions")
            && !ext.is_object()
        {
            return Err(HostError::invalid_request("extensions must be a JSON object"));
        }
        if self.status == SessionStatus::Finalized {
            return Err(HostError::conflict("session_finalized", "a finalized session cannot be attached"));
        }
        self.ensure_writable()?;
        if !self.policy.attachable() {
            return Err(HostError::conflict("not_attachable", "this session's policy says it is not attachable"));
        }
        let request = fingerprint(&body);
        let key = format!("{seat}\u{0}{request_id}");
        if let Some(stored) = self.answers.get(&("attach".to_owned(), key.clone())) {
            let stored_revision = gaos_json::parse(&stored.body)
                .ok()
                .and_then(|b| b.get("binding").and_then(|x| x.get("revision")).and_then(Value::as_u64));
            if stored.request == request && stored_revision == Some(self.kernel.cursor()) {
                return Ok(Answer { status: stored.status, body: stored.body.clone() });
            }
            return Err(HostError::conflict(
                "attach_request_reused",
                format!("attach request {request_id:?} was already used at another revision or with another body"),
            ));
        }
        if let (Some(pinned), Some(controller)) = (&self.pinned_controller, map.get("controller"))
            && canonical_json(pinned) != canonical_json(controller)
        {
            return Err(HostError::conflict(
                "controller_mismatch",
                "the attach controller differs from the session's pinned controller identity",
            ));
        }
        // Claims: a lease-aware attach (with `lease`) takes the seat, refused
        // while another claim is live; a lease-unaware attach takes a claim
        // only when the seat has none, and otherwise acts under the current one.
        let lease_request = map.get("lease");
        let duration_ms = self.lease_duration(lease_request)?;
        self.expire_leases().await;
        let now = self.clock.now_ms();
        let mut lease_ext = Map::new();
        let current = self.leases.seats.get(seat).and_then(|l| l.current.as_ref());
        // Fencing: an attach that carries an older epoch than the seat's is refused.
        if let (Some(sent), Some(claim)) = (presented.epoch, current)
            && sent < claim.epoch
        {
            return Err(Self::lease_error(LeaseError::WriterConflict {
                seat: seat.to_owned(),
                holder_id: Some(claim.holder_id.clone()),
                epoch: claim.epoch,
            }));
        }
        let has_claim = current.is_some();
        if lease_request.is_some() || !has_claim {
            let holder = map
                .get("controller")
                .and_then(|c| c.get("id"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("attach:{request_id}"));
            let token = crate::auth::new_token("gaos_lease_");
            let granted =
                self.leases.claim(seat, &holder, &token_hash(&token), duration_ms, now).map_err(Self::lease_error)?;
            self.record_lease_events(granted.events).await?;
            self.arm_timers();
            lease_ext.insert("token".into(), token.into());
        }
        if let Some(claim) = self.leases.seats.get(seat).and_then(|l| l.current.as_ref()) {
            lease_ext.insert("epoch".into(), claim.epoch.into());
            lease_ext.insert("expiresAt".into(), claim.expires_at.into());
            lease_ext.insert("durationMs".into(), claim.duration_ms.into());
        }
        let receipt_mode = self.config.receipts.or(if self.policy.wants_attach_receipts() {
            Some(ReceiptMode::Chained)
        } else {
            None
        });
        let revision = self.kernel.cursor();
        let mut ext = envelope::base_extensions(&self.id, &self.finalization());
        let mut result = Map::new();
        result.insert("sessionId".into(), self.id.clone().into());
        let done = self.kernel.is_terminal();
        let view = self.kernel.observe(seat).map_err(from_kernel)?;
        let submitted = self.kernel.window().intents.contains_key(seat);
        result.insert("tick".into(), self.seat_observation(seat, &view, !submitted, done));
        result.insert("binding".into(), envelope::binding(&self.id, revision, seat));
        let mut issued: Option<String> = None;
        if let Some(mode) = receipt_mode {
            let mut receipt_body = ReceiptBody::new(
                &self.id,
                &request_id,
                self.receipts_issued,
                revision,
                self.transcript_digest(),
                self.state_digest(),
            );
            if mode == ReceiptMode::Chained {
                receipt_body.previous_receipt_digest = self.last_receipt_digest.clone();
            }
            receipt_body.controller = map.get("controller").and_then(|c| c.as_object().cloned());
            receipt_body.attached_at = Some(now_ms() as f64);
            let receipt = AttachReceipt::new(receipt_body).map_err(|e| HostError::internal(e.to_string()))?;
            let mut att = Map::new();
            att.insert("receiptDigest".into(), receipt.receipt_digest.clone().into());
            att.insert("sequence".into(), self.receipts_issued.into());
            ext.insert(EXT_ATTACH.into(), Value::Object(att));
            issued = Some(receipt.receipt_digest.clone());
            result.insert("receipt".into(), receipt.to_value().map_err(|e| HostError::internal(e.to_string()))?);
        }
        if !lease_ext.is_empty() {
            ext.insert(EXT_LEASE.into(), Value::Object(lease_ext));
        }
        result.insert("extensions".into(), Value::Object(ext));
        let answer = Answer::json(200, &Value::Object(result));
        let mut ops = vec![self.answer_op("attach", &key, &request, &answer), self.lease_op()];
        if self.pinned_controller.is_none()
            && let Some(controller) = map.get("controller")
        {
            ops.push(WriteOp::SessionState {
                session_id: self.id.clone(),
                key: "controller".into(),
                value: canonical_json(controller),
            });
        }
        self.writer
            .write(WriteBatch { ops: ops.clone() })
            .await
            .map_err(|e| HostError::unavailable(format!("the attach could not be made durable: {e}")))?;
        for op in ops {
            self.remember(op);
        }
        if self.pinned_controller.is_none() {
            self.pinned_controller = map.get("controller").cloned();
        }
        if let Some(digest) = issued {
            self.receipts_issued += 1;
            self.last_receipt_digest = Some(digest);
        }
        Ok(answer)
    }

    // ----- finalize ----------------------------------------------------------

    /// Identity permutation covering every `Action N` id in the transcript.
    fn identity_perm(&self) -> Vec<u64> {
        let mut max = 1u64;
        for event in self.kernel.events().iter() {
            if let EventBody::Resolution { inputs, .. } = &event.body {
                for input in inputs {
                    if let Some(n) = input.action.id.strip_prefix("Action ").and_then(|n| n.parse::<u64>().ok()) {
                        max = max.max(n);
                    }
                }
            }
        }
        (0..max).collect()
    }

    fn replay_text(&self) -> Result<String, HostError> {
        if !self.kernel.is_terminal() {
            return Err(HostError::conflict(
                "not_terminal",
                "the replay exists once the game reached a terminal result",
            ));
        }
        let transcript = self.kernel.live_transcript();
        let artifact =
            finalize_replay(&transcript, &FinalizeOptions { perm: self.identity_perm(), ..FinalizeOptions::default() })
                .map_err(|e| HostError::internal(format!("finalizing the replay failed: {e}")))?;
        Ok(artifact.to_jsonl())
    }

    async fn finalize(&mut self, body: Value) -> Result<Answer, HostError> {
        let map =
            body.as_object().ok_or_else(|| HostError::invalid_request("the finalize body must be a JSON object"))?;
        if let Some(key) = map.keys().find(|k| !["requestId", "metadata", "extensions"].contains(&k.as_str())) {
            return Err(HostError::invalid_request(format!("unknown finalize field {key:?}")));
        }
        let request_id = map
            .get("requestId")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| HostError::invalid_request("requestId must be a non-blank string"))?;
        if let Some(ext) = map.get("extensions")
            && !ext.is_object()
        {
            return Err(HostError::invalid_request("extensions must be a JSON object"));
        }
        let request = fingerprint(&body);
        if let Some(stored) = self.answers.get(&("finalize".to_owned(), "result".to_owned())) {
            if stored.request == request {
                return Ok(Answer { status: stored.status, body: stored.body.clone() });
            }
            return Err(HostError::conflict(
                "finalize_conflict",
                "the session was already finalized by a different request; retry with the original requestId and body",
            ));
        }
        if self.status == SessionStatus::Revoked {
            self.ensure_writable()?;
        }
        if !self.kernel.is_terminal() {
            return Err(HostError::conflict("not_terminal", "the game has not reached a terminal result yet"));
        }
        let replay = self.replay_text()?;
        let terminal = self.kernel.events().iter().rev().find_map(|e| match &e.body {
            EventBody::Resolution { result, .. } => Some(result.clone()),
            _ => None,
        });
        let mut outcome = Map::new();
        if let Some(result) = terminal {
            outcome.insert("status".into(), result.status.into());
            outcome.insert("stars".into(), result.stars.map_or(Value::Null, Value::Number));
            outcome.insert("actionsUsed".into(), result.actions_used.into());
        }
        if let Some(o) = self.kernel.full_view().get("outcome") {
            outcome.insert("outcome".into(), o.clone());
        }
        let mut result = Map::new();
        result.insert("sessionId".into(), self.id.clone().into());
        result.insert("status".into(), "finalized".into());
        result.insert("outcome".into(), Value::Object(outcome));
        let replay_digest = sha256_hex(replay.as_bytes());
        if self.policy.includes_replay() {
            result.insert("replay".into(), replay.into());
        }
        let mut artifact = Map::new();
        artifact.insert("kind".into(), "replay".into());
        artifact.insert("digest".into(), replay_digest.into());
        artifact.insert("mediaType".into(), gaos_kernel::replay::MEDIA_TYPE.into());
        artifact.insert("uri".into(), format!("/v1/sessions/{}/replay", self.id).into());
        result.insert("artifacts".into(), Value::Array(vec![Value::Object(artifact)]));
        if self.policy.evaluation_kind() != "none" {
            let mut evaluation = Map::new();
            evaluation.insert("kind".into(), self.policy.evaluation_kind().into());
            result.insert("evaluation".into(), Value::Object(evaluation));
        }
        let mut ext = Map::new();
        ext.insert("gaos.session.request".into(), Value::String(request_id.to_owned()));
        ext.insert("gaos.session.policy".into(), self.policy.digest().into());
        if let Some(metadata) = map.get("metadata") {
            ext.insert("gaos.session.metadata".into(), metadata.clone());
        }
        result.insert("extensions".into(), Value::Object(ext));
        let answer = Answer::json(200, &Value::Object(result));
        let op = self.answer_op("finalize", "result", &request, &answer);
        let batch = WriteBatch {
            ops: vec![op.clone(), WriteOp::SetStatus { session_id: self.id.clone(), status: SessionStatus::Finalized }],
        };
        self.writer
            .write(batch)
            .await
            .map_err(|e| HostError::unavailable(format!("the finalization could not be made durable: {e}")))?;
        self.remember(op);
        self.status = SessionStatus::Finalized;
        self.arm_timers();
        Ok(answer)
    }

    // ----- streams -----------------------------------------------------------

    fn subscribe(&self, seat: Option<&str>, after: Option<u64>) -> Result<Subscription, HostError> {
        if let Some(reason) = &self.leases.revoked {
            return Err(revoked_error(reason));
        }
        match seat {
            Some(seat) => {
                let tx = self
                    .seat_streams
                    .get(seat)
                    .ok_or_else(|| HostError::forbidden(format!("unknown seat {seat:?}")))?;
                let live = tx.subscribe();
                let mut initial = Vec::new();
                if after != Some(self.kernel.transition_revision()) {
                    let snapshot =
                        self.kernel.snapshot(seat, after).map_err(|e| HostError::invalid_request(e.to_string()))?;
                    initial.push(Arc::new(StreamItem { event: "delta", data: canonical_json(&snapshot.to_value()) }));
                }
                Ok(Subscription { initial, live })
            }
            None => Ok(Subscription {
                initial: vec![Arc::new(StreamItem { event: "public", data: self.public_frame() })],
                live: self.spectator_stream.subscribe(),
            }),
        }
    }

    // ----- leases --------------------------------------------------------------

    fn default_lease_ms(&self) -> u64 {
        self.config.lease_ms.unwrap_or(self.lease_bounds.default_ms)
    }

    /// The duration of a requested claim (`{"durationMs": N}`, or `{}` for
    /// the default), within bounds.
    fn lease_duration(&self, request: Option<&Value>) -> Result<u64, HostError> {
        match crate::config::requested_lease_ms(request, &self.lease_bounds).map_err(HostError::invalid_request)? {
            Some(ms) => Ok(ms),
            None => Ok(self.default_lease_ms()),
        }
    }

    /// Whether a lapse stops the session's clock (ticks cadence).
    fn pauses_session(&self) -> bool {
        self.tick_period_ms.is_some()
    }

    fn lease_op(&mut self) -> WriteOp {
        self.persisted_book = self.leases.clone();
        WriteOp::SessionState { session_id: self.id.clone(), key: "leases".into(), value: self.leases.to_json() }
    }

    /// The lease book write, only when it changed beyond a lease slide of
    /// less than a tenth of the lease (acts slide the lease every time; a
    /// restart may then see a claim expire up to that much early, which only
    /// pauses the seat until its holder renews).
    fn lease_op_if_due(&mut self) -> Option<WriteOp> {
        self.leases.drifted_from(&self.persisted_book).then(|| self.lease_op())
    }

    /// Persist lease events: each as an `extension` event on lane
    /// `gaos.lease` (while the game runs; the kernel takes no extensions once
    /// it ended) together with the lease book, then publish them.
    async fn record_lease_events(&mut self, events: Vec<LeaseEvent>) -> Result<(), HostError> {
        const RECORDED: [&str; 6] = ["lease_expired", "lease_renewed", "paused", "resumed", "takeover", "revoked"];
        let mut wrote_book = false;
        for event in events.into_iter().filter(|e| RECORDED.contains(&e.kind())) {
            let record = Value::Object(event.record.clone());
            if !self.kernel.is_terminal() {
                match self.kernel.prepare_extension("gaos.lease", &record) {
                    Ok(prepared) => {
                        let book = self.lease_op();
                        self.run_transition(prepared, vec![book]).await?;
                        wrote_book = true;
                    }
                    Err(e) => tracing::warn!(session = %self.id, error = %e, "a lease event was not recorded"),
                }
            }
            self.publish_lease(&record);
        }
        if !wrote_book {
            let book = self.lease_op();
            self.writer
                .write(WriteBatch { ops: vec![book] })
                .await
                .map_err(|e| HostError::unavailable(format!("the lease state could not be made durable: {e}")))?;
        }
        Ok(())
    }

    fn publish_lease(&self, record: &Value) {
        let item = Arc::new(StreamItem { event: "lease", data: canonical_json(record) });
        for tx in self.seat_streams.values() {
            let _ = tx.send(Arc::clone(&item));
        }
        let _ = self.spectator_stream.send(item);
    }

    /// Record every lapse that is due (eager timer and lazy checks).
    async fn expire_leases(&mut self) {
        let events = self.leases.expire_due(self.clock.now_ms(), self.pauses_session());
        if !events.is_empty() {
            for event in &events {
                let record = canonical_json(&Value::Object(event.record.clone()));
                tracing::info!(session = %self.id, record = %record, "lease lapsed");
            }
            if let Err(e) = self.record_lease_events(events).await {
                tracing::warn!(session = %self.id, error = %e, "a lapse could not be recorded");
            }
            self.arm_timers();
        }
    }

    fn lease_error(e: LeaseError) -> HostError {
        match e {
            LeaseError::Expired { seat, epoch } => HostError::conflict(
                "lease_expired",
                format!("the lease of seat {seat:?} lapsed; renew it (POST .../lease/renew) and retry"),
            )
            .with_detail("seat", seat)
            .with_detail("epoch", epoch),
            LeaseError::WriterConflict { seat, holder_id, epoch } => HostError::conflict(
                "writer_conflict",
                format!(
                    "seat {seat:?} is held by another writer{}",
                    holder_id.as_deref().map(|h| format!(" ({h})")).unwrap_or_default()
                ),
            )
            .with_detail("seat", seat)
            .with_detail("epoch", epoch)
            .with_detail("holderId", holder_id),
            LeaseError::Paused { seat, reasons, .. } => HostError::conflict(
                "session_paused",
                format!("seat {seat:?} is paused ({}); resume it first", reasons.join(", ")),
            )
            .with_detail("seat", seat),
            LeaseError::Revoked { reason } => revoked_error(&reason),
            LeaseError::CapabilityRejected(message) => {
                HostError::new(axum::http::StatusCode::FORBIDDEN, "capability_rejected", message)
            }
        }
    }

    /// Authorize a dispatch on `seat`, recording its lease events.
    async fn dispatch_lease(&mut self, seat: &str, presented: &Presented, op: LeaseOp) -> Result<Granted, HostError> {
        self.expire_leases().await;
        let now = self.clock.now_ms();
        let pauses = self.pauses_session();
        let default_ms = self.default_lease_ms();
        let granted = match self.leases.dispatch(seat, presented, &op, now, pauses, default_ms) {
            Ok(granted) => granted,
            Err(LeaseError::Paused { seat, reasons, events }) => {
                // The act meets a deliberate pause after the host renewed (or
                // implicitly took) the claim for a lease-unaware caller: that
                // renewal stands, so it is recorded like any other.
                if !events.is_empty() {
                    self.record_lease_events(events).await?;
                    self.arm_timers();
                }
                return Err(Self::lease_error(LeaseError::Paused { seat, reasons, events: Vec::new() }));
            }
            Err(e) => return Err(Self::lease_error(e)),
        };
        if !granted.events.is_empty() {
            self.record_lease_events(granted.events.clone()).await?;
            self.arm_timers();
        }
        Ok(granted)
    }

    /// Lease routes: renew, heartbeat, pause, resume, stop.
    async fn lease_call(
        &mut self,
        seat: &str,
        presented: &Presented,
        op: LeaseOp,
        operator: bool,
    ) -> Result<Answer, HostError> {
        if let Some(reason) = &self.leases.revoked {
            return Err(revoked_error(reason));
        }
        if self.status == SessionStatus::Finalized {
            return Err(HostError::conflict("session_finalized", "the session was finalized"));
        }
        if operator {
            let LeaseOp::Pause(reason) = &op else {
                return Err(HostError::forbidden("the operator may pause a seat; only its holder renews or resumes"));
            };
            self.expire_leases().await;
            let events = self.leases.pause_free(seat, reason);
            self.record_lease_events(events).await?;
            self.arm_timers();
        } else {
            let stop = match &op {
                LeaseOp::Stop(reason) => Some(reason.clone()),
                _ => None,
            };
            self.dispatch_lease(seat, presented, op).await?;
            if let Some(reason) = stop {
                return self.revoke(&reason, &format!("seat:{seat}")).await;
            }
        }
        Ok(Answer::json(200, &self.leases.describe(seat, presented, self.clock.now_ms())))
    }

    /// Revoke the session (stop, emergency stop, game failure). Final.
    async fn revoke(&mut self, reason: &str, by: &str) -> Result<Answer, HostError> {
        let Some(event) = self.leases.revoke(reason, by) else {
            return Err(revoked_error(self.leases.revoked.as_deref().unwrap_or(reason)));
        };
        self.status = SessionStatus::Revoked;
        self.next_tick_at = None;
        self.turn_deadline = None;
        tracing::warn!(session = %self.id, reason, by, "session revoked");
        // Teardown is bounded: the revocation holds in memory at once; its
        // durable record gets a few seconds.
        let record = Value::Object(event.record.clone());
        let persist = async {
            if !self.kernel.is_terminal()
                && let Ok(prepared) = self.kernel.prepare_extension("gaos.lease", &record)
            {
                let book = self.lease_op();
                let status = WriteOp::SetStatus { session_id: self.id.clone(), status: SessionStatus::Revoked };
                return self.run_transition(prepared, vec![book, status]).await.map(|_| ());
            }
            let ops = vec![
                self.lease_op(),
                WriteOp::SetStatus { session_id: self.id.clone(), status: SessionStatus::Revoked },
            ];
            self.writer.write(WriteBatch { ops }).await.map_err(|e| HostError::unavailable(e.to_string()))
        };
        match tokio::time::timeout(Duration::from_secs(5), persist).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(session = %self.id, error = %e, "the revocation could not be persisted"),
            Err(_) => tracing::error!(session = %self.id, "persisting the revocation timed out"),
        }
        self.publish_lease(&record);
        let mut out = Map::new();
        out.insert("sessionId".into(), self.id.clone().into());
        out.insert("status".into(), "revoked".into());
        out.insert("reason".into(), reason.into());
        Ok(Answer::json(200, &Value::Object(out)))
    }

    /// Game code failed while resolving: the session is revoked.
    async fn game_failed(&mut self, e: gaos_kernel::KernelError) -> HostError {
        tracing::error!(session = %self.id, error = %e, "game code failed; revoking the session");
        let _ = self.revoke("reducer_failed", "host").await;
        revoked_error(&format!("reducer_failed: {e}"))
    }

    // ----- timers ------------------------------------------------------------

    fn arm_timers(&mut self) {
        let now = self.clock.now_ms();
        let active = self.status == SessionStatus::Active && !self.kernel.is_terminal();
        if !active {
            self.next_tick_at = None;
            self.turn_deadline = None;
            self.turn_frozen = None;
            return;
        }
        if let Some(period) = self.tick_period_ms {
            if self.leases.any_paused(now) {
                // The scheduler stops while a seat is paused or lapsed.
                self.next_tick_at = None;
            } else if self.next_tick_at.is_none() {
                self.next_tick_at = Some(now + period.ceil() as i64);
            }
        }
        if let Some(ms) = self.config.turn_ms {
            let (cursor, ms) = (self.kernel.cursor(), ms as i64);
            match self.turn_paused_since(now) {
                // The awaited seat is paused or lapsed: its turn clock stops
                // where it stood when the pause began.
                Some(since) => {
                    if let Some((c, at)) = self.turn_deadline.take()
                        && c == cursor
                    {
                        self.turn_frozen = Some((c, (at - since).clamp(0, ms)));
                    }
                    if self.turn_frozen.is_none_or(|(c, _)| c != cursor) {
                        self.turn_frozen = Some((cursor, ms));
                    }
                }
                // Running: a stopped turn clock runs on with the time it had left.
                None => {
                    if self.turn_deadline.is_none_or(|(c, _)| c != cursor) {
                        let left = self.turn_frozen.filter(|(c, _)| *c == cursor).map_or(ms, |(_, left)| left);
                        self.turn_deadline = Some((cursor, now + left));
                    }
                    self.turn_frozen = None;
                }
            }
        }
    }

    /// When the pause of the one awaited seat began, if that seat is paused
    /// now: at its lapse (the lease ran out then), or now for a safety pause
    /// (applied by a call, which re-arms the timers at once).
    fn turn_paused_since(&self, now: i64) -> Option<i64> {
        let awaiting = self.kernel.awaiting_seats();
        let [seat] = awaiting.as_slice() else { return None };
        if !self.leases.seat_paused(seat, now) {
            return None;
        }
        let lease = self.leases.seats.get(seat.as_str())?;
        let lapsed_at = lease.current.as_ref().map(|c| c.expires_at).filter(|at| *at <= now);
        Some(match lapsed_at {
            Some(at) if !lease.safety_paused => at,
            _ => now,
        })
    }

    fn next_deadline(&self) -> Option<i64> {
        [self.next_tick_at, self.turn_deadline.map(|(_, at)| at), self.leases.next_expiry(self.clock.now_ms())]
            .into_iter()
            .flatten()
            .min()
    }

    async fn on_timer(&mut self) {
        self.expire_leases().await;
        let now = self.clock.now_ms();
        if let (Some(at), Some(period)) = (self.next_tick_at, self.tick_period_ms)
            && now >= at
            && !self.leases.any_paused(now)
        {
            // Bounded catch-up: resolve the ticks that came due, at most
            // the kernel's catch-up limit per firing.
            let due = 1 + ((now - at) as f64 / period) as u64;
            let limits = *self.kernel.limits();
            let steps = due.min(limits.max_catch_up_ticks).min(limits.max_future_ticks + 1);
            let target = self.kernel.tick() + steps - 1;
            self.next_tick_at = Some(at + (period * due as f64).ceil() as i64);
            match self.kernel.prepare_advance(Some(target as f64)) {
                Ok(prepared) => {
                    if let Err(e) = self.run_transition(prepared, Vec::new()).await {
                        tracing::warn!(session = %self.id, error = %e, "a scheduled tick failed");
                    }
                }
                Err(e @ gaos_kernel::KernelError::Reducer { .. }) => {
                    let _ = self.game_failed(e).await;
                }
                Err(e) => tracing::error!(session = %self.id, error = %e, "a scheduled tick was refused"),
            }
        }
        if let Some((cursor, at)) = self.turn_deadline
            && now >= at
        {
            self.turn_deadline = None;
            if cursor == self.kernel.cursor() && !self.kernel.is_terminal() {
                self.on_turn_deadline(cursor).await;
            }
        }
        self.arm_timers();
    }

    /// A turn ran out: time out the one seat still awaited (with the game's
    /// timeout mapper), unless that seat is paused or its lease lapsed (a
    /// thinking holder is never played for). With several seats awaited
    /// nobody has acted yet, so the window stays open for another turn.
    async fn on_turn_deadline(&mut self, cursor: u64) {
        let awaiting = self.kernel.awaiting_seats();
        if awaiting.len() != 1 {
            return;
        }
        let seat = &awaiting[0];
        if self.leases.seat_paused(seat, self.clock.now_ms()) {
            return;
        }
        let timeout = TimeoutInput::new(&format!("turn:{cursor}:{seat}"), self.kernel.tick(), Some(seat), "elapsed");
        match self.kernel.prepare_timeout(&timeout, None) {
            Ok(prepared) => {
                if let Err(e) = self.run_transition(prepared, Vec::new()).await {
                    tracing::warn!(session = %self.id, error = %e, "a turn timeout could not be persisted");
                }
            }
            Err(e @ gaos_kernel::KernelError::Reducer { .. }) => {
                let _ = self.game_failed(e).await;
            }
            Err(e) => tracing::warn!(session = %self.id, error = %e, "a turn timeout was refused"),
        }
    }
}

/// The 410 answered for every call once a session is revoked.
pub fn revoked_error(reason: &str) -> HostError {
    HostError::new(
        axum::http::StatusCode::GONE,
        "revoked",
        format!("the session was revoked ({reason}); nothing can act on it again"),
    )
}

async fn sleep_opt(duration: Option<Duration>) {
    match duration {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

/// Wall-clock milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}
