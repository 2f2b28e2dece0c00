//! Benchmark episodes on a running host: [`RemoteEpisodeHost`] implements
//! the session contract's [`EpisodeHost`] with [`RemoteSessionHandle`]s, so
//! `HostedEpisodeFactory<RemoteEpisodeHost>` runs every episode as an
//! ordinary session of that host, over the `gaos.ticks` routes, with the
//! operator token creating sessions and reading transcripts.
//!
//! Session ids are left to the host (it may serve other runs), so two runs
//! of one manifest produce equal scores but replays that name different
//! sessions.

use gaos_json::{Map, Value};
use gaos_session::{
    AttachRequest, BoxFuture, CreatedSession, EpisodeHost, SessionError, SessionHandle, SessionPolicy,
    existing_head_from_observation, reissued_token,
};
use reqwest::Method;

use crate::client::{SessionClient, http_client_builder};
use crate::handle::{RemoteSessionHandle, session_error};
use crate::wire::encode_uri_component;

/// Longest a transcript download may take.
const TRANSCRIPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// [`EpisodeHost`] over HTTP: `base_url` and the operator token.
#[derive(Debug, Clone)]
pub struct RemoteEpisodeHost {
    operator: SessionClient,
    token: String,
    http: reqwest::Client,
}

impl RemoteEpisodeHost {
    /// Episodes on the host at `base_url`, created with the operator `token`.
    pub fn new(base_url: &str, token: &str) -> Result<Self, SessionError> {
        let http = http_client_builder().build().map_err(|e| SessionError::Transport(e.to_string()))?;
        let operator =
            SessionClient::builder(base_url).token(token).http_client(http.clone()).build().map_err(session_error)?;
        Ok(RemoteEpisodeHost { operator, token: token.to_owned(), http })
    }

    fn seat_client(&self, seat: Option<&str>, token: &str) -> Result<SessionClient, SessionError> {
        let mut builder = SessionClient::builder(self.operator.base_url()).token(token).http_client(self.http.clone());
        if let Some(seat) = seat {
            builder = builder.participant_id(seat);
        }
        builder.build().map_err(session_error)
    }
}

impl EpisodeHost for RemoteEpisodeHost {
    fn create<'a>(
        &'a self,
        request: &'a Value,
        policy: &'a SessionPolicy,
    ) -> BoxFuture<'a, Result<CreatedSession, SessionError>> {
        Box::pin(async move {
            let created = RemoteSessionHandle::create(&self.operator, request, policy).await?;
            Ok(CreatedSession {
                session_id: created.session_id,
                handle: Box::new(created.handle),
                seat_tokens: created.credentials.seats,
            })
        })
    }

    fn attach<'a>(
        &'a self,
        session_id: &'a str,
        seat_token: &'a str,
        request: &'a AttachRequest,
        policy: &'a SessionPolicy,
    ) -> BoxFuture<'a, Result<Box<dyn SessionHandle>, SessionError>> {
        Box::pin(async move {
            let client = self.seat_client(request.participant_id.as_deref(), seat_token)?;
            let handle = RemoteSessionHandle::attach(client, session_id, request, policy).await?;
            Ok(Box::new(handle) as Box<dyn SessionHandle>)
        })
    }

    fn adopt<'a>(
        &'a self,
        session_id: &'a str,
        seat: &'a str,
        seat_token: &'a str,
        policy: &'a SessionPolicy,
    ) -> BoxFuture<'a, Result<Box<dyn SessionHandle>, SessionError>> {
        Box::pin(async move {
            let client = self.seat_client(Some(seat), seat_token)?;
            let observed = client.observe(session_id).await.map_err(session_error)?;
            let envelope =
                gaos_json::to_value(&observed.envelope).map_err(|e| SessionError::Protocol(e.to_string()))?;
            let existing = existing_head_from_observation(session_id, seat, envelope)?;
            let handle = RemoteSessionHandle::from_existing(client, &existing, policy)?;
            Ok(Box::new(handle) as Box<dyn SessionHandle>)
        })
    }

    /// `GET /v1/sessions/{id}/transcript` with the operator token (JSONL text).
    fn transcript<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<String, SessionError>> {
        Box::pin(async move {
            let url = format!(
                "{}/v1/sessions/{}/transcript",
                self.operator.base_url().trim_end_matches('/'),
                encode_uri_component(session_id)
            );
            let response = self
                .http
                .get(&url)
                .bearer_auth(&self.token)
                .timeout(TRANSCRIPT_TIMEOUT)
                .send()
                .await
                .map_err(|e| SessionError::Transport(format!("GET {url}: {e}")))?;
            let status = response.status();
            let body = response.text().await.map_err(|e| SessionError::Transport(format!("GET {url}: {e}")))?;
            if !status.is_success() {
                let (message, code) =
                    crate::wire::parse_error_body(status.canonical_reason().unwrap_or("error"), body.as_bytes());
                return Err(SessionError::Host { status: status.as_u16(), code, message });
            }
            Ok(body)
        })
    }

    fn reissue_seat_token<'a>(
        &'a self,
        session_id: &'a str,
        seat: &'a str,
    ) -> BoxFuture<'a, Result<String, SessionError>> {
        Box::pin(async move {
            let path =
                format!("/v1/sessions/{}/seats/{}/token", encode_uri_component(session_id), encode_uri_component(seat));
            let answer = self
                .operator
                .request_json(Method::POST, &path, Some(&Value::Object(Map::new())))
                .await
                .map_err(session_error)?;
            reissued_token(&answer.body)
        })
    }

    fn names_sessions(&self) -> bool {
        false
    }
}
