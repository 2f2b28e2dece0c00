//! Drivers, presenters and handle decorators the gates play with.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gaos_json::{Value, canonical_json, obj};
use gaos_runner::{
    ActOptions, AgentDriver, AttachReceipt, BoxFuture, CancellationToken, Decision, DriverContext, DriverError,
    FinalizeRequest, HandleState, Observation, ObserveOptions, Presenter, SessionBinding, SessionError, SessionHandle,
    SessionPolicy, SessionResult,
};

/// Wraps a driver and adds a coach's note to each decision: guided play
/// is an ordinary driver decoration, not another kind of session.
pub(crate) struct Coached(pub Box<dyn AgentDriver>);

impl AgentDriver for Coached {
    fn id(&self) -> &str {
        "coached"
    }
    fn label(&self) -> &str {
        "coached"
    }
    fn reset(&mut self) {
        self.0.reset()
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        Box::pin(async move {
            let mut decision = self.0.act(context).await?;
            decision.message = Some(format!("coach: decision {} looks fine", context.step + 1));
            Ok(decision)
        })
    }
}

/// Counts the observations it was shown.
#[derive(Default)]
pub(crate) struct Screen(pub AtomicUsize);

impl Presenter for Screen {
    fn present<'a>(&'a self, _o: &'a Observation, _c: &'a CancellationToken) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }
}

/// First-legal, with a memory the runner must wipe: it counts resets and the
/// decisions made since the last one, and records, per decision, how many
/// decisions its memory held then (0 = a fresh agent).
#[derive(Default)]
pub(crate) struct Remembering {
    pub resets: usize,
    pub since_reset: usize,
    /// Decisions remembered before each decision, in order.
    pub memory_at_decision: Vec<usize>,
}

impl AgentDriver for Remembering {
    fn id(&self) -> &str {
        "remembering"
    }
    fn label(&self) -> &str {
        "remembering"
    }
    fn reset(&mut self) {
        self.resets += 1;
        self.since_reset = 0;
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let action = context.legal_actions.first().cloned().ok_or(DriverError::NoLegalActions);
        self.memory_at_decision.push(self.since_reset);
        self.since_reset += 1;
        Box::pin(async move { action.map(Decision::action) })
    }
}

/// Decides like the inner driver and cancels the run after `after` decisions.
pub(crate) struct InterruptAfter {
    pub inner: Box<dyn AgentDriver>,
    pub after: usize,
    pub made: usize,
    pub cancel: CancellationToken,
}

impl AgentDriver for InterruptAfter {
    fn id(&self) -> &str {
        "interrupt-after"
    }
    fn label(&self) -> &str {
        "interrupt-after"
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        Box::pin(async move {
            if self.made == self.after {
                self.cancel.cancel();
                return std::future::pending().await;
            }
            self.made += 1;
            self.inner.act(context).await
        })
    }
}

/// A decorator that counts the calls a runner makes (products may wrap a
/// handle like this; the runner cannot tell).
pub(crate) struct Counting<'a> {
    pub inner: &'a dyn SessionHandle,
    pub observes: AtomicUsize,
    pub waits: AtomicUsize,
}

impl SessionHandle for Counting<'_> {
    fn session_id(&self) -> &str {
        self.inner.session_id()
    }
    fn seat(&self) -> &str {
        self.inner.seat()
    }
    fn policy(&self) -> &SessionPolicy {
        self.inner.policy()
    }
    fn state(&self) -> HandleState {
        self.inner.state()
    }
    fn binding(&self) -> SessionBinding {
        self.inner.binding()
    }
    fn receipt(&self) -> Option<AttachReceipt> {
        self.inner.receipt()
    }
    fn observe_with(&self, options: ObserveOptions) -> BoxFuture<'_, Result<Observation, SessionError>> {
        self.observes.fetch_add(1, Ordering::SeqCst);
        self.inner.observe_with(options)
    }
    fn act_with(&self, command: Value, options: ActOptions) -> BoxFuture<'_, Result<Observation, SessionError>> {
        self.inner.act_with(command, options)
    }
    fn next_submission_id(&self) -> String {
        self.inner.next_submission_id()
    }
    fn finalize(&self, request: FinalizeRequest) -> BoxFuture<'_, Result<SessionResult, SessionError>> {
        self.inner.finalize(request)
    }
    fn close(&self) {
        self.inner.close()
    }
    fn wait_for_change(&self, after: u64, attempt: u32) -> BoxFuture<'_, Result<(), SessionError>> {
        self.waits.fetch_add(1, Ordering::SeqCst);
        self.inner.wait_for_change(after, attempt)
    }
}

/// Thinks for a while before each decision.
pub(crate) struct Slow(pub Duration);

impl AgentDriver for Slow {
    fn id(&self) -> &str {
        "slow"
    }
    fn label(&self) -> &str {
        "slow"
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let action = context.legal_actions.first().cloned().ok_or(DriverError::NoLegalActions);
        let delay = self.0;
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            action.map(Decision::action)
        })
    }
}

/// A chat-completions endpoint that always calls `choose_action` with the
/// last legal index it was offered (read back from the tool schema), after
/// one illegal answer per decision. Returns its base URL.
pub(crate) async fn fake_provider() -> String {
    use axum::body::Bytes;
    use axum::routing::post;
    let turns = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |body: Bytes| {
            let turns = Arc::clone(&turns);
            async move {
                let request = gaos_json::parse_bytes(&body).expect("JSON");
                let max = request
                    .get("tools")
                    .and_then(|t| t.as_array())
                    .and_then(|t| t.first())
                    .and_then(|t| t.get("function"))
                    .and_then(|f| f.get("parameters"))
                    .and_then(|p| p.get("properties"))
                    .and_then(|p| p.get("index"))
                    .and_then(|i| i.get("maximum"))
                    .and_then(Value::as_u64)
                    .expect("an index tool");
                let n = turns.fetch_add(1, Ordering::SeqCst);
                let index = if n.is_multiple_of(2) { max + 1 } else { max };
                let arguments = format!("{{\"index\":{index}}}");
                let call = obj! { "id" => format!("call-{n}"), "type" => "function",
                "function" => obj! { "name" => "choose_action", "arguments" => arguments } };
                let message =
                    obj! { "role" => "assistant", "content" => Value::Null, "tool_calls" => vec![Value::from(call)] };
                let answer = obj! {
                    "choices" => vec![Value::from(obj! { "index" => 0u32, "message" => message })],
                    "usage" => obj! { "prompt_tokens" => 50u32, "completion_tokens" => 5u32 }
                };
                canonical_json(&answer.into())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    format!("http://{address}/v1")
}
