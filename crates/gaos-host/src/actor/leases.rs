//! Controller leases of the session's seats (spec/lease.md): the pure
//! [`LeaseBook`](crate::lease::LeaseBook) decides, this room persists its
//! events (on the `gaos.lease` extension lane while the game runs) and the
//! book, and applies the effects (pause, revoke).

use gaos_session::ErrorCode;
use std::time::Duration;

use gaos_json::{Value, canonical_json};

use super::SessionActor;
use crate::answers::Answer;
use crate::config::requested_lease_ms;
use crate::error::HostError;
use crate::lease::{Granted, LeaseError, LeaseEvent, LeaseOp, Presented};
use crate::storage::{SessionStateKey, SessionStatus, WriteOp};
use crate::wire;

impl SessionActor {
    fn default_lease_ms(&self) -> u64 {
        self.config.lease_ms.unwrap_or(self.lease_bounds.default_ms)
    }

    /// The duration of a requested claim (`{"durationMs": N}`, or `{}` for
    /// the default), within bounds.
    pub(super) fn lease_duration(&self, request: Option<&Value>) -> Result<u64, HostError> {
        match requested_lease_ms(request, &self.lease_bounds).map_err(HostError::invalid_request)? {
            Some(ms) => Ok(ms),
            None => Ok(self.default_lease_ms()),
        }
    }

    /// Whether a lapse stops the session's clock (ticks cadence).
    pub(super) fn pauses_session(&self) -> bool {
        self.ticks.is_ticks()
    }

    pub(super) fn lease_op(&mut self) -> WriteOp {
        self.persisted_book = self.leases.clone();
        WriteOp::SessionState {
            session_id: self.id.clone(),
            key: SessionStateKey::Leases,
            value: self.leases.to_json(),
        }
    }

    /// The lease book write, only when it changed beyond a lease slide of
    /// less than a tenth of the lease (acts slide the lease every time; a
    /// restart may then see a claim expire up to that much early, which only
    /// pauses the seat until its holder renews).
    pub(super) fn lease_op_if_due(&mut self) -> Option<WriteOp> {
        self.leases.drifted_from(&self.persisted_book).then(|| self.lease_op())
    }

    /// Persist lease events: each as an `extension` event on lane
    /// `gaos.lease` (while the game runs; the kernel takes no extensions once
    /// it ended) together with the lease book, then publish them.
    pub(super) async fn record_lease_events(&mut self, events: Vec<LeaseEvent>) -> Result<(), HostError> {
        let mut wrote_book = false;
        for event in events.into_iter().filter(|e| e.kind().is_recorded()) {
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
            self.persist(vec![book]).await?;
        }
        Ok(())
    }

    /// Record every lapse that is due (eager timer and lazy checks).
    pub(super) async fn expire_leases(&mut self) {
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

    /// Authorize a dispatch on `seat`, recording its lease events.
    pub(super) async fn dispatch_lease(
        &mut self,
        seat: &str,
        presented: &Presented,
        op: LeaseOp,
    ) -> Result<Granted, HostError> {
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
                return Err(HostError::from(LeaseError::Paused { seat, reasons, events: Vec::new() }));
            }
            Err(e) => return Err(e.into()),
        };
        if !granted.events.is_empty() {
            self.record_lease_events(granted.events.clone()).await?;
            self.arm_timers();
        }
        Ok(granted)
    }

    /// Lease routes: renew, heartbeat, pause, resume, stop.
    pub(super) async fn lease_call(
        &mut self,
        seat: &str,
        presented: &Presented,
        op: LeaseOp,
        operator: bool,
    ) -> Result<Answer, HostError> {
        if let Some(reason) = &self.leases.revoked {
            return Err(HostError::revoked(reason));
        }
        if self.status == SessionStatus::Finalized {
            return Err(HostError::new(ErrorCode::SessionFinalized, "the session was finalized"));
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
    pub(super) async fn revoke(&mut self, reason: &str, by: &str) -> Result<Answer, HostError> {
        let Some(event) = self.leases.revoke(reason, by) else {
            return Err(HostError::revoked(self.leases.revoked.as_deref().unwrap_or(reason)));
        };
        self.status = SessionStatus::Revoked;
        self.stop_timers();
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
            self.persist(ops).await
        };
        match tokio::time::timeout(Duration::from_secs(5), persist).await {
            Ok(Ok(())) => {}
            // The funnel stopped the actor: the session reloads from the
            // store, and the caller learns the stop is not durable yet.
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                tracing::error!(session = %self.id, "persisting the revocation timed out; the session reloads");
                self.stopped = Some(super::persist::Stopped::Unsure);
                return Err(HostError::unavailable("the revocation could not be made durable in time; retry it"));
            }
        }
        self.publish_lease(&record);
        self.streams.close_all();
        Ok(Answer::json(200, &wire::value(&wire::Revoked::new(&self.id, reason))))
    }

    /// Game code failed while resolving: the session is revoked.
    pub(super) async fn game_failed(&mut self, e: gaos_kernel::KernelError) -> HostError {
        tracing::error!(session = %self.id, error = %e, "game code failed; revoking the session");
        match self.revoke("reducer_failed", "host").await {
            // The revocation is not durable yet: the actor stopped and the
            // session reloads; the caller retries and meets the game again.
            Err(not_stored) if not_stored.code != gaos_session::ErrorCode::Revoked => not_stored,
            _ => HostError::revoked(&format!("reducer_failed: {e}")),
        }
    }

    /// `GET /lease`: the seat's claim as its caller sees it.
    pub(super) async fn lease_info(&mut self, seat: &str, presented: &Presented) -> Result<Answer, HostError> {
        if let Some(reason) = &self.leases.revoked {
            return Err(HostError::revoked(reason));
        }
        self.expire_leases().await;
        Ok(Answer::json(200, &self.leases.describe(seat, presented, self.clock.now_ms())))
    }
}
