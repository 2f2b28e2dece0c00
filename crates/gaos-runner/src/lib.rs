//! RFC-018 for GAOS: one live-session lifecycle for every kind of play.
//!
//! ```text
//! create or attach → observe ↔ act → finalize → close
//! ```
//!
//! Normal play, Coach-style guided play, autonomous agents, watched and
//! headless benchmarks all use the same three pieces:
//!
//! - [`SessionHandle`] — the one live-session contract (object-safe, `Send`
//!   futures). [`LifecycleHandle`] implements its state machine once over a
//!   [`SessionTransport`]; `gaos-host` provides the in-process transport
//!   (`InProcessSessionHandle`) and `gaos-client` the HTTP one
//!   (`RemoteSessionHandle`). Both answer with the same envelopes
//!   ([`Observation`]), results ([`SessionResult`]) and errors ([`SessionError`]).
//! - [`run_session`] — the one runner: drives one seat with an
//!   [`AgentDriver`] under a [`RunPolicy`] (paced or unpaced presentation,
//!   continuous or fresh-per-episode conversation, automatic or caller
//!   finalization), with callbacks ([`RunEvents`]), a presentation hook
//!   ([`Presenter`]) and a [`CancellationToken`].
//! - Resilience and people ([`reconnect`], [`control`]): a run re-attaches
//!   at the durable head after a lasting transport loss (bounded backoff,
//!   the interrupted submission resent under its own id), and takes
//!   guidance, interrupts and seat takeovers from people as inputs
//!   ([`run_control`]).
//! - [`AgentDriver`] — what decides. Built in ([`drivers`]): `random`,
//!   `first-legal`, `scripted`, `human`, `openai` (any OpenAI-compatible
//!   chat-completions endpoint; cargo feature `openai`, on by default) and
//!   `process` (a program in any language, JSON lines on stdin/stdout).
//!
//! Benchmark orchestration ([`benchmark`]) builds on these: a benchmark
//! episode is a session created (or attached) with a policy by a
//! [`benchmark::SessionFactory`], run with [`run_session`], and finalized.
//! There is no benchmark-only handle or runner. Arenas ([`arena`]) play
//! tournaments between agents the same way, one session per match, and
//! rate the entrants from the replays.
//!
//! # Example
//!
//! A complete run against a tiny in-memory transport (a host would be
//! `gaos_host::handle::InProcessSessionHandle` or
//! `gaos_client::handle::RemoteSessionHandle`):
//!
//! ```
//! use gaos_json::{Value, obj, parse};
//! use gaos_runner::{
//!     BoxFuture, CommandSubmission, FinalizeMode, LifecycleHandle, Observation, RunOptions, RunPolicy,
//!     RunStatus, SessionError, SessionPolicy, SessionTransport, run_session,
//! };
//! use gaos_runner::drivers::FirstLegalDriver;
//! use std::sync::Mutex;
//!
//! /// One seat counts to 2; `{"n": 1}` is the only legal action.
//! struct Counter(Mutex<u64>);
//!
//! impl Counter {
//!     fn envelope(&self) -> Result<Observation, SessionError> {
//!         let n = *self.0.lock().expect("lock");
//!         let done = n >= 2;
//!         let legal: Vec<Value> = if done { vec![] } else { vec![obj! { "n" => 1u32 }.into()] };
//!         let tick = obj! { "count" => n, "legalActions" => legal, "done" => done };
//!         let value = obj! {
//!             "protocol" => "gaos.ticks", "protocolVersion" => "1.0", "kind" => "tick",
//!             "sessionId" => "s-1", "tickId" => format!("s-1:{n}"), "revision" => n, "tick" => tick
//!         };
//!         Observation::from_value(&value.into(), Some("s-1"))
//!     }
//! }
//!
//! impl SessionTransport for Counter {
//!     fn observe<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Observation, SessionError>> {
//!         Box::pin(async move { self.envelope() })
//!     }
//!     fn submit<'a>(&'a self, _: &'a CommandSubmission) -> BoxFuture<'a, Result<Observation, SessionError>> {
//!         Box::pin(async move {
//!             *self.0.lock().expect("lock") += 1;
//!             self.envelope()
//!         })
//!     }
//!     fn finalize<'a>(&'a self, id: &'a str, _: &'a Value) -> BoxFuture<'a, Result<Value, SessionError>> {
//!         Box::pin(async move { Ok(obj! { "sessionId" => id, "status" => "finalized", "outcome" => "won" }.into()) })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(async {
//! let binding = gaos_runner::SessionBinding::new("s-1", 0, "player");
//! let handle = LifecycleHandle::new(Counter(Mutex::new(0)), binding, SessionPolicy::host_default(), None, false)
//!     .expect("a valid head");
//! let outcome = run_session(&handle, &mut FirstLegalDriver::new(), RunOptions::new(RunPolicy::default()))
//!     .await
//!     .expect("the run completes");
//! assert_eq!(outcome.status, RunStatus::Finalized);
//! assert_eq!(outcome.decisions.len(), 2);
//! assert_eq!(outcome.result.expect("finalized").outcome, Value::from("won"));
//! # });
//! ```
//!
//! # Decisions this crate makes where the reference is silent (\[P\])
//!
//! - A seat with nothing to decide (a pending window that does not await
//!   it, or a view whose `participation`/`activeSeat` names other seats)
//!   waits with [`SessionHandle::wait_for_change`] instead of busy-polling
//!   `GET /tick`. An empty `legalActions` list alone does not mean "wait":
//!   some games (commit–reveal) list none, and the driver decides.
//! - An observation equal to the previous one is not reported or presented
//!   again, so waiting never floods callbacks or presenters.
//! - `on_episode_change` also fires for the first episode seen (the driver
//!   is reset only at later transitions).
//! - A handle also turns terminal on `gaos.session.finalization.status ==
//!   "finalized"` (another holder finalized), not only `terminal`.

pub mod arena;
pub mod benchmark;
pub mod clock;
pub mod control;
pub mod driver;
pub mod drivers;
pub mod error;
mod host_seats;
mod journal_lines;
pub mod reconnect;
pub mod run;

// The session contract lives in gaos-session; re-exported so runner users
// keep one import path.
pub use clock::{Clock, ManualClock, MonotonicClock, SteppingClock, Stopwatch};
pub use control::{ControlChange, Controller, RunControl, RunInput, RunInputs, run_control};
pub use driver::{AgentDriver, Decision, DriverContext, InterruptMode, InterruptOutcome, InterruptRequest, Usage};
pub use error::{DriverError, RunError, SessionError};
pub use gaos_session::{
    ActOptions, AttachReceipt, AttachRequest, BoxFuture, CommandSubmission, ControllerKind, EpisodeIdentity, ErrorCode,
    EvaluationPolicy, ExistingHead, FinalizeRequest, HandleState, LifecycleHandle, Observation, ObserveOptions,
    SessionArtifact, SessionBinding, SessionControllerIdentity, SessionHandle, SessionPolicy, SessionResult,
    SessionTransport, adopt_existing, announces_terminal, create_session_handle_from_existing, forward_session_handle,
    observation, policy, receipts, replay_receipts, signing, wait_backoff,
};
pub use reconnect::{Reattached, ReconnectPolicy, Reconnecting};
pub use run::{
    Conversation, FinalizeMode, Pacing, Presenter, RunEvents, RunOptions, RunOutcome, RunPolicy, RunStatus, run_session,
};
pub use tokio_util::sync::CancellationToken;
