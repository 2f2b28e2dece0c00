//! One single-writer actor per live session. It owns the kernel and runs the
//! host lane for every transition: prepare → persist (group commit) → commit →
//! publish. A persistence failure aborts the prepared transition, so live
//! state never runs ahead of the store, and nothing is acknowledged before
//! its events are durable.
//!
//! One type, [`SessionActor`], in rooms of one concern each: this file holds
//! its fields, `spawn` and the run loop; `mailbox` the messages and their
//! dispatch, `envelopes` what seats see, `lane` the persist/commit path,
//! `act`, `attach`, `finalize` (with `evaluation`), `reset` (with `episodes`), `streams`, `leases`
//! and `timers` the rest.

mod act;
mod act_words;
mod attach;
mod below_floor;
mod checkpoints;
mod envelopes;
mod episodes;
mod evaluation;
mod finalize;
mod history;
mod lane;
mod leases;
mod mailbox;
mod persist;
mod reset;
mod seat_keys;
mod seat_signatures;
mod seat_states;
mod streams;
mod timers;

use std::sync::Arc;
use std::time::Duration;

use gaos_json::Value;
use gaos_kernel::{Cadence, DynReducer, Game, SessionKernel};
use tokio::sync::mpsc;

use crate::answers::{ACT_ANSWERS_IN_MEMORY, AnswerCache};
use crate::clock::HostClock;
use crate::config::{LeaseBounds, SessionConfig};
use crate::digest_key::DigestKey;
use crate::host_key::HostKey;
use crate::lease::LeaseBook;
use crate::metrics::Metrics;
use crate::receipts::ReceiptIssuer;
use crate::schedule::{TickSchedule, TurnClock};
use crate::storage::writer::Writer;
use crate::storage::{Fence, SessionStateKey, SessionStatus, StoreReader, StoredAnswer, WriteOp};

pub use crate::wire::SeatState;
pub(crate) use below_floor::BelowFloor;
pub use checkpoints::DEFAULT_CHECKPOINT_EVERY;
pub(crate) use checkpoints::StoreHistory;
pub(crate) use episodes::{Episodes, ResetMark, rehydrate_run};
pub use mailbox::{ActCall, ActorHandle, Command, SessionSummary};
pub(crate) use persist::fence_of;
pub use streams::{StreamItem, Subscription};

use lane::TranscriptHash;
use streams::Streams;

/// Everything an actor starts from.
pub(crate) struct ActorInit {
    pub config: SessionConfig,
    pub game: Arc<dyn Game>,
    pub kernel: SessionKernel<DynReducer>,
    pub status: SessionStatus,
    /// The stored answers other than acts (attach, finalize).
    pub answers: Vec<StoredAnswer>,
    pub writer: Writer,
    pub metrics: Arc<Metrics>,
    pub reader: Arc<dyn StoreReader>,
    pub leases: LeaseBook,
    pub clock: Arc<HostClock>,
    pub lease_bounds: LeaseBounds,
    /// The secret the receipt digests are keyed with (never sent).
    pub digest_key: DigestKey,
    /// Derives the lease tokens of attach answers (never stored).
    pub host_key: HostKey,
    /// The controller identity a first attach pinned (`session_state`
    /// `controller`), restored after a restart.
    pub pinned_controller: Option<Value>,
    /// The persisted turn clock (`session_state` `turnClock`), if any.
    pub turn_clock: Option<String>,
    /// Where a multi-level run is (level 0 for every other session).
    pub episodes: Episodes,
    /// Transitions between two checkpoints (0: never).
    pub checkpoint_every: u64,
    /// Set when the kernel was restored from a checkpoint.
    pub restored_from: Option<RestoredFrom>,
    /// The owner and epoch this host holds the session at.
    pub fence: Fence,
}

/// Where a kernel restored from a checkpoint starts: the transcript digest
/// and how many events were stored at the checkpoint (the kernel holds the
/// tail after it).
pub(crate) struct RestoredFrom {
    pub transcript_digest: [u8; 32],
    pub events: u64,
}

pub(crate) struct SessionActor {
    id: String,
    config: SessionConfig,
    game: Arc<dyn Game>,
    /// The live level's kernel (a session that is not a run has one level).
    kernel: SessionKernel<DynReducer>,
    episodes: Episodes,
    status: SessionStatus,
    writer: Writer,
    metrics: Arc<Metrics>,
    reader: Arc<dyn StoreReader>,
    /// Stored answers for exact retries.
    answers: AnswerCache,
    /// Attach receipts issued so far.
    receipts: ReceiptIssuer,
    /// The controller identity every attach must present, once known.
    pinned_controller: Option<Value>,
    /// Running digest of the persisted transcript.
    transcript: TranscriptHash,
    /// Keys the attach receipt's digests, so no seat can test guesses of
    /// hidden state against them (SECURITY.md).
    digest_key: DigestKey,
    /// Derives the lease token an attach answer hands out, so the stored
    /// answer holds none (host_key.rs).
    host_key: HostKey,
    streams: Streams,
    leases: LeaseBook,
    /// The lease book as last persisted (lease slides are written lazily).
    persisted_book: LeaseBook,
    lease_bounds: LeaseBounds,
    /// The one wall clock: the host clock (adjustable under `--test-clock`).
    clock: Arc<HostClock>,
    ticks: TickSchedule,
    turn: TurnClock,
    /// The turn clock as last persisted.
    persisted_turn: Option<String>,
    /// Transitions between two checkpoints (0: never).
    checkpoint_every: u64,
    /// False once the game said its state cannot be checkpointed.
    checkpoints_supported: bool,
    /// The identities this actor compacted away (`below_floor.rs`).
    below_floor: Arc<BelowFloor>,
    /// The open tick-bounded window (its cursor) and how many scheduled
    /// ticks it has waited (`timers.rs`).
    window_wait: (u64, u64),
    /// The owner and epoch every write of this actor is fenced with.
    fence: Fence,
    /// Set once a write failed or was fenced (`actor/persist.rs`): the actor
    /// answers the request at hand and stops.
    stopped: Option<persist::Stopped>,
    /// Shared with the [`ActorHandle`]s: set once the actor stopped so.
    stopped_flag: Arc<std::sync::atomic::AtomicBool>,
}

