//! The host service: sessions by id (one actor each, loaded lazily and
//! rehydrated from the store), credentials, and the operations behind every
//! route. The HTTP layer and in-process callers use the same methods.

use gaos_session::ErrorCode;
use std::collections::HashMap;
use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::Value;
use tokio::sync::OnceCell;

use crate::actor::{ActCall, ActorHandle, Command, Subscription};
use crate::answers::Answer;
use crate::auth::{Caller, Credentials, new_token, token_hash};
use crate::clock::HostClock;
use crate::config::LeaseBounds;
use crate::error::HostError;
use crate::host_key::HostKey;
use crate::lease::Presented;
use crate::manifests::ManifestRegistry;
use crate::metrics::Metrics;
use crate::requests::{
    ActRequest, AttachRequest, EmergencyStopRequest, FinalizeRequest, LeaseRequest, ResetRequest, SeatSignatureRequest,
};
use crate::storage::writer::Writer;
use crate::storage::{CredentialRecord, CredentialRole, StoreError, StoreReader, StoreWriter, WriteOp};
use crate::wire;

mod callers;
mod create;
mod create_config;
mod create_request;
mod creator_claim;
mod digest_keys;
mod listing;
mod load;
mod membership;
mod receipt_chain;
mod rehydrate;
pub mod retention;
mod revocation;
mod startup;
pub use retention::Retention;

/// Host-wide settings.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// The games this host serves (`main` builds it; the host never adds
    /// games of its own).
    pub registry: GameRegistry,
    /// This node's identity (session owner column).
    pub node_id: String,
    /// `--lease-min-ms` / `--lease-max-ms`.
    pub lease_bounds: LeaseBounds,
    /// `--test-clock`: an operator route may move the host clock forward.
    pub test_clock: bool,
    /// `--max-command-bytes`: the largest command (canonical JSON) a seat
    /// may submit; larger ones are `413 command_too_large`.
    pub max_command_bytes: usize,
    /// The secret the stored answers' tokens and the digest keys derive
    /// from (`host_key.rs`); `gaos serve` reads it from `DIR/host-key`.
    pub host_key: HostKey,
    /// `--retention-ms` (`retention.rs`; `None`: sessions are kept for ever).
    pub retention: Option<Retention>,
    /// `--manifest FILE`: benchmark manifests official evaluations may be
    /// bound to without carrying them in the create request (`manifests.rs`).
    pub manifests: ManifestRegistry,
    /// Transitions between two stored kernel checkpoints of a session (0:
    /// never): bounds the live kernel's memory and the events a restart
    /// replays (actor/checkpoints.rs).
    pub checkpoint_every: u64,
    /// The cluster this host is a member of (`--store postgres://…`): then
    /// it serves only the sessions it claimed, finds tokens other hosts
    /// issued in the store, and its clock runs from `clock_anchor_ms`.
    pub cluster: Option<Arc<crate::cluster::Cluster>>,
    /// Wall-clock milliseconds to start the host clock at instead of the
    /// system clock (a cluster's database clock, so every host's deadlines
    /// agree even when a machine's clock is skewed).
    pub clock_anchor_ms: Option<i64>,
}

impl HostOptions {
    /// Default settings for a host serving the games of `registry`.
    pub fn new(registry: GameRegistry) -> Self {
        HostOptions {
            registry,
            node_id: "local".into(),
            lease_bounds: LeaseBounds::default(),
            test_clock: false,
            max_command_bytes: DEFAULT_MAX_COMMAND_BYTES,
            host_key: HostKey::default(),
            retention: None,
            manifests: ManifestRegistry::new(),
            checkpoint_every: DEFAULT_CHECKPOINT_EVERY,
            cluster: None,
            clock_anchor_ms: None,
        }
    }
}

pub use crate::actor::DEFAULT_CHECKPOINT_EVERY;

/// The default of `--max-command-bytes` (16 KiB).
pub const DEFAULT_MAX_COMMAND_BYTES: usize = 16 * 1024;

type Slot = Arc<OnceCell<ActorHandle>>;

