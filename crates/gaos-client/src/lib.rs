//! The async HTTP client of a `gaos.ticks` v1 host: create, observe, act,
//! attach and finalize, used exactly as the reference TS and Python clients
//! use them (`shared/spec/lifecycle.md` §1–§4).
//!
//! ```no_run
//! # async fn play() -> Result<(), gaos_client::ClientError> {
//! use gaos_client::{AttachRequest, FinalizeRequest, SessionClient};
//! use gaos_json::Value;
//!
//! // The operator creates a session; the host hands out one token per seat.
//! let operator = SessionClient::new("http://127.0.0.1:8899", "gaos_op_...")?;
//! let request = gaos_json::parse(r#"{"game":"conformance/counter","level":{"rounds":1}}"#).expect("JSON");
//! let created = operator.create_session(&request).await?;
//! let tokens = created.credentials.expect("gaos-host hands out seat tokens");
//!
//! // Each seat plays with its own token.
//! let seat_a = SessionClient::builder("http://127.0.0.1:8899")
//!     .token(tokens.seat("a").expect("seat a"))
//!     .participant_id("a")
//!     .build()?;
//! let attached = seat_a.attach(&created.session_id, &AttachRequest::new("attach-1")).await?;
//! let answer = seat_a.act(&created.session_id, gaos_json::parse(r#"{"n":1}"#).expect("JSON")).await?;
//! assert!(answer.is_pending()); // seat b has not played yet
//! # let _ = (attached, Value::Null, FinalizeRequest::default());
//! # Ok(())
//! # }
//! ```
//!
//! What the client guarantees:
//! - **Wire rules.** The base URL loses its trailing `/`; `{id}` is encoded
//!   like `encodeURIComponent`; `Authorization: Bearer`, `accept:
//!   application/json`, and `content-type: application/json` when there is
//!   a body. Redirects are never followed. Every 2xx must be a JSON body
//!   (empty or 204 is [`ClientError::ProtocolMismatch`]), read incrementally
//!   up to a cap (1 MiB by default, [`ClientError::ResponseTooLarge`] beyond).
//! - **Checked answers.** Envelopes, bindings, attach receipts and results
//!   are checked against the spec before they are returned ([`wire`]).
//! - **Cursor memory.** Each answer's cursor becomes the session's binding;
//!   submissions default to the id `"<seat>:<tickId>:<n>"`.
//! - **Exact retries.** Idempotent requests (observe, act, attach, finalize)
//!   are resent byte for byte after a transport failure or timeout, never
//!   after an HTTP error answer.
//! - **Typed errors.** 422 is [`ClientError::IllegalActionRejected`], any
//!   other non-2xx [`ClientError::Api`] with the host's `code`.

pub mod bench;
mod client;
pub mod credentials;
mod error;
pub mod handle;
pub mod wire;

pub use client::{
    CreateAnswer, Cursor, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_PARTICIPANT_ID, DEFAULT_RETRIES, DEFAULT_RETRY_BACKOFF,
    DEFAULT_TIMEOUT, JsonAnswer, SessionClient, SessionClientBuilder, SubmitOptions, TickResult, http_client_builder,
};
pub use credentials::CredentialSource;
pub use error::ClientError;
pub use wire::{AttachRequest, FinalizeRequest, SessionArtifact, SessionAttach, SessionCredentials, SessionResult};

/// The HTTP stack, re-exported so callers share one `reqwest` version (to
/// build a shared client with [`http_client_builder`], or name a `Method`).
pub use reqwest;
