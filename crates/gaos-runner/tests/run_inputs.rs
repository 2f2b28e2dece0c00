//! Runner inputs (issue 18 item 4) against a tiny in-memory transport: an
//! interrupt stops the decision in flight and the driver is asked again,
//! guidance given while it thinks waits for the next decision, and an
//! interrupt with no decision in flight still reaches the driver. The
//! takeover through a real host is in gaos-cli's `session_takeover`.

use std::sync::Mutex;

use gaos_json::{Value, obj};
use gaos_runner::{
    AgentDriver, BoxFuture, CommandSubmission, Decision, DriverContext, DriverError, InterruptMode, InterruptOutcome,
    InterruptRequest, LifecycleHandle, Observation, RunEvents, RunOptions, RunPolicy, SessionBinding, SessionError,
    SessionPolicy, SessionTransport, run_control, run_session,
};
use tokio::sync::mpsc;

/// One seat counts to `end`; `{"n": 1}` is the only legal action.
struct Counter {
    count: Mutex<u64>,
    end: u64,
}

impl Counter {
    fn envelope(&self) -> Result<Observation, SessionError> {
        let n = *self.count.lock().expect("lock");
        let done = n >= self.end;
        let legal: Vec<Value> = if done { vec![] } else { vec![obj! { "n" => 1u32 }.into()] };
        let system: Vec<Value> = vec![obj! { "system" => "resign" }.into()];
        let tick = obj! { "count" => n, "legalActions" => legal, "systemActions" => system, "done" => done };
        let value = obj! {
            "protocol" => "gaos.ticks", "protocolVersion" => "1.0", "kind" => "tick",
            "sessionId" => "s-1", "tickId" => format!("s-1:{n}"), "revision" => n, "tick" => tick
        };
        Observation::from_value(&value.into(), Some("s-1"))
    }
}

impl SessionTransport for Counter {
    fn observe<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move { self.envelope() })
    }
    fn submit<'a>(&'a self, _: &'a CommandSubmission) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            *self.count.lock().expect("lock") += 1;
            self.envelope()
        })
    }
    fn finalize<'a>(&'a self, id: &'a str, _: &'a Value) -> BoxFuture<'a, Result<Value, SessionError>> {
        Box::pin(async move { Ok(obj! { "sessionId" => id, "status" => "finalized", "outcome" => "done" }.into()) })
    }
}

/// Thinks for ever on its first decision (telling `thinking`), then decides
/// at once; records what it saw and the interrupts it got.
struct Ponderer {
    thinking: mpsc::UnboundedSender<()>,
    first: bool,
    guidance: Vec<Vec<String>>,
    system_actions: Vec<usize>,
    interrupts: Vec<(Option<String>, bool)>,
}

impl AgentDriver for Ponderer {
    fn id(&self) -> &str {
        "ponderer"
    }
    fn label(&self) -> &str {
        "ponderer"
    }
    fn interrupt(&mut self, request: &InterruptRequest, in_flight: bool) -> InterruptOutcome {
        self.interrupts.push((request.prompt.clone(), in_flight));
        InterruptOutcome { mode: InterruptMode::Resume, interrupted: in_flight, preserves_context: true }
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        self.guidance.push(context.guidance.to_vec());
        self.system_actions.push(context.system_actions.len());
        Box::pin(async move {
            if self.first {
                self.first = false;
                let _ = self.thinking.send(());
                std::future::pending::<()>().await;
            }
            Ok(Decision::action(obj! { "n" => 1u32 }.into()))
        })
    }
}

#[derive(Default)]
struct Interrupts(Vec<InterruptOutcome>);

impl RunEvents for Interrupts {
    fn on_interrupted(&mut self, outcome: &InterruptOutcome) {
        self.0.push(*outcome);
    }
}

#[tokio::test]
async fn an_interrupt_stops_the_decision_in_flight_and_guidance_waits_for_the_next() {
    let transport = Counter { count: Mutex::new(0), end: 2 };
    let handle = LifecycleHandle::new(
        transport,
        SessionBinding::new("s-1", 0, "player"),
        SessionPolicy::host_default(),
        None,
        false,
    )
    .expect("handle");
    let (thinking_tx, mut thinking) = mpsc::unbounded_channel();
    let mut driver =
        Ponderer { thinking: thinking_tx, first: true, guidance: vec![], system_actions: vec![], interrupts: vec![] };
    let (control, inputs) = run_control();
    let mut events = Interrupts::default();
    let run =
        run_session(&handle, &mut driver, RunOptions::new(RunPolicy::default()).events(&mut events).inputs(inputs));
    let person = async {
        thinking.recv().await.expect("the driver starts thinking");
        assert!(control.guide("count faster"));
        assert!(control.interrupt(Some("stop and listen".into())));
    };
    let (outcome, ()) = tokio::join!(run, person);
    let outcome = outcome.expect("the run completes");
    assert_eq!(outcome.decisions.len(), 2, "the interrupted decision was not submitted");
    assert!(outcome.person_decisions.is_empty());
    assert_eq!(driver.interrupts, vec![(Some("stop and listen".to_owned()), true)]);
    assert_eq!(events.0.len(), 1);
    assert_eq!(events.0[0].mode, InterruptMode::Resume);
    // Asked three times: the interrupted try, its retry (with the guidance
    // given meanwhile), the second decision (guidance used up).
    assert_eq!(driver.guidance, vec![vec![], vec!["count faster".to_owned()], vec![]]);
    assert_eq!(driver.system_actions, vec![1, 1, 1], "the host's system actions reach the context");

    // After the run every control call says the run is gone.
    assert!(!control.hand_back());
}