struct HostInner {
    writer: Writer,
    reader: Arc<dyn StoreReader>,
    metrics: Arc<Metrics>,
    credentials: Credentials,
    sessions: std::sync::RwLock<HashMap<String, Slot>>,
    options: HostOptions,
    clock: Arc<HostClock>,
    reconcile: std::sync::Mutex<Value>,
    /// Whether the restart pass (`host/startup.rs`) has ended.
    startup: startup::StartupPass,
    /// Serializes creates that carry a requestId.
    creates: tokio::sync::Mutex<()>,
    /// Revoked sessions met at load, with their reason: answered from here,
    /// without reading the store again.
    revoked: std::sync::RwLock<HashMap<String, String>>,
}

/// What happened to stored sessions at start (restart reconciliation).
#[derive(Debug, Clone, Default)]
pub struct StartReport {
    pub loaded: Vec<String>,
    /// Live claims kept: (session, seat, epoch).
    pub retained: Vec<(String, String, u64)>,
    /// Claims that ran out while the host was down (now lapsed and paused).
    pub expired: Vec<(String, String, u64)>,
    /// Sessions that failed to rehydrate (revoked with `rehydrate_failed`).
    pub failed: Vec<(String, String)>,
}

impl StartReport {
    /// The report as served at `GET /v1/admin/reconcile`.
    pub fn to_value(&self) -> Value {
        let claims = |rows: &[(String, String, u64)]| {
            rows.iter()
                .map(|(session, seat, epoch)| wire::ClaimRow {
                    session_id: session.clone(),
                    seat: seat.clone(),
                    epoch: *epoch,
                })
                .collect()
        };
        wire::value(&wire::ReconcileReport {
            retained: claims(&self.retained),
            expired: claims(&self.expired),
            failed: self
                .failed
                .iter()
                .map(|(session, reason)| wire::FailedRow { session_id: session.clone(), reason: reason.clone() })
                .collect(),
            loaded: self.loaded.len(),
        })
    }
}

/// The durable authoritative host.
#[derive(Clone)]
pub struct Host {
    inner: Arc<HostInner>,
}

fn store_error(e: StoreError) -> HostError {
    HostError::unavailable(e.to_string())
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, HostError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| HostError::internal(format!("storage task failed: {e}")))?
        .map_err(store_error)
}

impl Host {
    /// Open a host over a store: load credentials and rehydrate every active
    /// session (so their clocks run again) before returning. `gaos serve`
    /// opens with [`Host::open_lazy`] instead and rehydrates in the
    /// background once its port is open.
    pub async fn open(
        writer: Box<dyn StoreWriter>,
        reader: Arc<dyn StoreReader>,
        operator_token: &str,
        options: HostOptions,
    ) -> Result<(Host, StartReport), HostError> {
        let host = Host::open_lazy(writer, reader, operator_token, options).await?;
        let report = host.rehydrate_active().await?;
        Ok((host, report))
    }

    /// Open a host over a store, loading only the credentials: every
    /// session is rehydrated on first use, and [`Host::rehydrate_active`]
    /// (the restart pass) runs when the caller chooses. Until that pass
    /// ends, the reconcile report and clock moves wait for it.
    pub async fn open_lazy(
        writer: Box<dyn StoreWriter>,
        reader: Arc<dyn StoreReader>,
        operator_token: &str,
        options: HostOptions,
    ) -> Result<Host, HostError> {
        let metrics = Arc::new(Metrics::default());
        let writer = Writer::spawn(writer, Arc::clone(&metrics));
        let records = {
            let reader = Arc::clone(&reader);
            blocking(move || reader.load_credentials()).await?
        };
        let clock = Arc::new(match options.clock_anchor_ms {
            Some(anchor_ms) => HostClock::anchored_at(anchor_ms, options.test_clock),
            None if options.test_clock => HostClock::adjustable(),
            None => HostClock::system(),
        });
        Ok(Host {
            inner: Arc::new(HostInner {
                writer,
                reader,
                metrics,
                credentials: Credentials::new(operator_token, records),
                sessions: std::sync::RwLock::new(HashMap::new()),
                options,
                clock,
                reconcile: std::sync::Mutex::new(Value::Null),
                startup: startup::StartupPass::pending(),
                creates: tokio::sync::Mutex::new(()),
                revoked: std::sync::RwLock::new(HashMap::new()),
            }),
        })
    }

    /// The host clock.
    pub fn clock(&self) -> &Arc<HostClock> {
        &self.inner.clock
    }