impl SessionActor {
    pub(crate) fn spawn(init: ActorInit) -> ActorHandle {
        let ActorInit {
            config,
            game,
            kernel,
            status,
            answers,
            writer,
            metrics,
            reader,
            leases,
            clock,
            lease_bounds,
            digest_key,
            host_key,
            pinned_controller,
            turn_clock,
            episodes,
            checkpoint_every,
            restored_from,
            fence,
        } = init;
        let receipts = ReceiptIssuer::resume(&answers);
        // Act answers in memory are bounded by the kernel's receipt
        // retention (per seat): an older exact retry is answered from the
        // store, as the kernel no longer holds its receipt either.
        let retention = kernel.limits().receipt_retention.saturating_mul(config.seats.len() as u64);
        let act_capacity = (retention as usize).clamp(1, ACT_ANSWERS_IN_MEMORY);
        let answers = AnswerCache::from_stored(answers, act_capacity);
        // The policy's controller, else the one the first attach pinned
        // (stored answers keep only a fingerprint of their request, so the
        // pin is read from the session's state, never from them).
        let pinned_controller = config.policy.controller().cloned().or(pinned_controller);
        let seats = Arc::new(config.seats.clone());
        let created_at_ms = config.created_at_ms;
        let tick_period_ms = match config.cadence {
            Cadence::Ticks(rate) => Some(rate.milliseconds_per_tick),
            Cadence::Turns => None,
        };
        let mut turn = TurnClock::new(config.turn_ms());
        if let Some(text) = &turn_clock {
            turn.restore(text, episodes.revision_at_start(&kernel));
        }
        let stopped_flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Restored from a checkpoint: its floor hides identities never seen here.
        let below_floor = if restored_from.is_some() { BelowFloor::unknown() } else { BelowFloor::empty() };
        let mut actor = SessionActor {
            id: config.session_id.clone(),
            transcript: match &restored_from {
                Some(from) => TranscriptHash::resume(from.transcript_digest, from.events as usize, &kernel),
                None => TranscriptHash::of_levels(&episodes.finished, &kernel),
            },
            digest_key,
            host_key,
            streams: Streams::new(&config.seats),
            turn,
            persisted_turn: turn_clock,
            ticks: TickSchedule::new(tick_period_ms),
            config,
            game,
            kernel,
            episodes,
            status,
            writer,
            metrics: Arc::clone(&metrics),
            reader,
            answers,
            receipts,
            pinned_controller,
            persisted_book: leases.clone(),
            leases,
            lease_bounds,
            clock,
            checkpoint_every,
            checkpoints_supported: true,
            below_floor: Arc::new(below_floor),
            window_wait: (0, 0),
            fence,
            stopped: None,
            stopped_flag: Arc::clone(&stopped_flag),
        };
        actor.arm_timers();
        let (tx, rx) = mpsc::channel(1024);
        let (priority, priority_rx) = mpsc::channel(16);
        metrics.live_sessions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tokio::spawn(actor.run(rx, priority_rx));
        ActorHandle { tx, priority, seats, created_at_ms, stopped: stopped_flag }
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
            self.persist_turn_clock().await;
            let deadline = self.next_deadline();
            let sleep = deadline.map(|at| Duration::from_millis((at - self.clock.now_ms()).max(0) as u64));
            tokio::select! {
                biased;
                command = priority.recv(), if priority_open => match command {
                    Some(command) => self.handle(command, &mut rx).await,
                    None => priority_open = false,
                },
                command = rx.recv() => match command {
                    Some(command) => self.handle(command, &mut rx).await,
                    None => break,
                },
                _ = sleep_opt(sleep), if sleep.is_some() => self.on_timer().await,
            }
            if let Some(error) = self.stopped_error() {
                // A write failed or was fenced: this actor answered that
                // request and stops; the host forgets it
                // (`ActorHandle::is_stopped`) and loads the session again for
                // the next request. Commands already queued get the same
                // answer (`unavailable` or `fenced`), which clients retry.
                self.stopped_flag.store(true, std::sync::atomic::Ordering::Release);
                rx.close();
                priority.close();
                while let Ok(command) = priority.try_recv().or_else(|_| rx.try_recv()) {
                    mailbox::refuse(command, error.clone());
                }
                break;
            }
        }
        self.metrics.live_sessions.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl SessionActor {
    /// Persist the turn clock when it moved (once per window, and when it
    /// stops or runs on), so a restart counts the downtime against a turn.
    async fn persist_turn_clock(&mut self) {
        if !self.turn.is_limited() {
            return;
        }
        let now = self.turn.to_json();
        if now == self.persisted_turn {
            return;
        }
        let Some(value) = now.clone() else { return };
        let op = WriteOp::SessionState { session_id: self.id.clone(), key: SessionStateKey::TurnClock, value };
        // A failure is logged by the funnel; the next loop turn tries again.
        if self.persist(vec![op]).await.is_ok() {
            self.persisted_turn = now;
        }
    }
}

async fn sleep_opt(duration: Option<Duration>) {
    match duration {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}
