//! The GAOS session contract (RFC-018): what a host, a client, an MCP
//! server and the runner agree on, without any of them.
//!
//! ```text
//! create or attach → observe ↔ act → finalize → close
//! ```
//!
//! - [`SessionHandle`] — the one live-session contract (object-safe, `Send`
//!   futures), and [`LifecycleHandle`], its state machine written once over
//!   a [`SessionTransport`] (`gaos-host`: in process; `gaos-client`: HTTP).
//!   [`forward_session_handle!`] gives a wrapper type the contract.
//! - [`Observation`] (a checked envelope and its readings), [`SessionError`],
//!   [`ErrorCode`] (every code a host answers, with its HTTP status),
//!   [`HandleState`].
//! - [`SessionPolicy`] and [`SessionControllerIdentity`] (lifecycle spec §2),
//!   attach receipts and chain checks ([`receipts`], §3), adopting an
//!   existing head ([`adopt_existing`], §4); the receipts a finalized
//!   replay carries and [`replay_receipts::verify_session_replay`].
//! - The wire shapes: requests ([`AttachRequest`], [`FinalizeRequest`], the
//!   default submission id rule) and answers ([`SessionResult`],
//!   [`SessionAttach`], [`SessionCredentials`], [`LeaseGrant`]), the
//!   extension keys ([`extensions`]) and [`encode_uri_component`].
//! - [`EpisodeHost`]: what a benchmark episode needs from a host.
//!
//! The runner (`gaos-runner`: `run_session`, drivers, benchmarks) builds on
//! this crate; hosts and clients depend on this crate only, so a durable
//! server links no runner, driver or HTTP client.

pub mod adopt;
pub mod answers;
pub mod benchmark;
pub mod episode_host;
pub mod error;
pub mod error_code;
pub mod extensions;
pub mod handle;
pub mod observation;
pub mod options;
pub mod policy;
pub mod receipts;
pub mod replay_receipts;
pub mod requests;
pub mod signing;
pub mod state;
pub mod uri;
pub(crate) mod words;

pub use adopt::{ExistingHead, adopt_existing, existing_head_from_observation};
pub use answers::{
    LeaseGrant, SessionArtifact, SessionAttach, SessionCredentials, SessionResult, parse_binding, parse_credentials,
    parse_session_attach,
};
pub use episode_host::{CreatedSession, EpisodeHost, reissued_token};
pub use error::SessionError;
pub use error_code::ErrorCode;
pub use extensions::{EXT_ATTACH, EXT_CREDENTIALS, EXT_EPISODE, EXT_FINALIZATION, EXT_LEASE, EXT_POLICY};
pub use gaos_kernel::{CommandSubmission, SessionBinding};
pub use handle::{
    BoxFuture, LifecycleHandle, SessionHandle, SessionTransport, create_session_handle_from_existing, wait_backoff,
};
pub use observation::{
    EpisodeIdentity, FinalizationStatus, Observation, announces_terminal, finalization, parse_tick_envelope,
};
pub use options::{ActOptions, ObserveOptions};
pub use policy::{
    ControllerKind, EvaluationKind, EvaluationPolicy, EvidenceKind, EvidencePolicy, OfficialEvaluation,
    PolicyExtension, SessionControllerIdentity, SessionPolicy, validate_controller,
};
pub use receipts::{AttachReceipt, ReceiptBody, ReceiptLinks};
pub use requests::{AttachRequest, FinalizeRequest, LeaseRequest, SubmissionCounter, default_submission_id};
pub use state::HandleState;
pub use uri::encode_uri_component;

#[doc(hidden)]
pub use gaos_json as __json;
pub use tokio_util::sync::CancellationToken;