    fn sessions_read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Slot>> {
        self.inner.sessions.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn sessions_write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Slot>> {
        self.inner.sessions.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.inner.metrics
    }

    pub fn registry(&self) -> &GameRegistry {
        &self.inner.options.registry
    }

    /// The actor of session `id`, rehydrating it from the store on first use.
    /// An id that is not a live session costs nothing that stays: a
    /// failed load leaves no entry in the session map, and a revoked
    /// session is answered from a small map without reading the store.
    pub(crate) async fn session(&self, id: &str) -> Result<ActorHandle, HostError> {
        let loaded = self.session_as_loaded(id).await;
        self.revoke_if_unloadable(id, loaded).await
    }

    /// [`Host::session`] without revoking a session that fails to load
    /// (the restart pass revokes those itself and reports why).
    pub(super) async fn session_as_loaded(&self, id: &str) -> Result<ActorHandle, HostError> {
        let existing = self.sessions_read().get(id).cloned();
        // An actor stopped after a failed or fenced write: forget it; the
        // load below asks the store again.
        let existing = match existing {
            Some(slot) if slot.get().is_some_and(ActorHandle::is_stopped) => {
                let mut sessions = self.sessions_write();
                if sessions.get(id).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                    sessions.remove(id);
                }
                self.inner.metrics.set_session_slots(sessions.len());
                None
            }
            other => other,
        };
        let slot = match existing {
            Some(slot) => slot,
            None => {
                if let Some(reason) = self.revoked_reason(id) {
                    return Err(HostError::revoked(&reason));
                }
                let mut sessions = self.sessions_write();
                let slot = Arc::clone(sessions.entry(id.to_owned()).or_default());
                self.inner.metrics.set_session_slots(sessions.len());
                slot
            }
        };
        let loaded = slot.get_or_try_init(|| self.load(id)).await.cloned();
        let retention = self.inner.options.retention.as_ref();
        retention::refuse_expired(retention, id, &loaded, self.inner.clock.now_ms())?;
        if loaded.is_err() {
            let mut sessions = self.sessions_write();
            if sessions.get(id).is_some_and(|s| Arc::ptr_eq(s, &slot) && !s.initialized()) {
                sessions.remove(id);
            }
            self.inner.metrics.set_session_slots(sessions.len());
        }
        loaded
    }

    fn revoked_reason(&self, id: &str) -> Option<String> {
        self.inner.revoked.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(id).cloned()
    }

    /// `GET /v1/sessions/{id}/tick`.
    pub async fn observe(&self, caller: &Caller, id: &str) -> Result<Answer, HostError> {
        Self::require_reader(caller, id)?;
        let seat = match caller {
            Caller::Seat { seat, .. } => Some(seat.clone()),
            Caller::Spectator { .. } => None,
            Caller::Operator => {
                return Err(HostError::forbidden("observe with a seat or spectator token (the operator has no seat)"));
            }
        };
        let handle = self.session(id).await?;
        let mut answer = handle.ask(|reply| Command::Observe { seat, reply }).await?;
        // GET answers are 200 whatever the envelope kind.
        answer.status = 200;
        Ok(answer)
    }

