//! The host service: sessions by id (one actor each, loaded lazily and
//! rehydrated from the store), credentials, and the operations behind every
//! route. The HTTP layer and in-process callers use the same methods.

use std::collections::HashMap;
use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::{Map, Value, hex_encode};
use gaos_kernel::SessionKernel;
use tokio::sync::OnceCell;

use crate::actor::{
    ActorHandle, ActorInit, Command, ResetMark, SessionActor, SessionSummary, Subscription, rehydrate_run,
};
use crate::answers::Answer;
use crate::auth::{Caller, Credentials, new_token, token_hash};
use crate::clock::HostClock;
use crate::config::{LeaseBounds, SessionConfig, parse_create};
use crate::envelope::{EXT_CREDENTIALS, EXT_LEASE, EXT_POLICY};
use crate::error::HostError;
use crate::host_key::HostKey;
use crate::lease::{LeaseBook, LeaseOp, Presented};
use crate::manifests::{ManifestRegistry, bound_manifest};
use crate::metrics::Metrics;
use crate::storage::writer::Writer;
use crate::storage::{
    CredentialRecord, CredentialRole, SessionRecord, SessionStateKey, SessionStatus, StoreError, StoreReader,
    StoreWriter, WriteBatch, WriteOp,
};
use crate::wire;

