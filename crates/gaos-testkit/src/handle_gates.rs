//! The RFC-018 §12 release gates of the session handle (and the handle's
//! other lifecycle operations, such as a run's reset), written once and run
//! over every transport: in process (`crates/gaos-host/tests/session_handle.rs`)
//! and over HTTP against a real `gaos serve`
//! (`crates/gaos-cli/tests/session_handle_remote.rs`).
//!
//! A transport implements [`GateHost`] (create, attach and adopt handles as
//! `Box<dyn SessionHandle>`, plus the operator views a gate checks: the
//! transcript, the session list, raw attach and finalize answers, the test
//! clock, a restart) and instantiates every gate with
//! [`handle_gate_tests!`](crate::handle_gate_tests). Gate names carry the §12
//! gate they prove (`g1_...` = gate 1); each is one `#[tokio::test]` per
//! transport, so a gate can never run on one transport only.

mod attach;
mod create;
mod drivers;
mod episodes;
mod evaluation;
mod finalize;
mod options;
mod play;
mod resume;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;

use gaos_json::{Value, canonical_json};
use gaos_runner::{
    AgentDriver, AttachRequest, FinalizeMode, FinalizeRequest, Presenter, RunOptions, RunOutcome, RunPolicy, RunStatus,
    SessionError, SessionHandle, SessionPolicy, SessionResult, run_session,
};

pub use attach::{
    g2_create_and_attach_return_the_same_handle_type_at_the_durable_head,
    g3_attach_cannot_roll_back_fork_replace_identity_or_mutate_gameplay,
    g4_exact_attach_retries_are_idempotent_and_receipt_chains_verify,
    g9_closing_a_handle_never_touches_authoritative_state,
};
pub use create::a_create_that_names_no_seat_opens_the_player_seat;
pub use episodes::reset_starts_the_next_level_of_a_run_that_advances_on_reset;
pub use evaluation::{
    finalize_refuses_what_the_policy_or_coverage_forbids_and_practice_is_not_publishable,
    official_finalize_returns_the_manifest_bound_score_and_verification_facts,
};
pub use finalize::{
    a_finalized_sessions_actor_stops_when_its_handles_are_dropped,
    g5_one_finalize_operation_for_normal_and_evaluated_sessions, g6_exact_finalize_retries_return_identical_bytes,
};
pub use options::act_and_observe_options_name_the_submission_and_bound_the_call;
pub use play::{
    a_waiting_seat_sleeps_on_the_change_feed_instead_of_polling,
    g1_same_handle_type_for_normal_guided_autonomous_watched_and_headless_play,
    g7_paced_and_unpaced_runs_produce_identical_commands_transcripts_and_outcomes,
    g8_fresh_per_episode_resets_only_the_agent, the_openai_driver_plays_a_whole_match_through_the_host,
};
pub use resume::{
    g10_interrupted_runs_attach_and_continue_without_duplicate_actions,
    g10_interrupted_runs_resume_after_a_host_restart_without_duplicate_actions,
    lease_expiry_is_renewed_and_the_same_submission_retried_once,
};

/// How a gate wants its host started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Setup {
    /// An adjustable clock (`--test-clock`, `HostOptions::test_clock`).
    pub test_clock: bool,
}

impl Setup {
    /// The setup gate `name` needs: only the lease gate moves the clock.
    pub fn for_gate(name: &str) -> Setup {
        Setup { test_clock: name.starts_with("lease_") }
    }
}

/// What [`GateHost::create`] returns.
pub struct Created {
    /// The new session.
    pub session_id: String,
    /// The creator seat.
    pub creator: String,
    /// The creator seat's handle, at the durable head.
    pub handle: Box<dyn SessionHandle>,
    /// Whether the creator's handle holds its claim's lease token.
    pub holds_lease: bool,
}

/// One transport to a real host, as the gates need it. Handles are
/// `Box<dyn SessionHandle>`: the gates use them only through the trait.
#[allow(async_fn_in_trait)] // used through generics only, on the test's own runtime
pub trait GateHost {
    /// `createSessionHandle(request, policy)` as the operator. The transport
    /// keeps the seat tokens of the answer for [`GateHost::attach`].
    async fn create(&self, request: &Value, policy: &SessionPolicy) -> Result<Created, SessionError>;

    /// `attachSessionHandle` for `seat` with the token create issued.
    async fn attach(
        &self,
        session_id: &str,
        seat: &str,
        request: &AttachRequest,
        policy: &SessionPolicy,
    ) -> Result<Box<dyn SessionHandle>, SessionError>;

