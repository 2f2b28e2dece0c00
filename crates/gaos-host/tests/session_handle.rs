//! RFC-018 release gates through the real host, in process: the
//! `InProcessSessionHandle` over `Host` (SQLite in a temp dir). The gates
//! themselves are `gaos_testkit::handle_gates`, the same suite the HTTP lane
//! (`crates/gaos-cli/tests/session_handle_remote.rs`) runs against
//! `gaos serve`; this file only says how to reach the host in process.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use gaos_games::GameRegistry;
use gaos_host::auth::Caller;
use gaos_host::handle::{InProcessSessionHandle, open_local_host};
use gaos_host::lease::Presented;
use gaos_host::requests::FinalizeRequest;
use gaos_host::{Host, HostOptions};
use gaos_json::Value;
use gaos_kernel::replay::{ReplaySource, Verdict, VerifyOptions, verify_replay};
use gaos_kernel::{Game, GameRef};
use gaos_runner::{AttachRequest, SessionError, SessionHandle, SessionPolicy};
use gaos_testkit::handle_gates::{Created, GateHost, SeatTokens, Setup};
use gaos_testkit::server::TempDir;

/// A host in this process over SQLite in a temp dir.
struct InProcess {
    /// `None` only while [`GateHost::restart`] runs.
    running: Option<Host>,
    options: HostOptions,
    dir: TempDir,
    tokens: SeatTokens,
}

async fn start(setup: Setup) -> InProcess {
    let dir = TempDir::new("gaos-handle");
    let options = HostOptions { test_clock: setup.test_clock, ..HostOptions::new(gaos_games::GameRegistry::builtin()) };
    let host = open_local_host(dir.path(), options.clone()).await.expect("host");
    InProcess { running: Some(host), options, dir, tokens: SeatTokens::default() }
}

impl InProcess {
    fn host(&self) -> &Host {
        self.running.as_ref().expect("the host runs")
    }
}

gaos_testkit::handle_gate_tests!(start);

fn boxed(handle: InProcessSessionHandle) -> Box<dyn SessionHandle> {
    Box::new(handle)
}

impl GateHost for InProcess {
    async fn create(&self, request: &Value, policy: &SessionPolicy) -> Result<Created, SessionError> {
        let created = InProcessSessionHandle::create(self.host(), request, policy).await?;
        self.tokens.remember(&created.session_id, &created.seat_tokens);
        let holds_lease = created.handle.transport().holds_lease();
        Ok(Created {
            session_id: created.session_id,
            creator: created.creator,
            handle: boxed(created.handle),
            holds_lease,
        })
    }

    async fn attach(
        &self,
        session_id: &str,
        seat: &str,
        request: &AttachRequest,
        policy: &SessionPolicy,
    ) -> Result<Box<dyn SessionHandle>, SessionError> {
        let token = self.tokens.get(session_id, seat);
        InProcessSessionHandle::attach(self.host(), &token, session_id, request, policy).await.map(boxed)
    }

    fn adopt(
        &self,
        session_id: &str,
        seat: &str,
        existing: &Value,
        policy: &SessionPolicy,
    ) -> Result<Box<dyn SessionHandle>, SessionError> {
        let token = self.tokens.get(session_id, seat);
        InProcessSessionHandle::from_existing(self.host(), &token, existing, policy).map(boxed)
    }

    async fn attach_raw(&self, session_id: &str, seat: &str, body: &Value) -> Result<(), String> {
        let caller = self.host().caller(Some(&self.tokens.get(session_id, seat))).expect("caller");
        let request = gaos_host::requests::AttachRequest::from_value(body.clone()).map_err(|e| e.code.to_string())?;
        let answer = self.host().attach(&caller, session_id, Presented::default(), request).await;
        answer.map(drop).map_err(|e| e.code.to_string())
    }

    async fn finalize_raw(&self, session_id: &str, body: &Value) -> String {
        let request = FinalizeRequest::from_value(body.clone()).expect("a finalize request");
        let answer = self.host().finalize(&Caller::Operator, session_id, request).await.expect("finalize");
        assert_eq!(answer.status, 200, "{}", answer.body);
        answer.body.to_string()
    }

    async fn transcript(&self, session_id: &str) -> Vec<Value> {
        let text = self.host().transcript(&Caller::Operator, session_id).await.expect("transcript");
        text.lines().map(|line| gaos_json::parse(line).expect("transcript line")).collect()
    }

    async fn session_status(&self, session_id: &str) -> String {
        let listed = self.host().list(&Caller::Operator, None).await.expect("list");
        session_row_status(&listed, session_id)
    }

    async fn advance_clock(&self, ms: i64) {
        self.host().advance_clock(&Caller::Operator, ms).await.expect("clock");
    }

    async fn live_sessions(&self) -> u64 {
        self.host().metrics().live_sessions.load(Ordering::Relaxed)
    }

    async fn restart(&mut self) {
        // Stop: once the old host is dropped its actors stop (no handle is
        // left), and nothing writes to the store any more.
        let metrics = Arc::clone(self.host().metrics());
        drop(self.running.take());
        let mut waits = 0;
        while metrics.live_sessions.load(Ordering::Relaxed) > 0 {
            assert!(waits < 500, "the old host's actors stop within 5 s");
            waits += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let reopened = open_local_host(self.dir.path(), self.options.clone()).await.expect("reopen");
        self.running = Some(reopened);
    }

    fn has_change_feed(&self) -> bool {
        true
    }

    fn verify_replay(&self, name: &str, replay: &str) {
        let registry = GameRegistry::builtin();
        let resolve = |game: &GameRef| -> Option<Arc<dyn Game>> {
            registry.by_adapter(&game.adapter.id).or_else(|| registry.get(&game.id))
        };
        let report = verify_replay(ReplaySource::Text(replay), &resolve, &VerifyOptions::default());
        assert_eq!(report.verdict, Verdict::AcceptedUnsigned, "{name}: {:?}", report.problems);
    }
}

/// The `status` of `session_id`'s row in a session list answer.
fn session_row_status(listed: &Value, session_id: &str) -> String {
    let rows = listed.get("sessions").and_then(Value::as_array).expect("a session list");
    let row = rows.iter().find(|r| r.get("id").and_then(Value::as_str) == Some(session_id)).expect("the session's row");
    row.get("status").and_then(Value::as_str).expect("status").to_owned()
}
