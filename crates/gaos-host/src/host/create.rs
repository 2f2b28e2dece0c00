//! `POST /v1/sessions`: a new session, its credentials and its first
//! durable write; a `requestId` makes a retry answer the same bytes.

use gaos_session::ErrorCode;
use std::sync::Arc;

use gaos_json::{Map, Value, hex_encode};
use gaos_kernel::SessionKernel;
use tokio::sync::OnceCell;

use super::create_request::CreateRequest;
use super::creator_claim::creator_claim;
use super::digest_keys::digest_key_marker;
use super::{Host, Slot, blocking, retention, store_error};
use crate::actor::{ActorInit, Command, SessionActor, fence_of};
use crate::answers::Answer;
use crate::auth::{Caller, token_hash};
use crate::config::parse_create;
use crate::envelope::{EXT_CREDENTIALS, EXT_LEASE, EXT_POLICY};
use crate::error::HostError;
use crate::manifests::bound_manifest;
use crate::storage::{
    CredentialRecord, CredentialRole, SessionRecord, SessionStateKey, SessionStatus, WriteBatch, WriteOp,
};
use crate::wire;

impl Host {
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
            HostError::new(
                ErrorCode::UnknownGame,
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
        retention::check_policy(config.policy.value(), self.inner.options.retention.as_ref())?;
        config.manifest = bound_manifest(
            &config,
            body.get("manifest"),
            &self.inner.options.manifests,
            &self.inner.options.registry,
            &game,
        )?;
        let options = Arc::new(config.kernel_options(&game));
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
        ext.insert(EXT_POLICY.into(), gaos_session::PolicyExtension::of(&config.policy).to_value());
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
            fence: fence_of(&session_id, &self.inner.options.node_id, 1),
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
    pub(super) async fn require_new_session_id(&self, id: &str) -> Result<(), HostError> {
        let taken = self.sessions_read().get(id).is_some_and(|slot| slot.initialized()) || {
            let reader = Arc::clone(&self.inner.reader);
            let owned = id.to_owned();
            blocking(move || reader.load_session(&owned)).await?.is_some()
        };
        if taken {
            return Err(HostError::new(ErrorCode::SessionExists, format!("a session with id {id:?} already exists")));
        }
        Ok(())
    }
}
