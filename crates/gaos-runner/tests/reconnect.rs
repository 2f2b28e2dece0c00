//! The lost-answer case of a reconnect (issue 18 item 3), which a real host
//! cannot be made to produce on demand: the host accepts a submission but
//! its answer never arrives. `run_session` re-attaches and resends the
//! identical submission, which an idempotent host answers with its first
//! answer, so the command is applied once. The host-restart case runs
//! against `gaos serve` in gaos-cli's `session_reconnect`.

use std::sync::Mutex;
use std::time::Duration;

use gaos_json::{Value, obj};
use gaos_runner::drivers::FirstLegalDriver;
use gaos_runner::{
    BoxFuture, CommandSubmission, LifecycleHandle, Observation, Reattached, ReconnectPolicy, Reconnecting, RunError,
    RunEvents, RunOptions, RunPolicy, SessionBinding, SessionError, SessionPolicy, SessionTransport, run_session,
};

/// Counts to `end` with `{"n": 1}`; answers by submission id like a host
/// (a repeat gets the first answer); loses the answer of submission number
/// `lose` (from 0) and then stays unreachable for `down` observes.
struct Lossy {
    end: u64,
    lose: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    count: u64,
    /// Every submission received, as its debug text (every field).
    received: Vec<String>,
    /// (submission id, revision answered).
    answered: Vec<(String, u64)>,
    down: u32,
}

fn envelope(n: u64, end: u64) -> Result<Observation, SessionError> {
    let done = n >= end;
    let legal: Vec<Value> = if done { vec![] } else { vec![obj! { "n" => 1u32 }.into()] };
    let tick = obj! { "count" => n, "legalActions" => legal, "done" => done };
    let value = obj! {
        "protocol" => "gaos.ticks", "protocolVersion" => "1.0", "kind" => "tick",
        "sessionId" => "s-1", "tickId" => format!("s-1:{n}"), "revision" => n, "tick" => tick
    };
    Observation::from_value(&value.into(), Some("s-1"))
}

impl SessionTransport for Lossy {
    fn observe<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let mut state = self.state.lock().expect("state");
            if state.down > 0 {
                state.down -= 1;
                return Err(SessionError::Transport("connection refused".into()));
            }
            envelope(state.count, self.end)
        })
    }
    fn submit<'a>(&'a self, submission: &'a CommandSubmission) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let mut state = self.state.lock().expect("state");
            state.received.push(format!("{submission:?}"));
            let id = submission.submission_id.clone().expect("an id");
            if let Some((_, revision)) = state.answered.iter().find(|(seen, _)| *seen == id) {
                return envelope(*revision, self.end);
            }
            state.count += 1;
            let revision = state.count;
            state.answered.push((id, revision));
            if state.received.len() - 1 == self.lose {
                state.down = 2;
                return Err(SessionError::Transport("connection reset".into()));
            }
            envelope(revision, self.end)
        })
    }
    fn finalize<'a>(&'a self, id: &'a str, _: &'a Value) -> BoxFuture<'a, Result<Value, SessionError>> {
        Box::pin(async move { Ok(obj! { "sessionId" => id, "status" => "finalized", "outcome" => "done" }.into()) })
    }
}

#[derive(Default)]
struct Watch {
    reconnecting: Vec<Reconnecting>,
    reattached: Vec<Reattached>,
}

impl RunEvents for Watch {
    fn on_reconnecting(&mut self, reconnecting: &Reconnecting) {
        self.reconnecting.push(reconnecting.clone());
    }
    fn on_reattached(&mut self, reattached: &Reattached) {
        self.reattached.push(reattached.clone());
    }
}

fn handle(transport: Lossy) -> LifecycleHandle<Lossy> {
    LifecycleHandle::new(transport, SessionBinding::new("s-1", 0, "player"), SessionPolicy::host_default(), None, false)
        .expect("handle")
}

fn quick() -> ReconnectPolicy {
    ReconnectPolicy { max_attempts: 5, first_delay: Duration::from_millis(1), max_delay: Duration::from_millis(4) }
}

#[tokio::test]
async fn a_lost_answer_is_resent_identically_and_applied_once() {
    let handle = handle(Lossy { end: 3, lose: 1, state: Mutex::default() });
    let mut watch = Watch::default();
    let options = RunOptions::new(RunPolicy::default()).events(&mut watch).reconnect(quick());
    let outcome = run_session(&handle, &mut FirstLegalDriver::new(), options).await.expect("the run completes");
    assert_eq!(outcome.decisions.len(), 3);

    let state = handle.transport().state.lock().expect("state");
    assert_eq!(state.count, 3, "every command applied once");
    assert_eq!(state.received.len(), 4, "three submissions and one resend");
    assert_eq!(state.received[1], state.received[2], "the resend is byte for byte the lost submission");
    let ids: Vec<&str> = state.answered.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["player:s-1:0:0", "player:s-1:1:0", "player:s-1:2:0"], "default ids, none new for the resend");

    // Two failed re-attach observes, then one that reached the head.
    assert_eq!(watch.reconnecting.len(), 3);
    let delays: Vec<Duration> = watch.reconnecting.iter().map(|r| r.delay).collect();
    assert_eq!(delays, [1, 2, 4].map(Duration::from_millis), "bounded exponential backoff");
    assert_eq!(
        watch.reattached,
        vec![Reattached { attempts: 3, revision: 2, resending: Some("player:s-1:1:0".into()) }]
    );
}

#[tokio::test]
async fn a_host_that_stays_away_ends_the_run_with_unreachable() {
    let transport = Lossy { end: 3, lose: usize::MAX, state: Mutex::default() };
    transport.state.lock().expect("state").down = 100;
    let handle = handle(transport);
    let options = RunOptions::new(RunPolicy::default()).reconnect(quick());
    let error = run_session(&handle, &mut FirstLegalDriver::new(), options).await.expect_err("unreachable");
    assert!(matches!(error, RunError::Unreachable { attempts: 5, .. }), "{error}");

    // Without reconnect the first loss is the run's error.
    let options = RunOptions::new(RunPolicy::default()).reconnect(ReconnectPolicy::never());
    let error = run_session(&handle, &mut FirstLegalDriver::new(), options).await.expect_err("lost");
    assert!(matches!(error, RunError::Session(SessionError::Transport(_))), "{error}");
}
