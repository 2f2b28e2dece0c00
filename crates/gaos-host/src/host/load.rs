//! Loading a session: its record and state, its kernel rebuilt from the
//! checkpoint and tail, its run walked to the live level, its actor started.

use gaos_session::ErrorCode;
use std::sync::Arc;

use super::{Host, blocking, rehydrate};
use crate::actor::{ActorHandle, ActorInit, ResetMark, SessionActor, fence_of, rehydrate_run};
use crate::config::SessionConfig;
use crate::error::HostError;
use crate::lease::LeaseBook;
use crate::storage::{SessionStateKey, SessionStatus};

impl Host {
    pub(super) async fn load(&self, id: &str) -> Result<ActorHandle, HostError> {
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
        if self.cluster().is_some() && record.owner != self.node_id() {
            // The routing layer claims a session before it is served here;
            // a load without the claim would serve another host's session.
            return Err(HostError::new(
                ErrorCode::Fenced,
                format!("session {id} is owned by {} at epoch {}, not by this host", record.owner, record.epoch),
            ));
        }
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
        if self.cluster().is_some() {
            // Another host may have reissued or issued tokens meanwhile.
            let reader = Arc::clone(&self.inner.reader);
            let owned = id.to_owned();
            let records = blocking(move || reader.load_session_credentials(&owned)).await?;
            self.inner.credentials.replace_session(id, records);
        }
        let fence = fence_of(id, &record.owner, record.epoch);
        let digest_key = self.stored_digest_key(&fence, &state).await?;
        let pinned_controller = match state.iter().find(|(k, _)| *k == SessionStateKey::Controller) {
            Some((_, text)) => Some(
                gaos_json::parse(text)
                    .map_err(|e| HostError::internal(format!("the stored controller pin of {id} is not JSON: {e}")))?,
            ),
            None => None,
        };
        let mut config = gaos_json::parse(&record.config)
            .map_err(|e| format!("it is not JSON: {e}"))
            .and_then(|value| SessionConfig::from_value(&value))
            .map_err(|e| {
                HostError::new(ErrorCode::RehydrateFailed, format!("the stored configuration of {id}: {e}"))
            })?;
        if let Some((_, text)) = state.iter().find(|(k, _)| *k == SessionStateKey::SeatKeys) {
            config.registered_keys =
                crate::signing::read_registered_keys(text, &config.seat_keys_at_attach).map_err(|e| {
                    HostError::new(ErrorCode::RehydrateFailed, format!("the seat keys registered in {id}: {e}"))
                })?;
        }
        let game = self
            .inner
            .options
            .registry
            .get(&config.game)
            .map(|game| gaos_kernel::isolated(&game))
            .ok_or_else(|| HostError::internal(format!("session {id} uses unknown game {}", config.game)))?;
        crate::games::check_module(&self.inner.options.registry, id, &config.game, config.module_sha256.as_deref())?;
        let options = Arc::new(config.kernel_options(&game));
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
            fence,
        }))
    }
}
