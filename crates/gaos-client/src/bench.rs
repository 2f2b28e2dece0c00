//! Benchmark episodes on a running host: [`RemoteEpisodeHost`] implements
//! the session contract's [`EpisodeHost`] with [`RemoteSessionHandle`]s, so
//! `HostedEpisodeFactory<RemoteEpisodeHost>` runs every episode as an
//! ordinary session of that host, over the `gaos.ticks` routes, with the
//! operator token creating sessions and reading transcripts.
//!
//! Session ids are left to the host (it may serve other runs), so two runs
//! of one manifest produce equal scores but replays that name different
//! sessions.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use gaos_json::{Map, Value};
use gaos_session::signing::SeatSigningKey;
use gaos_session::{
    AttachRequest, BoxFuture, CreatedSession, EpisodeHost, SessionError, SessionHandle, SessionPolicy, reissued_token,
};
use reqwest::Method;

use crate::client::{SessionClient, http_client_builder};
use crate::handle::{RemoteSessionHandle, session_error};
use crate::wire::encode_uri_component;

/// Longest a transcript download may take.
const TRANSCRIPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// [`EpisodeHost`] over HTTP: the hosts' base URLs and the operator token.
/// With several hosts (of one cluster), episodes are created on each in
/// turn and every seat of an episode talks to the host that created it.
#[derive(Debug, Clone)]
pub struct RemoteEpisodeHost {
    operators: Vec<SessionClient>,
    token: String,
    http: reqwest::Client,
    /// The next host to create an episode on.
    next: Arc<AtomicUsize>,
    /// Which host created which session.
    homes: Arc<Mutex<HashMap<String, usize>>>,
}

impl RemoteEpisodeHost {
    /// Episodes on the host at `base_url`, created with the operator `token`.
    pub fn new(base_url: &str, token: &str) -> Result<Self, SessionError> {
        Self::spread(&[base_url.to_owned()], token)
    }

    /// Episodes spread over the hosts at `base_urls` (a cluster, where any
    /// host answers any session), created with the operator `token`.
    pub fn spread(base_urls: &[String], token: &str) -> Result<Self, SessionError> {
        if base_urls.is_empty() {
            return Err(SessionError::InvalidArgument("name at least one host".into()));
        }
        let http = http_client_builder().build().map_err(|e| SessionError::Transport(e.to_string()))?;
        let operators = base_urls
            .iter()
            .map(|url| SessionClient::builder(url.trim()).token(token).http_client(http.clone()).build())
            .collect::<Result<Vec<_>, _>>()
            .map_err(session_error)?;
        Ok(RemoteEpisodeHost {
            operators,
            token: token.to_owned(),
            http,
            next: Arc::new(AtomicUsize::new(0)),
            homes: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// The operator client of the host that created `session_id` (the
    /// first host for a session this value did not create).
    fn home(&self, session_id: &str) -> &SessionClient {
        let index = self.homes.lock().unwrap_or_else(PoisonError::into_inner).get(session_id).copied().unwrap_or(0);
        &self.operators[index % self.operators.len()]
    }

    fn seat_client(&self, session_id: &str, seat: Option<&str>, token: &str) -> Result<SessionClient, SessionError> {
        let base = self.home(session_id).base_url();
        let mut builder = SessionClient::builder(base).token(token).http_client(self.http.clone());
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
        signing: Option<SeatSigningKey>,
    ) -> BoxFuture<'a, Result<CreatedSession, SessionError>> {
        Box::pin(async move {
            let index = self.next.fetch_add(1, Ordering::Relaxed) % self.operators.len();
            let created = RemoteSessionHandle::create(&self.operators[index], request, policy).await?;
            self.homes.lock().unwrap_or_else(PoisonError::into_inner).insert(created.session_id.clone(), index);
            let handle = created.handle.with_signing_key(signing);
            Ok(CreatedSession {
                session_id: created.session_id,
                handle: Box::new(handle),
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
        signing: Option<SeatSigningKey>,
    ) -> BoxFuture<'a, Result<Box<dyn SessionHandle>, SessionError>> {
        Box::pin(async move {
            let client = self.seat_client(session_id, request.participant_id.as_deref(), seat_token)?;
            let handle = RemoteSessionHandle::attach(client, session_id, request, policy).await?;
            let handle = handle.with_signing_key(signing);
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
            let client = self.seat_client(session_id, Some(seat), seat_token)?;
            let handle = RemoteSessionHandle::adopt(client, session_id, seat, policy).await?;
            Ok(Box::new(handle) as Box<dyn SessionHandle>)
        })
    }

    /// `GET /v1/sessions/{id}/transcript` with the operator token (JSONL text).
    fn transcript<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<String, SessionError>> {
        Box::pin(async move {
            let url = format!(
                "{}/v1/sessions/{}/transcript",
                self.home(session_id).base_url().trim_end_matches('/'),
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
                .home(session_id)
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
