//! [`EpisodeHost`]: what a benchmark episode needs from a host (create a
//! session, attach or adopt a seat, read the transcript, reissue a seat
//! token), in the contract so hosts implement it without linking the runner
//! (gaos-host in process, gaos-client over HTTP). The runner's
//! `HostedEpisodeFactory` drives it; the handles it returns are the host's
//! ordinary ones.

use std::collections::BTreeMap;

use gaos_json::Value;

use crate::error::SessionError;
use crate::handle::{BoxFuture, SessionHandle};
use crate::policy::SessionPolicy;
use crate::requests::AttachRequest;
use crate::signing::SeatSigningKey;

/// A session the operator created: the creator seat's handle and every seat's token.
pub struct CreatedSession {
    /// The session.
    pub session_id: String,
    /// The creator (scored) seat's handle.
    pub handle: Box<dyn SessionHandle>,
    /// Bearer token of every seat.
    pub seat_tokens: BTreeMap<String, String>,
}

/// The `token` of a host's seat-token reissue answer.
pub fn reissued_token(answer: &Value) -> Result<String, SessionError> {
    answer
        .get("token")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| SessionError::Protocol("the reissued credential has no token".into()))
}

/// What a benchmark episode factory (gaos-runner's `HostedEpisodeFactory`)
/// needs from a host. Every handle it returns
/// is the host's ordinary RFC-018 handle.
pub trait EpisodeHost: Send + Sync {
    /// `createSessionHandle(request, policy)` as the operator; with
    /// `signing`, the creator seat's handle signs every move with that key
    /// (RFC-010: the request names its public key in `seatKeys`).
    fn create<'a>(
        &'a self,
        request: &'a Value,
        policy: &'a SessionPolicy,
        signing: Option<SeatSigningKey>,
    ) -> BoxFuture<'a, Result<CreatedSession, SessionError>>;

    /// `attachSessionHandle` for the seat of `seat_token`; with `signing`,
    /// the handle signs every move with that key.
    fn attach<'a>(
        &'a self,
        session_id: &'a str,
        seat_token: &'a str,
        request: &'a AttachRequest,
        policy: &'a SessionPolicy,
        signing: Option<SeatSigningKey>,
    ) -> BoxFuture<'a, Result<Box<dyn SessionHandle>, SessionError>>;

    /// `createSessionHandleFromExisting` at the seat's current head (observe
    /// as the seat, adopt the answer): for a session that is already
    /// finalized, which refuses attach.
    fn adopt<'a>(
        &'a self,
        session_id: &'a str,
        seat: &'a str,
        seat_token: &'a str,
        policy: &'a SessionPolicy,
    ) -> BoxFuture<'a, Result<Box<dyn SessionHandle>, SessionError>>;

    /// The session's transcript (operator; JSONL: header, then events).
    fn transcript<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<String, SessionError>>;

    /// Revoke the seat's tokens and issue a new one (operator).
    fn reissue_seat_token<'a>(
        &'a self,
        session_id: &'a str,
        seat: &'a str,
    ) -> BoxFuture<'a, Result<String, SessionError>>;

    /// Whether to ask for a fixed session id per episode
    /// (gaos-runner's `episode_session_id`): only a host private to this run should, so
    /// reruns pack byte-identical bundles without colliding with others.
    fn names_sessions(&self) -> bool;
}