    /// `POST /v1/sessions/{id}/actions`.
    pub async fn act(
        &self,
        caller: &Caller,
        id: &str,
        presented: Presented,
        request: ActRequest,
    ) -> Result<Answer, HostError> {
        let seat = Self::require_seat(caller, id)?.to_owned();
        // Commands are stored verbatim (intent, event, answer): bound them
        // before anything is queued.
        let limit = self.inner.options.max_command_bytes;
        if request.command_bytes().is_some_and(|bytes| bytes > limit) {
            return Err(HostError::new(
                ErrorCode::CommandTooLarge,
                format!("a command may be at most {limit} bytes of canonical JSON (this host's --max-command-bytes)"),
            ));
        }
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Act(ActCall { seat, presented, request, reply })).await
    }

    /// `POST /v1/sessions/{id}/attach`.
    pub async fn attach(
        &self,
        caller: &Caller,
        id: &str,
        presented: Presented,
        request: AttachRequest,
    ) -> Result<Answer, HostError> {
        let seat = Self::require_seat(caller, id)?.to_owned();
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Attach { seat, presented, request, reply }).await
    }

    /// `POST /reset`: a seat starts the next level of a run that advances on
    /// reset (`actor/reset.rs`).
    pub async fn reset(
        &self,
        caller: &Caller,
        id: &str,
        presented: Presented,
        request: ResetRequest,
    ) -> Result<Answer, HostError> {
        let seat = Self::require_seat(caller, id)?.to_owned();
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Reset { seat, presented, request, reply }).await
    }

    /// `POST /seat-signature`: the calling seat's periodic signature over
    /// its chain head (RFC-010), recorded when it covers unsigned moves.
    pub async fn seat_signature(
        &self,
        caller: &Caller,
        id: &str,
        request: SeatSignatureRequest,
    ) -> Result<Answer, HostError> {
        let seat = Self::require_seat(caller, id)?.to_owned();
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::SeatSignature { seat, request, reply }).await
    }

    /// Lease routes (`/lease/renew`, `/lease/heartbeat`, `/lease/release`,
    /// `/pause`, `/resume`, `/stop`). Seats drive their own claim; the
    /// operator may pause any seat (the request's `seat`).
    pub async fn lease(
        &self,
        caller: &Caller,
        id: &str,
        presented: Presented,
        request: LeaseRequest,
    ) -> Result<Answer, HostError> {
        let LeaseRequest { op, seat: operator_seat } = request;
        let (seat, operator) = match caller {
            Caller::Operator => {
                let seat = operator_seat
                    .ok_or_else(|| HostError::invalid_request("the operator must name the seat to pause (\"seat\")"))?;
                (seat, true)
            }
            _ => (Self::require_seat(caller, id)?.to_owned(), false),
        };
        let handle = self.session(id).await?;
        if !handle.seats.iter().any(|s| s == &seat) {
            return Err(HostError::new(ErrorCode::UnknownSeat, format!("session {id} has no seat {seat:?}")));
        }
        handle.ask(|reply| Command::Lease { seat, presented, op, operator, reply }).await
    }

    /// `GET /v1/sessions/{id}/lease`.
    pub async fn lease_info(&self, caller: &Caller, id: &str, presented: Presented) -> Result<Answer, HostError> {
        let seat = Self::require_seat(caller, id)?.to_owned();
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::LeaseInfo { seat, presented, reply }).await
    }

    /// `POST /v1/sessions/{id}/emergency-stop` (operator): revoke at once,
    /// ahead of queued work.
    pub async fn emergency_stop(
        &self,
        caller: &Caller,
        id: &str,
        request: EmergencyStopRequest,
    ) -> Result<Answer, HostError> {
        Self::require_operator(caller)?;
        let reason = request.reason;
        let handle = self.session(id).await?;
        handle.ask_first(|reply| Command::EmergencyStop { reason, reply }).await
    }

    /// `GET /v1/admin/reconcile` (operator): the restart report.
    /// Answered once the restart pass has ended (it runs in the background
    /// under `gaos serve`), so the report is always the whole one.
    pub async fn reconcile_report(&self, caller: &Caller) -> Result<Value, HostError> {
        Self::require_operator(caller)?;
        self.inner.startup.finished().await;
        Ok(self.inner.reconcile.lock().map(|v| v.clone()).unwrap_or(Value::Null))
    }

    /// `POST /v1/admin/clock` (operator, `--test-clock` hosts only).
    pub async fn advance_clock(&self, caller: &Caller, ms: i64) -> Result<Value, HostError> {
        Self::require_operator(caller)?;
        // Sessions the restart pass has not loaded yet would not see the
        // move before it is acknowledged; it moves once they are live.
        self.inner.startup.finished().await;
        let now = self.inner.clock.advance(ms).map_err(|e| HostError::new(ErrorCode::NotFound, e))?;
        let handles: Vec<ActorHandle> = {
            let sessions = self.sessions_read();
            sessions.values().filter_map(|slot| slot.get().cloned()).collect()
        };
        // Every live actor re-checks its deadlines before the move is
        // acknowledged; an actor that stopped meanwhile has nothing to fire.
        let acks = handles.iter().map(|handle| handle.ask(|reply| Command::ClockChanged { reply }));
        for ack in futures_util::future::join_all(acks).await {
            if let Err(error) = ack {
                tracing::debug!(%error, "a session actor stopped before it saw the clock move");
            }
        }
        Ok(wire::value(&wire::ClockMoved { now_ms: now }))
    }

    /// `POST /v1/sessions/{id}/finalize` (any seat of the session, or the operator).
    pub async fn finalize(&self, caller: &Caller, id: &str, request: FinalizeRequest) -> Result<Answer, HostError> {
        match caller {
            Caller::Operator => {}
            Caller::Seat { session_id, .. } if session_id == id => {}
            Caller::Spectator { session_id } if session_id == id => {
                return Err(HostError::forbidden("the spectator token cannot finalize"));
            }
            _ => return Err(HostError::forbidden("this token belongs to another session")),
        }
        let handle = self.session(id).await?;
        let answer = handle.ask(|reply| Command::Finalize { request, reply }).await?;
        // A finalized session leaves memory: its actor stops once in-flight
        // requests are done, and later calls rehydrate it from the store.
        // Long benchmark runs would otherwise keep every episode loaded.
        if answer.status == 200 {
            let mut sessions = self.sessions_write();
            sessions.remove(id);
            self.inner.metrics.set_session_slots(sessions.len());
        }
        Ok(answer)
    }

    /// `GET /v1/sessions/{id}/result`: the finalized result, to any reader
    /// of the session (the replay it names is theirs to read too).
    pub async fn result(&self, caller: &Caller, id: &str) -> Result<Answer, HostError> {
        Self::require_reader(caller, id)?;
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::StoredResult { reply }).await
    }

    /// `GET /v1/sessions/{id}/snapshot`.
    pub async fn snapshot(&self, caller: &Caller, id: &str, after: Option<u64>) -> Result<Answer, HostError> {
        let seat = Self::require_seat(caller, id)?.to_owned();
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Snapshot { seat, after, reply }).await
    }

    /// `GET /v1/sessions/{id}/stream`.
    pub async fn subscribe(&self, caller: &Caller, id: &str, after: Option<u64>) -> Result<Subscription, HostError> {
        Self::require_reader(caller, id)?;
        let seat = match caller {
            Caller::Seat { seat, .. } => Some(seat.clone()),
            Caller::Spectator { .. } => None,
            Caller::Operator => return Err(HostError::forbidden("stream with a seat or spectator token")),
        };
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Subscribe { seat, after, reply }).await
    }

    /// `GET /v1/sessions/{id}/replay`.
    pub async fn replay(&self, caller: &Caller, id: &str) -> Result<String, HostError> {
        Self::require_reader(caller, id)?;
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Replay { reply }).await
    }

    /// `GET /v1/sessions/{id}/transcript` (operator).
    pub async fn transcript(&self, caller: &Caller, id: &str) -> Result<String, HostError> {
        Self::require_operator(caller)?;
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Transcript { reply }).await
    }

    /// `POST /v1/sessions/{id}/seats/{seat}/token` (operator): revoke the
    /// seat's tokens and issue a new one.
    pub async fn reissue_seat_token(&self, caller: &Caller, id: &str, seat: &str) -> Result<Value, HostError> {
        Self::require_operator(caller)?;
        let handle = self.session(id).await?;
        if !handle.seats.iter().any(|s| s == seat) {
            return Err(HostError::new(ErrorCode::UnknownSeat, format!("session {id} has no seat {seat:?}")));
        }
        let token = new_token("gaos_seat_");
        let record = CredentialRecord {
            token_hash: token_hash(&token),
            session_id: id.to_owned(),
            role: CredentialRole::Seat,
            seat: Some(seat.to_owned()),
            issued_at_ms: self.inner.clock.now_ms(),
        };
        // Written by the session's actor: fenced like every write of the
        // session, and ordered with its other writes.
        let ops = vec![
            WriteOp::RevokeSeatCredentials { session_id: id.to_owned(), seat: seat.to_owned() },
            WriteOp::Credential(record.clone()),
        ];
        handle.ask(|reply| Command::Persist { ops, reply }).await?;
        self.inner.credentials.revoke_seat(id, seat);
        self.inner.credentials.insert(record);
        Ok(wire::value(&wire::ReissuedToken { session_id: id, seat, token }))
    }
}