mod create_request;
mod creator_claim;
mod digest_keys;
mod receipt_chain;
mod rehydrate;
pub mod retention;
mod revocation;
mod startup;
use create_request::CreateRequest;
use creator_claim::creator_claim;
use digest_keys::digest_key_marker;
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
        let clock = Arc::new(if options.test_clock { HostClock::adjustable() } else { HostClock::system() });
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

    /// Resolve a bearer token to a caller.
    pub fn caller(&self, token: Option<&str>) -> Result<Caller, HostError> {
        self.inner.credentials.resolve(token)
    }

    /// The actor of session `id`, rehydrating it from the store on first use.
    /// An id that is not a live session costs nothing that stays: a
    /// failed load leaves no entry in the session map, and a revoked
    /// session is answered from a small map without reading the store.
    pub(crate) async fn session(&self, id: &str) -> Result<ActorHandle, HostError> {
        let existing = self.sessions_read().get(id).cloned();
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
        self.revoke_if_unloadable(id, loaded).await
    }

    fn revoked_reason(&self, id: &str) -> Option<String> {
        self.inner.revoked.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(id).cloned()
    }

    async fn load(&self, id: &str) -> Result<ActorHandle, HostError> {
        let reader = Arc::clone(&self.inner.reader);
        let owned = id.to_owned();
        let metrics = Arc::clone(&self.inner.metrics);
        // The record and state first: a revoked session's events are never read.
        let (record, state) = blocking(move || {
            let Some(record) = reader.load_session(&owned)? else { return Ok(None) };
            let state = reader.load_session_state(&owned)?;
            Ok(Some((record, state)))
        })
        .await?
        .ok_or_else(|| HostError::unknown_session(id))?;
        metrics.add_store_loads(1, 0);
        let leases = match state.iter().find(|(k, _)| *k == SessionStateKey::Leases) {
            Some((_, text)) => LeaseBook::from_json(text)
                .map_err(|e| HostError::internal(format!("stored lease state of {id} is unreadable: {e}")))?,
            None => LeaseBook::default(),
        };
        if record.status == SessionStatus::Revoked {
            let reason = leases.revoked.clone().unwrap_or_else(|| "revoked".into());
            self.inner
                .revoked
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(id.to_owned(), reason.clone());
            return Err(HostError::revoked(&reason));
        }
        let reader = Arc::clone(&self.inner.reader);
        let owned = id.to_owned();
        let (log, answers) =
            blocking(move || Ok((rehydrate::read_log(reader.as_ref(), &owned)?, reader.load_answers(&owned)?))).await?;
        metrics.add_store_loads(0, log.events.len() as u64);
        let digest_key = self.stored_digest_key(id, &state).await?;
        let pinned_controller = match state.iter().find(|(k, _)| *k == SessionStateKey::Controller) {
            Some((_, text)) => Some(
                gaos_json::parse(text)
                    .map_err(|e| HostError::internal(format!("the stored controller pin of {id} is not JSON: {e}")))?,
            ),
            None => None,
        };
        let config_value = gaos_json::parse(&record.config)
            .map_err(|e| HostError::internal(format!("stored config of {id} is not JSON: {e}")))?;
        let config = SessionConfig::from_value(&config_value)
            .map_err(|e| HostError::internal(format!("stored config of {id} is incomplete: {e}")))?;
        let game = self
            .inner
            .options
            .registry
            .get(&config.game)
            .map(|game| gaos_kernel::isolated(&game))
            .ok_or_else(|| HostError::internal(format!("session {id} uses unknown game {}", config.game)))?;
        crate::games::check_module(&self.inner.options.registry, id, &config.game, config.module_sha256.as_deref())?;
        let options = Arc::new(config.kernel_options(&game).map_err(HostError::internal)?);
        // Replaying the log is CPU work: off the async workers, so a long
        // load never delays other requests (`/healthz` included).
        let owned = id.to_owned();
        let reader = Arc::clone(&self.inner.reader);
        let (kernel, restored_from) =
            tokio::task::spawn_blocking(move || rehydrate::rebuild(&owned, options, log, reader))
                .await
                .map_err(|e| HostError::internal(format!("rehydrating {id} failed: {e}")))??;
        // A multi-level run walks on through every level it reached.
        let reset = match state.iter().find(|(k, _)| *k == SessionStateKey::RunReset) {
            Some((_, text)) => Some(ResetMark::parse(text).map_err(|e| HostError::internal(format!("{id}: {e}")))?),
            None => None,
        };
        let (kernel, episodes) = rehydrate_run(&config, &game, &self.inner.reader, kernel, reset).await?;
        tracing::info!(session = %id, cursor = kernel.cursor(), "session rehydrated");
        Ok(SessionActor::spawn(ActorInit {
            config,
            game,
            kernel,
            status: record.status,
            answers,
            writer: self.inner.writer.clone(),
            metrics: Arc::clone(&self.inner.metrics),
            reader: Arc::clone(&self.inner.reader),
            leases,
            clock: Arc::clone(&self.inner.clock),
            lease_bounds: self.inner.options.lease_bounds,
            digest_key,
            host_key: self.inner.options.host_key.clone(),
            pinned_controller,
            turn_clock: state.iter().find(|(k, _)| *k == SessionStateKey::TurnClock).map(|(_, v)| v.clone()),
            episodes,
            checkpoint_every: self.inner.options.checkpoint_every,
            restored_from,
        }))
    }

    fn require_operator(caller: &Caller) -> Result<(), HostError> {
        match caller {
            Caller::Operator => Ok(()),
            _ => Err(HostError::forbidden("this route needs the operator token")),
        }
    }

    fn require_seat<'a>(caller: &'a Caller, id: &str) -> Result<&'a str, HostError> {
        match caller {
            Caller::Seat { session_id, seat } if session_id == id => Ok(seat),
            Caller::Seat { .. } | Caller::Spectator { .. } if !caller.may_read(id) => {
                Err(HostError::forbidden("this token belongs to another session"))
            }
            Caller::Spectator { .. } => Err(HostError::forbidden("the spectator token can only read the public view")),
            Caller::Operator => Err(HostError::forbidden("the operator does not act for a seat; use the seat's token")),
            Caller::Seat { .. } => Err(HostError::forbidden("this token belongs to another session")),
        }
    }

    fn require_reader(caller: &Caller, id: &str) -> Result<(), HostError> {
        if caller.may_read(id) { Ok(()) } else { Err(HostError::forbidden("this token belongs to another session")) }
    }

    /// `POST /v1/sessions`.
    pub async fn create(&self, caller: &Caller, body: Value) -> Result<Answer, HostError> {
        Self::require_operator(caller)?;
        // With a requestId, creates run one at a time, so a retry racing its
        // original cannot make a second session (create_request.rs).
        let request = CreateRequest::read(&body)?;
        let _serial = match &request {
            Some(_) => Some(self.inner.creates.lock().await),
            None => None,
        };
        if let Some(request) = &request
            && let Some(answer) = self.replay_create(request).await?
        {
            return Ok(answer);
        }
        let game_id = body
            .get("game")
            .and_then(Value::as_str)
            .ok_or_else(|| HostError::invalid_request("create needs \"game\": the id of a game this host serves"))?;
        let game = self.inner.options.registry.get(game_id).ok_or_else(|| {
            let known: Vec<String> = self.inner.options.registry.list().iter().map(|g| g.game_ref().id).collect();
            HostError::bad_request(
                "unknown_game",
                format!("unknown game {game_id:?}; this host serves {}", known.join(", ")),
            )
        })?;
        let game = gaos_kernel::isolated(&game); // the session's own (a module's realm)
        let session_id = match body.get("sessionId") {
            None => format!("s-{}", hex_encode(&rand::random::<[u8; 8]>())),
            Some(Value::String(id)) if gaos_kernel::protocol::is_valid_participant_id(id) => {
                self.require_new_session_id(id).await?;
                id.clone()
            }
            Some(_) => {
                return Err(HostError::invalid_request("sessionId must match ^[A-Za-z0-9_.:@-]{1,128}$"));
            }
        };
        let now = self.inner.clock.now_ms();
        let bounds = self.inner.options.lease_bounds;
        let mut config = parse_create(&body, &game, session_id.clone(), rand::random::<u32>(), now, &bounds)?;
        config.module_sha256 = crate::games::module_sha256(&self.inner.options.registry, game_id);
        retention::check_policy(&config.policy, self.inner.options.retention.as_ref())?;
        config.manifest = bound_manifest(&config, body.get("manifest"), &self.inner.options, &game)?;
        let options = Arc::new(config.kernel_options(&game).map_err(HostError::invalid_request)?);
        let kernel = SessionKernel::from_shared(options)
            .map_err(|e| HostError::invalid_request(format!("the game refused this session: {e}")))?;
        let mut batch = WriteBatch::new();
        batch.push(WriteOp::CreateSession(SessionRecord {
            id: session_id.clone(),
            game_id: config.game.clone(),
            created_at_ms: config.created_at_ms,
            status: SessionStatus::Active,
            config: gaos_json::canonical_json(&config.to_value()),
            owner: self.inner.options.node_id.clone(),
            epoch: 1,
        }));
        let host_key = &self.inner.options.host_key;
        let (leases, lease_ext) = creator_claim(&body, &config, host_key, bounds.default_ms, now)?;
        batch.push(WriteOp::SessionState {
            session_id: session_id.clone(),
            key: SessionStateKey::Leases,
            value: leases.to_json(),
        });
        // The receipt digests' key, drawn here and stored with the session so
        // receipts stay stable across restarts; it never leaves the host.
        let digest_key = host_key.digest_key(&session_id);
        batch.push(digest_key_marker(&session_id));
        let mut seat_tokens = std::collections::BTreeMap::new();
        let mut records = Vec::new();
        for seat in &config.seats {
            let token = host_key.create_token("gaos_seat_", &session_id, seat);
            records.push(CredentialRecord {
                token_hash: token_hash(&token),
                session_id: session_id.clone(),
                role: CredentialRole::Seat,
                seat: Some(seat.clone()),
                issued_at_ms: config.created_at_ms,
            });
            seat_tokens.insert(seat.clone(), token);
        }
        let spectator = host_key.create_token("gaos_spec_", &session_id, "");
        records.push(CredentialRecord {
            token_hash: token_hash(&spectator),
            session_id: session_id.clone(),
            role: CredentialRole::Spectator,
            seat: None,
            issued_at_ms: config.created_at_ms,
        });
        for record in &records {
            batch.push(WriteOp::Credential(record.clone()));
        }
        let mut ext = Map::new();
        ext.insert(EXT_CREDENTIALS.into(), wire::value(&wire::Credentials { seats: seat_tokens, spectator }));
        ext.insert(EXT_POLICY.into(), gaos_session::PolicyExtension::of(&config.policy()).to_value());
        if let Some(lease_ext) = &lease_ext {
            ext.insert(EXT_LEASE.into(), wire::value(lease_ext));
        }
        if let Some(request) = &request {
            batch.push(request.request_row(&session_id, &ext));
        }
        self.inner.writer.write(batch).await.map_err(store_error)?;
        for record in records {
            self.inner.credentials.insert(record);
        }
        let handle = SessionActor::spawn(ActorInit {
            config,
            game,
            kernel,
            status: SessionStatus::Active,
            answers: Vec::new(),
            writer: self.inner.writer.clone(),
            metrics: Arc::clone(&self.inner.metrics),
            reader: Arc::clone(&self.inner.reader),
            leases,
            clock: Arc::clone(&self.inner.clock),
            lease_bounds: bounds,
            digest_key,
            host_key: self.inner.options.host_key.clone(),
            pinned_controller: None,
            turn_clock: None,
            episodes: crate::actor::Episodes::default(),
            checkpoint_every: self.inner.options.checkpoint_every,
            restored_from: None,
        });
        {
            let slot: Slot = Arc::new(OnceCell::new());
            let _ = slot.set(handle.clone());
            let mut sessions = self.sessions_write();
            sessions.insert(session_id.clone(), slot);
            self.inner.metrics.set_session_slots(sessions.len());
        }
        tracing::info!(session = %session_id, game = %game_id, "session created");
        let answer = handle.ask(|reply| Command::CreatorEnvelope { extensions: ext, reply }).await?;
        if let Some(request) = &request {
            self.store_create_answer(request, &session_id, &answer).await?;
        }
        Ok(answer)
    }

    /// \[P\] An operator may name the session it creates (`sessionId`, e.g.
    /// benchmark episodes, whose replays must not depend on a random id);
    /// an id already in use is refused with 409 `session_exists`.
    async fn require_new_session_id(&self, id: &str) -> Result<(), HostError> {
        let taken = self.sessions_read().get(id).is_some_and(|slot| slot.initialized()) || {
            let reader = Arc::clone(&self.inner.reader);
            let owned = id.to_owned();
            blocking(move || reader.load_session(&owned)).await?.is_some()
        };
        if taken {
            return Err(HostError::conflict("session_exists", format!("a session with id {id:?} already exists")));
        }
        Ok(())
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
    pub async fn act(&self, caller: &Caller, id: &str, presented: Presented, body: Value) -> Result<Answer, HostError> {
        let seat = Self::require_seat(caller, id)?.to_owned();
        // Commands are stored verbatim (intent, event, answer): bound them
        // before anything is queued.
        let limit = self.inner.options.max_command_bytes;
        if let Some(command) = body.get("command")
            && gaos_json::canonical_json(command).len() > limit
        {
            return Err(HostError::new(
                axum::http::StatusCode::PAYLOAD_TOO_LARGE,
                "command_too_large",
                format!("a command may be at most {limit} bytes of canonical JSON (this host's --max-command-bytes)"),
            ));
        }
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Act { seat, presented, body, reply }).await
    }

    /// `POST /v1/sessions/{id}/attach`.
    pub async fn attach(
        &self,
        caller: &Caller,
        id: &str,
        presented: Presented,
        body: Value,
    ) -> Result<Answer, HostError> {
        let seat = Self::require_seat(caller, id)?.to_owned();
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Attach { seat, presented, body, reply }).await
    }

    /// `POST /reset`: a seat starts the next level of a run that advances on
    /// reset (`actor/reset.rs`).
    pub async fn reset(
        &self,
        caller: &Caller,
        id: &str,
        presented: Presented,
        body: Value,
    ) -> Result<Answer, HostError> {
        let seat = Self::require_seat(caller, id)?.to_owned();
        let handle = self.session(id).await?;
        handle.ask(|reply| Command::Reset { seat, presented, body, reply }).await
    }

    /// Lease routes (`/lease/renew`, `/lease/heartbeat`, `/pause`, `/resume`,
    /// `/stop`). Seats drive their own claim; the operator may pause any seat
    /// (`operator_seat`).
    pub async fn lease(
        &self,
        caller: &Caller,
        id: &str,
        presented: Presented,
        op: LeaseOp,
        operator_seat: Option<String>,
    ) -> Result<Answer, HostError> {
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
            return Err(HostError::not_found("unknown_seat", format!("session {id} has no seat {seat:?}")));
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
    pub async fn emergency_stop(&self, caller: &Caller, id: &str, reason: String) -> Result<Answer, HostError> {
        Self::require_operator(caller)?;
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
        let now = self.inner.clock.advance(ms).map_err(|e| HostError::not_found("not_found", e))?;
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
    pub async fn finalize(&self, caller: &Caller, id: &str, body: Value) -> Result<Answer, HostError> {
        match caller {
            Caller::Operator => {}
            Caller::Seat { session_id, .. } if session_id == id => {}
            Caller::Spectator { session_id } if session_id == id => {
                return Err(HostError::forbidden("the spectator token cannot finalize"));
            }
            _ => return Err(HostError::forbidden("this token belongs to another session")),
        }
        let handle = self.session(id).await?;
        let answer = handle.ask(|reply| Command::Finalize { body, reply }).await?;
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
            return Err(HostError::not_found("unknown_seat", format!("session {id} has no seat {seat:?}")));
        }
        let token = new_token("gaos_seat_");
        let record = CredentialRecord {
            token_hash: token_hash(&token),
            session_id: id.to_owned(),
            role: CredentialRole::Seat,
            seat: Some(seat.to_owned()),
            issued_at_ms: self.inner.clock.now_ms(),
        };
        let batch = WriteBatch {
            ops: vec![
                WriteOp::RevokeSeatCredentials { session_id: id.to_owned(), seat: seat.to_owned() },
                WriteOp::Credential(record.clone()),
            ],
        };
        self.inner.writer.write(batch).await.map_err(store_error)?;
        self.inner.credentials.revoke_seat(id, seat);
        self.inner.credentials.insert(record);
        Ok(wire::value(&wire::ReissuedToken { session_id: id, seat, token }))
    }

    /// `GET /v1/sessions` (operator).
    pub async fn list(&self, caller: &Caller, status: Option<SessionStatus>) -> Result<Value, HostError> {
        Self::require_operator(caller)?;
        let reader = Arc::clone(&self.inner.reader);
        let records = blocking(move || reader.list_sessions(status)).await?;
        let live: Vec<(String, ActorHandle)> = {
            let sessions = self.sessions_read();
            sessions.iter().filter_map(|(id, slot)| slot.get().map(|h| (id.clone(), h.clone()))).collect()
        };
        let mut summaries: HashMap<String, SessionSummary> = HashMap::new();
        for (id, handle) in live {
            let (reply, wait) = tokio::sync::oneshot::channel();
            if handle.tx.send(Command::Summary { reply }).await.is_ok()
                && let Ok(summary) = wait.await
            {
                summaries.insert(id, summary);
            }
        }
        let sessions = records
            .into_iter()
            .map(|record| {
                let live = summaries.get(&record.id);
                wire::SessionRow {
                    status: live.map(|s| s.status).unwrap_or(record.status).as_str(),
                    cursor: live.map(|s| s.cursor),
                    tick: live.map(|s| s.tick),
                    seats: live.map(|s| s.seats.clone()),
                    seat_states: live.map(|s| s.seat_states.clone()),
                    paused: live.map(|s| s.paused),
                    id: record.id,
                    game: record.game_id,
                    created_at: record.created_at_ms,
                }
            })
            .collect();
        Ok(wire::value(&wire::SessionList { sessions }))
    }
}