    /// `createSessionHandleFromExisting(existing, policy)` for `seat`.
    fn adopt(
        &self,
        session_id: &str,
        seat: &str,
        existing: &Value,
        policy: &SessionPolicy,
    ) -> Result<Box<dyn SessionHandle>, SessionError>;

    /// A raw attach answer for `seat` with an arbitrary body (no handle-side
    /// checks): `Ok` or the host's error `code`.
    async fn attach_raw(&self, session_id: &str, seat: &str, body: &Value) -> Result<(), String>;

    /// The host's finalize answer bytes to the operator for `body` (asserts 200).
    async fn finalize_raw(&self, session_id: &str, body: &Value) -> String;

    /// The operator transcript: every line, parsed (the header first).
    async fn transcript(&self, session_id: &str) -> Vec<Value>;

    /// The session's `status` in the operator's session list.
    async fn session_status(&self, session_id: &str) -> String;

    /// Move the test clock forward (the host runs with [`Setup::test_clock`]).
    async fn advance_clock(&self, ms: i64);

    /// How many session actors the host runs (`gaos_live_sessions`).
    async fn live_sessions(&self) -> u64;

    /// Stop the host and start it again on the same store. Every handle made
    /// before is dropped by the caller first.
    async fn restart(&mut self);

    /// Whether handles wake on the host's change feed (in process) rather
    /// than sleeping the runner's bounded backoff (HTTP).
    fn has_change_feed(&self) -> bool;

    /// Verify a replay with the reference verifier (asserts `accepted-unsigned`).
    fn verify_replay(&self, name: &str, replay: &str);
}

/// Instantiate every gate as a `#[tokio::test]` for one transport:
/// `handle_gate_tests!(start)` where `async fn start(Setup) -> impl GateHost`.
#[macro_export]
macro_rules! handle_gate_tests {
    ($start:path) => {
        $crate::handle_gate_tests!(@each $start;
            g1_same_handle_type_for_normal_guided_autonomous_watched_and_headless_play,
            g2_create_and_attach_return_the_same_handle_type_at_the_durable_head,
            g3_attach_cannot_roll_back_fork_replace_identity_or_mutate_gameplay,
            g4_exact_attach_retries_are_idempotent_and_receipt_chains_verify,
            g5_one_finalize_operation_for_normal_and_evaluated_sessions,
            g6_exact_finalize_retries_return_identical_bytes,
            g7_paced_and_unpaced_runs_produce_identical_commands_transcripts_and_outcomes,
            g8_fresh_per_episode_resets_only_the_agent,
            g9_closing_a_handle_never_touches_authoritative_state,
            g10_interrupted_runs_attach_and_continue_without_duplicate_actions,
            g10_interrupted_runs_resume_after_a_host_restart_without_duplicate_actions,
            lease_expiry_is_renewed_and_the_same_submission_retried_once,
            a_waiting_seat_sleeps_on_the_change_feed_instead_of_polling,
            the_openai_driver_plays_a_whole_match_through_the_host,
            a_finalized_sessions_actor_stops_when_its_handles_are_dropped,
            act_and_observe_options_name_the_submission_and_bound_the_call,
            official_finalize_returns_the_manifest_bound_score_and_verification_facts,
            finalize_refuses_what_the_policy_or_coverage_forbids_and_practice_is_not_publishable,
            reset_starts_the_next_level_of_a_run_that_advances_on_reset,
            a_create_that_names_no_seat_opens_the_player_seat,
        );
    };
    (@each $start:path; $($gate:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $gate() {
                let setup = $crate::handle_gates::Setup::for_gate(stringify!($gate));
                let mut host = $start(setup).await;
                $crate::handle_gates::$gate(&mut host).await;
            }
        )*
    };
}

pub(crate) fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

pub(crate) fn verification_policy() -> SessionPolicy {
    SessionPolicy::from_value(&json(
        r#"{"evaluation":{"kind":"none"},"durability":{"attachable":true},
            "evidence":{"kind":"verification","attachReceipts":true},"publication":{"kind":"none"}}"#,
    ))
    .expect("policy")
}

/// The benchmark the official-evaluation gates play: conformance/counter's
/// `default` level (3 rounds), seed 1.
pub(crate) fn official_manifest() -> Value {
    json(
        r#"{"schema":"gaos.benchmark-manifest.v1",
            "benchmark":{"id":"counter-bench","version":"1","adapter":"conformance/counter"},
            "tasks":[{"id":"default","seeds":[1],"episodes":1,"maxSteps":5}],
            "scoring":{"plugin":"gaos.score.outcome","aggregation":"mean"},
            "submission":{"requireSignedSeats":false,"requireCompleteCoverage":true}}"#,
    )
}

