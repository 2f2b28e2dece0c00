//! The restart pass: every session stored as active is rehydrated once after
//! a start, so its clocks (ticks, turn deadlines, lease expiries) run again
//! without a request, and the reconcile report says which claims survived.
//!
//! `gaos serve` runs it in the background after its port is open: a request
//! for a session the pass has not reached yet loads that session itself
//! (the pass then finds it loaded), and a request for a session being
//! loaded waits on the same slot. Finished sessions are never part of it.

use crate::actor::fence_of;
use crate::cluster::Reclaimed;
use gaos_session::ErrorCode;
use std::sync::Arc;

use tokio::sync::watch;

use super::{Host, StartReport, blocking};
use crate::error::HostError;
use crate::lease::LeaseBook;
use crate::storage::{SessionRecord, SessionStateKey, SessionStatus, WriteBatch, WriteOp};

/// Whether the restart pass has ended (the reconcile report and clock moves
/// wait for it).
pub(super) struct StartupPass {
    done: watch::Sender<bool>,
}

impl StartupPass {
    pub(super) fn pending() -> Self {
        StartupPass { done: watch::channel(false).0 }
    }

    fn finish(&self) {
        self.done.send_replace(true);
    }

    /// Wait until the pass has ended.
    pub(super) async fn finished(&self) {
        let mut done = self.done.subscribe();
        // The sender lives as long as the host, so this only ends on `true`.
        let _ = done.wait_for(|done| *done).await;
    }
}

/// Ends the pass however `rehydrate_active` returns (a store error too), so
/// nothing waits for it forever.
struct FinishOnDrop<'a>(&'a StartupPass);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish()
    }
}

impl Host {
    /// End the restart pass without running it (a host of a cluster runs
    /// its own: `serve.rs`).
    pub(crate) fn finish_startup_pass(&self) {
        self.inner.startup.finish();
    }

    /// Rehydrate every session stored as active, one at a time (so a
    /// background pass takes at most one core from the requests), and
    /// record the restart report served at `GET /v1/admin/reconcile`.
    pub async fn rehydrate_active(&self) -> Result<StartReport, HostError> {
        let _finish = FinishOnDrop(&self.inner.startup);
        let active = {
            let reader = Arc::clone(&self.inner.reader);
            blocking(move || reader.list_sessions(Some(SessionStatus::Active))).await?
        };
        self.rehydrate_records(active, StartReport::default()).await
    }

    /// The restart pass of a host of a cluster, over the sessions it has
    /// just claimed back: the same loads, revocations and report as
    /// [`Host::rehydrate_active`], for the active ones among them.
    pub async fn rehydrate_claimed(&self, reclaimed: Reclaimed) -> Result<StartReport, HostError> {
        let _finish = FinishOnDrop(&self.inner.startup);
        let mut active = Vec::with_capacity(reclaimed.claimed.len());
        for id in &reclaimed.claimed {
            let reader = Arc::clone(&self.inner.reader);
            let id = id.clone();
            // Read after the claim: the record names this host at its new epoch.
            if let Some(record) = blocking(move || reader.load_session(&id)).await?
                && record.status == SessionStatus::Active
            {
                active.push(record);
            }
        }
        // Sessions left unclaimed stay as they are, like a session whose
        // module changed on one host: serving the original module again
        // resumes them.
        let report = StartReport { failed: reclaimed.refused, ..StartReport::default() };
        self.rehydrate_records(active, report).await
    }

    /// Load `active` one by one into `report` (which may already name
    /// sessions the pass left alone), then publish it.
    async fn rehydrate_records(
        &self,
        active: Vec<SessionRecord>,
        mut report: StartReport,
    ) -> Result<StartReport, HostError> {
        let now = self.inner.clock.now_ms();
        for record in active {
            // Reconcile from the stored lease book before the actor lapses
            // the expired claims.
            let book = {
                let reader = Arc::clone(&self.inner.reader);
                let id = record.id.clone();
                blocking(move || reader.load_session_state(&id)).await?
            }
            .into_iter()
            .find(|(k, _)| *k == SessionStateKey::Leases)
            .and_then(|(_, v)| LeaseBook::from_json(&v).ok())
            .unwrap_or_default();
            match self.session_as_loaded(&record.id).await {
                Ok(_) => {
                    for (seat, lease) in &book.seats {
                        if let Some(claim) = &lease.current {
                            let row = (record.id.clone(), seat.clone(), claim.epoch);
                            if now >= claim.expires_at { report.expired.push(row) } else { report.retained.push(row) }
                        }
                    }
                    report.loaded.push(record.id)
                }
                // A session whose game module changed stays as it is: serving
                // the original module again resumes it.
                Err(e) if e.code == ErrorCode::ModuleChanged => {
                    tracing::error!(session = %record.id, error = %e.message, "session not rehydrated");
                    self.sessions_write().remove(&record.id);
                    report.failed.push((record.id, e.message))
                }
                Err(e) => {
                    let mut revoked = book;
                    revoked.revoke("rehydrate_failed", "host");
                    let ops = vec![
                        WriteOp::SessionState {
                            session_id: record.id.clone(),
                            key: SessionStateKey::Leases,
                            value: revoked.to_json(),
                        },
                        WriteOp::SetStatus { session_id: record.id.clone(), status: SessionStatus::Revoked },
                    ];
                    let batch = WriteBatch::fenced(ops, fence_of(&record.id, &record.owner, record.epoch));
                    if let Err(error) = self.inner.writer.write(batch).await {
                        // Still revoked in memory: the next start tries again.
                        tracing::error!(session = %record.id, %error, "the revocation could not be stored");
                    }
                    self.sessions_write().remove(&record.id);
                    report.failed.push((record.id, e.message))
                }
            }
            // Requests go first between two loads.
            tokio::task::yield_now().await;
        }
        if let Ok(mut slot) = self.inner.reconcile.lock() {
            *slot = report.to_value();
        }
        Ok(report)
    }
}
