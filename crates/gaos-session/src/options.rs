//! Per-call options of [`crate::SessionHandle::act_with`] and
//! [`crate::SessionHandle::observe_with`] (issue 18 item 4): an explicit
//! submission id, a timeout and a cancellation token. The defaults are
//! what `act`/`observe` do, so callers that need none of them are unchanged.

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::SessionError;

/// Options of one `act_with`.
#[derive(Debug, Clone, Default)]
pub struct ActOptions {
    /// The submission id to send instead of the default
    /// `"<seat>:<tickId>:<n>"`. Naming an id this handle already sent
    /// without seeing an answer resends that identical submission (the
    /// host answers a retry of an accepted submission with its first
    /// answer, so a lost answer never becomes a second command).
    pub submission_id: Option<String>,
    /// Give up waiting for the host after this long
    /// ([`SessionError::Timeout`]; the submission may still have landed:
    /// retry with the same id).
    pub timeout: Option<Duration>,
    /// Stop waiting when this token fires ([`SessionError::Cancelled`]).
    pub cancel: Option<CancellationToken>,
}

impl ActOptions {
    /// The defaults: default submission id, no timeout, no cancellation.
    pub fn new() -> Self {
        ActOptions::default()
    }

    /// Send this submission id.
    pub fn submission_id(mut self, id: impl Into<String>) -> Self {
        self.submission_id = Some(id.into());
        self
    }

    /// Time out after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Cancel with `cancel`.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    pub(crate) fn bounds(&self) -> CallBounds<'_> {
        CallBounds { timeout: self.timeout, cancel: self.cancel.as_ref() }
    }
}

/// Options of one `observe_with`.
#[derive(Debug, Clone, Default)]
pub struct ObserveOptions {
    /// Give up waiting for the host after this long ([`SessionError::Timeout`]).
    pub timeout: Option<Duration>,
    /// Stop waiting when this token fires ([`SessionError::Cancelled`]).
    pub cancel: Option<CancellationToken>,
}

impl ObserveOptions {
    /// The defaults: no timeout, no cancellation.
    pub fn new() -> Self {
        ObserveOptions::default()
    }

    /// Time out after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Cancel with `cancel`.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    pub(crate) fn bounds(&self) -> CallBounds<'_> {
        CallBounds { timeout: self.timeout, cancel: self.cancel.as_ref() }
    }
}

/// The timeout and cancellation of one call.
pub(crate) struct CallBounds<'a> {
    timeout: Option<Duration>,
    cancel: Option<&'a CancellationToken>,
}

impl CallBounds<'_> {
    /// Run `call` within the bounds. `operation` names the call in errors.
    pub(crate) async fn run<T>(
        &self,
        operation: &'static str,
        call: impl Future<Output = Result<T, SessionError>>,
    ) -> Result<T, SessionError> {
        if self.cancel.is_some_and(CancellationToken::is_cancelled) {
            return Err(SessionError::Cancelled { operation });
        }
        let timed = async {
            match self.timeout {
                Some(limit) => tokio::time::timeout(limit, call)
                    .await
                    .unwrap_or(Err(SessionError::Timeout { operation, after: limit })),
                None => call.await,
            }
        };
        match self.cancel {
            Some(cancel) => tokio::select! {
                result = timed => result,
                () = cancel.cancelled() => Err(SessionError::Cancelled { operation }),
            },
            None => timed.await,
        }
    }
}