/// Official evaluation bound to [`official_manifest`] by its digest.
pub(crate) fn official_policy() -> SessionPolicy {
    let digest = gaos_json::canonical_sha256_hex(&official_manifest());
    SessionPolicy::from_value(&json(&format!(
        r#"{{"evaluation":{{"kind":"official","benchmarkId":"counter-bench","benchmarkVersion":"1","manifestDigest":"{digest}"}},
            "durability":{{"attachable":true}},"evidence":{{"kind":"verification","attachReceipts":true}},
            "publication":{{"kind":"eligible","policyId":"p","policyVersion":"1"}}}}"#
    )))
    .expect("policy")
}

/// The create request of an official episode: the planned level and seed,
/// with the manifest the score is bound to.
pub(crate) fn official_request() -> String {
    format!(
        r#"{{"game":"conformance/counter","levelId":"default","seed":1,"participantId":"a","manifest":{}}}"#,
        gaos_json::canonical_json(&official_manifest())
    )
}

/// Create a session and attach every other seat: one handle per seat, in
/// seat order (the creator first).
pub(crate) async fn seat_handles(
    host: &impl GateHost,
    request: &str,
    policy: &SessionPolicy,
    seats: &[&str],
) -> (String, Vec<Box<dyn SessionHandle>>) {
    let created = host.create(&json(request), policy).await.expect("create");
    assert_eq!(created.creator, seats[0]);
    let id = created.session_id.clone();
    let mut handles = vec![created.handle];
    for seat in &seats[1..] {
        let request = AttachRequest::new(format!("attach-{seat}"));
        handles.push(host.attach(&id, seat, &request, policy).await.expect("attach"));
    }
    (id, handles)
}

/// Run every seat concurrently (caller finalization), then finalize once.
pub(crate) async fn play(
    handles: &[Box<dyn SessionHandle>],
    drivers: Vec<Box<dyn AgentDriver>>,
    policy: RunPolicy,
    presenter: Option<Arc<dyn Presenter>>,
) -> (Vec<RunOutcome>, SessionResult) {
    let policy = RunPolicy { finalize: FinalizeMode::Caller, ..policy };
    let runs = handles.iter().zip(drivers).map(|(handle, mut driver)| {
        let presenter = presenter.clone();
        async move {
            let mut options = RunOptions::new(policy);
            if let Some(p) = presenter {
                options = options.presenter(p);
            }
            run_session(handle.as_ref(), driver.as_mut(), options).await
        }
    });
    let outcomes: Vec<RunOutcome> = futures_util::future::join_all(runs)
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("every seat's run completes");
    for outcome in &outcomes {
        assert_eq!(outcome.status, RunStatus::Terminal);
    }
    let result = handles[0].finalize(FinalizeRequest::default()).await.expect("finalize");
    (outcomes, result)
}

/// Accepted intents of the transcript: (seat, submissionId, command).
pub(crate) fn accepted(events: &[Value]) -> Vec<(String, String, String)> {
    events
        .iter()
        .filter(|e| e.get("kind").and_then(Value::as_str) == Some("intent-accepted"))
        .map(|e| {
            let field = |k: &str| canonical_json(e.get(k).unwrap_or(&Value::Null));
            (field("participantId"), field("submissionId"), field("command"))
        })
        .collect()
}

/// Events that are gameplay (not the `gaos.lease` extension lane).
pub(crate) fn gameplay(events: &[Value]) -> Vec<Value> {
    events.iter().filter(|e| !canonical_json(e).contains("\"gaos.lease\"")).cloned().collect()
}

/// `gaos.lease` event names of a transcript, in order.
pub(crate) fn lease_events(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| e.get("record").and_then(|r| r.get("event")).and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// Seat tokens a transport keeps from create answers, by (session, seat).
#[derive(Debug, Default)]
pub struct SeatTokens(Mutex<BTreeMap<(String, String), String>>);

impl SeatTokens {
    /// Remember every seat token of a create answer.
    pub fn remember<'a>(&self, session_id: &str, tokens: impl IntoIterator<Item = (&'a String, &'a String)>) {
        let mut map = self.0.lock().expect("seat tokens");
        for (seat, token) in tokens {
            map.insert((session_id.to_owned(), seat.clone()), token.clone());
        }
    }

    /// The token of `seat` (panics if create did not issue one).
    pub fn get(&self, session_id: &str, seat: &str) -> String {
        let map = self.0.lock().expect("seat tokens");
        map.get(&(session_id.to_owned(), seat.to_owned()))
            .unwrap_or_else(|| panic!("no token for seat {seat} of {session_id}"))
            .clone()
    }
}
