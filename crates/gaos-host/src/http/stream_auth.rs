//! A stream is authorized for as long as it is open, not only when it
//! opens: rotating a seat's token (the answer to a leaked token) ends every
//! stream the old token opened, so it stops delivering the seat's private
//! deltas at once. A revoked session ends its streams in the actor
//! (`Streams::close_all`).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tokio::sync::watch;

use crate::auth::{Caller, bearer};
use crate::error::HostError;
use crate::host::Host;

/// The caller of a stream request and the watch that ends its stream.
pub(crate) struct StreamCaller {
    pub(crate) caller: Caller,
    pub(crate) watch: CredentialWatch,
}

/// Resolves once the token a stream was opened with no longer names the
/// same caller.
pub(crate) struct CredentialWatch {
    host: Host,
    token: String,
    caller: Caller,
    revocations: watch::Receiver<u64>,
}

impl CredentialWatch {
    pub(crate) async fn revoked(&mut self) {
        loop {
            if self.revocations.changed().await.is_err() {
                // The host is gone; the stream ends with it.
                return;
            }
            if self.host.caller(Some(&self.token)).ok().as_ref() != Some(&self.caller) {
                return;
            }
        }
    }
}

impl FromRequestParts<Host> for StreamCaller {
    type Rejection = HostError;

    async fn from_request_parts(parts: &mut Parts, host: &Host) -> Result<Self, HostError> {
        // Watch first, then resolve: a rotation between the two is seen.
        let mut revocations = host.credential_revocations();
        revocations.mark_unchanged();
        let token = bearer(&parts.headers);
        let caller = host.caller(token)?;
        let token = token.unwrap_or_default().to_owned();
        Ok(StreamCaller {
            caller: caller.clone(),
            watch: CredentialWatch { host: host.clone(), token, caller, revocations },
        })
    }
}
