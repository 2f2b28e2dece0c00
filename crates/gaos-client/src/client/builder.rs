//! [`SessionClientBuilder`]: a [`SessionClient`]'s settings, checked once
//! when it is built.

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use gaos_kernel::protocol::is_valid_participant_id;
use reqwest::header::HeaderMap;

use super::{
    DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_PARTICIPANT_ID, DEFAULT_RETRIES, DEFAULT_RETRY_BACKOFF, DEFAULT_TIMEOUT, Inner,
    SessionClient, State, bearer, error_chain, http_client_builder,
};
use crate::error::ClientError;
use crate::wire;

/// Builder of a [`SessionClient`].
#[derive(Debug)]
pub struct SessionClientBuilder {
    base_url: String,
    token: Option<String>,
    participant_id: String,
    timeout: Duration,
    max_response_bytes: usize,
    retries: u32,
    retry_backoff: Duration,
    http: Option<reqwest::Client>,
    headers: Vec<(String, String)>,
}

impl SessionClientBuilder {
    /// The defaults, for the host at `base_url`.
    pub(super) fn new(base_url: String) -> Self {
        SessionClientBuilder {
            base_url,
            token: None,
            participant_id: DEFAULT_PARTICIPANT_ID.into(),
            timeout: DEFAULT_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            retries: DEFAULT_RETRIES,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            http: None,
            headers: Vec::new(),
        }
    }

    /// The bearer token sent as `Authorization: Bearer <token>`.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The seat this client observes as by default and `act`s for
    /// (default `"player"`).
    pub fn participant_id(mut self, seat: impl Into<String>) -> Self {
        self.participant_id = seat.into();
        self
    }

    /// Timeout of one request, connecting through reading the whole body
    /// (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Largest answer body read; a larger one fails with
    /// [`ClientError::ResponseTooLarge`] (default 1 MiB).
    pub fn max_response_bytes(mut self, limit: usize) -> Self {
        self.max_response_bytes = limit;
        self
    }

    /// How many times an idempotent request is resent, byte for byte, after
    /// a transport failure or timeout (default 3; 0 disables).
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// Pause before the first resend; doubles after each (default 50 ms).
    pub fn retry_backoff(mut self, backoff: Duration) -> Self {
        self.retry_backoff = backoff;
        self
    }

    /// Use this `reqwest` client (to share one pool between many
    /// `SessionClient`s). Build it from [`http_client_builder`]: a client that
    /// follows redirects breaks the never-redirect rule.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// An extra header sent with every request (see [`SessionClient::set_header`]).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Check the settings and build the client.
    pub fn build(self) -> Result<SessionClient, ClientError> {
        let base_url = wire::normalize_base_url(&self.base_url).map_err(ClientError::InvalidArgument)?;
        if self.timeout.is_zero() {
            return Err(ClientError::InvalidArgument("the timeout must be greater than zero".into()));
        }
        if self.max_response_bytes == 0 {
            return Err(ClientError::InvalidArgument("max_response_bytes must be greater than zero".into()));
        }
        if !is_valid_participant_id(&self.participant_id) {
            return Err(ClientError::InvalidArgument(format!(
                "participant id {:?} must match ^[A-Za-z0-9_.:@-]{{1,128}}$",
                self.participant_id
            )));
        }
        let authorization = self.token.as_deref().map(bearer).transpose()?;
        let http = match self.http {
            Some(http) => http,
            None => http_client_builder().build().map_err(|e| {
                ClientError::InvalidArgument(format!("cannot build the HTTP client: {}", error_chain(&e)))
            })?,
        };
        let client = SessionClient {
            inner: Arc::new(Inner {
                http,
                base_url,
                authorization: RwLock::new(authorization),
                participant_id: self.participant_id,
                timeout: self.timeout,
                max_response_bytes: self.max_response_bytes,
                retries: self.retries,
                retry_backoff: self.retry_backoff,
                extra_headers: RwLock::new(HeaderMap::new()),
                state: Mutex::new(State::default()),
            }),
        };
        for (name, value) in &self.headers {
            client.set_header(name, value)?;
        }
        Ok(client)
    }
}
