//! [`SeatSession`]: one seat's session as the tools see it — the runner's
//! [`SessionHandle`] plus the lease operations of `spec/lease.md` — and
//! [`Attachment`], a seat session attached once and kept.
//!
//! The tools ([`crate::tools`]) are written once over this trait, so every
//! transport (stdio, the host's `/mcp` mount) behaves the same.
//! [`crate::remote::RemoteSeat`] implements it over HTTP.

use std::sync::Arc;

use gaos_json::Value;
use gaos_session::{BoxFuture, Observation, SessionError, SessionHandle};

/// One seat of one session, attached and holding the seat's controller
/// claim.
///
/// Dispatches that drive the seat (act through [`SeatSession::handle`],
/// [`SeatSession::resume`]) renew the lease and, on `lease_expired`, renew
/// and retry once (lease spec rule 8). Reads never renew.
pub trait SeatSession: Send + Sync {
    /// The RFC-018 handle: `act`, `finalize`, the cursor and the lifecycle state.
    fn handle(&self) -> &dyn SessionHandle;

    /// The seat's current observation. Unlike [`SessionHandle::observe`]
    /// it still answers after this seat finalized the session (the final
    /// view stays readable).
    fn observe(&self) -> BoxFuture<'_, Result<Observation, SessionError>>;

    /// `GET /lease` as the holder: `{seat, state, epoch?, expiresAt?,
    /// durationMs?, holderId?, pauseReasons, revokedReason?}`.
    fn lease_info(&self) -> BoxFuture<'_, Result<Value, SessionError>>;

    /// A deliberate safety pause (free: allowed with a lapsed or superseded
    /// claim). Answers the lease description.
    fn pause(&self, reason: String) -> BoxFuture<'_, Result<Value, SessionError>>;

    /// Clear a safety pause (driving: needs the live claim; a lapsed claim
    /// is renewed and the resume retried once). Answers the lease description.
    fn resume(&self) -> BoxFuture<'_, Result<Value, SessionError>>;

    /// Give the seat's claim up without stopping the session (`POST
    /// /lease/release`), so the next controller takes the seat at once.
    /// Answers the lease description.
    fn release(&self) -> BoxFuture<'_, Result<Value, SessionError>>;

    /// The session's finalized result as the host stored it (`GET /result`),
    /// whoever finalized.
    fn result(&self) -> BoxFuture<'_, Result<gaos_session::SessionResult, SessionError>>;

    /// This server's record of the seat's decisions (`transcript`).
    fn log(&self) -> &crate::seat_log::SeatLog;

    /// The session's `gaos.replay` JSONL (once the game is over).
    fn replay(&self) -> BoxFuture<'_, Result<String, SessionError>>;
}

/// How to attach a seat: called at most once at a time, until it succeeds.
pub type Connect = Box<dyn Fn() -> BoxFuture<'static, Result<Arc<dyn SeatSession>, SessionError>> + Send + Sync>;

/// A seat session attached once and then kept, so recovery after a lapse
/// renews the same claim instead of starting over. A failed attach (for
/// example `writer_conflict` while another controller's claim is live) is
/// tried again on the next use.
pub struct Attachment {
    connect: Connect,
    slot: tokio::sync::Mutex<Option<Arc<dyn SeatSession>>>,
}

impl std::fmt::Debug for Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let attached = self.slot.try_lock().map(|slot| slot.is_some()).ok();
        f.debug_struct("Attachment").field("attached", &attached).finish_non_exhaustive()
    }
}

impl Attachment {
    /// An attachment that calls `connect` on first use.
    pub fn new(connect: Connect) -> Self {
        Attachment { connect, slot: tokio::sync::Mutex::new(None) }
    }

    /// An attachment of an already attached seat.
    pub fn attached(seat: Arc<dyn SeatSession>) -> Self {
        let connect: Connect =
            Box::new(|| Box::pin(async { Err(SessionError::InvalidArgument("the seat was attached already".into())) }));
        Attachment { connect, slot: tokio::sync::Mutex::new(Some(seat)) }
    }

    /// The attached seat, attaching it first if needed. Concurrent callers
    /// wait for one attach.
    pub async fn seat(&self) -> Result<Arc<dyn SeatSession>, SessionError> {
        let mut slot = self.slot.lock().await;
        if let Some(seat) = slot.as_ref() {
            return Ok(Arc::clone(seat));
        }
        let seat = (self.connect)().await?;
        *slot = Some(Arc::clone(&seat));
        Ok(seat)
    }

    /// Release the attached seat's claim (the session goes on, and the
    /// seat is free for its next controller at once) and close its handle.
    /// A release the host refuses (the session is over, the claim was
    /// taken over) leaves nothing to give up.
    pub async fn close(&self) {
        if let Some(seat) = self.slot.lock().await.take() {
            match seat.release().await {
                Ok(_) => tracing::info!(seat = %seat.handle().seat(), "the seat's claim was released"),
                Err(e) => tracing::debug!(error = %e, "the seat's claim was not released"),
            }
            seat.handle().close();
        }
    }
}
