//! Issue 18 item 4 against a real `gaos serve`: a person takes a seat over
//! from its agent mid-game (interrupting the agent's decision in flight) and
//! hands it back; guidance and the run's system prompt reach the agent's
//! context. Every action still goes through the handle's `act`.

use std::sync::{Arc, Mutex};

use gaos_client::SessionClient;
use gaos_client::handle::RemoteSessionHandle;
use gaos_json::{Value, obj};
use gaos_runner::drivers::ScriptedDriver;
use gaos_runner::{
    AgentDriver, AttachRequest, BoxFuture, ControlChange, Controller, Decision, DriverContext, DriverError,
    FinalizeMode, InterruptMode, InterruptOutcome, InterruptRequest, RunControl, RunEvents, RunOptions, RunPolicy,
    SessionPolicy, run_control, run_session,
};
use gaos_testkit::http;
use gaos_testkit::server::TestServer;
use tokio::sync::mpsc;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

fn script(moves: &[u32]) -> ScriptedDriver {
    ScriptedDriver::new(moves.iter().map(|n| obj! { "n" => *n }.into()).collect())
}

/// What the agent saw of one decision.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    step: u64,
    guidance: Vec<String>,
    system_prompt: Option<String>,
}

/// An agent that plays `moves` but, at its own decision `hang_at`, thinks
/// until it is interrupted (once), telling `thinking` that it started.
struct Thinker {
    moves: Vec<u32>,
    made: usize,
    hang_at: usize,
    hung: bool,
    thinking: mpsc::UnboundedSender<()>,
    seen: Arc<Mutex<Vec<Seen>>>,
    interrupts: Vec<bool>,
}

impl AgentDriver for Thinker {
    fn id(&self) -> &str {
        "thinker"
    }
    fn label(&self) -> &str {
        "an agent that thinks for ever once"
    }
    fn interrupt(&mut self, _: &InterruptRequest, in_flight: bool) -> InterruptOutcome {
        self.interrupts.push(in_flight);
        InterruptOutcome { mode: InterruptMode::Abort, interrupted: in_flight, preserves_context: true }
    }
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        self.seen.lock().expect("seen").push(Seen {
            step: context.step,
            guidance: context.guidance.to_vec(),
            system_prompt: context.system_prompt.map(str::to_owned),
        });
        Box::pin(async move {
            if self.made == self.hang_at && !self.hung {
                self.hung = true;
                let _ = self.thinking.send(());
                std::future::pending::<()>().await;
            }
            let n = self.moves.get(self.made).copied().ok_or(DriverError::Exhausted { commands: self.moves.len() })?;
            self.made += 1;
            Ok(Decision::action(obj! { "n" => n }.into()))
        })
    }
}

/// Hands the seat back once the person made `person_moves` decisions.
struct HandBackAfter {
    control: RunControl,
    person_moves: usize,
    decisions_since_takeover: Option<usize>,
    changes: Vec<ControlChange>,
}

impl RunEvents for HandBackAfter {
    fn on_control_change(&mut self, change: &ControlChange) {
        self.decisions_since_takeover = matches!(change.controller, Controller::Person { .. }).then_some(0);
        self.changes.push(change.clone());
    }
    fn on_decision(&mut self, _: &Decision) {
        if let Some(made) = self.decisions_since_takeover.as_mut() {
            *made += 1;
            if *made == self.person_moves {
                assert!(self.control.hand_back(), "the run still takes inputs");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_takes_a_seat_over_mid_game_and_hands_it_back() {
    let server = TestServer::start(GAOS);
    let operator = SessionClient::new(&server.base_url, &server.operator_token).expect("operator");
    let policy = SessionPolicy::from_value(&json(
        r#"{"evaluation":{"kind":"none"},"durability":{"attachable":true},
            "evidence":{"kind":"verification","attachReceipts":true},"publication":{"kind":"none"}}"#,
    ))
    .expect("policy");
    let request = json(r#"{"game":"conformance/counter","level":{"rounds":4},"participantId":"a"}"#);
    let created = RemoteSessionHandle::create(&operator, &request, &policy).await.expect("create");
    let b = RemoteSessionHandle::attach(
        created.seat_client("b").expect("b"),
        &created.session_id,
        &AttachRequest::new("attach-b"),
        &policy,
    )
    .await
    .expect("attach b");

    let (thinking_tx, mut thinking) = mpsc::unbounded_channel();
    let seen = Arc::new(Mutex::new(Vec::new()));
    // The agent plays rounds 1 and 4; it hangs on its second decision.
    let mut agent = Thinker {
        moves: vec![1, 0],
        made: 0,
        hang_at: 1,
        hung: false,
        thinking: thinking_tx,
        seen: Arc::clone(&seen),
        interrupts: Vec::new(),
    };
    let (control, inputs) = run_control();
    assert!(control.guide("open with 1"));
    let mut events = HandBackAfter {
        control: control.clone(),
        person_moves: 2,
        decisions_since_takeover: None,
        changes: Vec::new(),
    };
    let caller = RunPolicy { finalize: FinalizeMode::Caller, ..RunPolicy::default() };

    let a_run = run_session(
        &created.handle,
        &mut agent,
        RunOptions::new(RunPolicy::default()).events(&mut events).inputs(inputs).system_prompt("You play seat a."),
    );
    let b_run = async {
        let mut driver = script(&[3, 3, 3, 3]);
        run_session(&b, &mut driver, RunOptions::new(caller)).await
    };
    // The person (rounds 2 and 3) steps in while the agent thinks.
    let person = async {
        thinking.recv().await.expect("the agent starts thinking");
        assert!(control.take_over(Box::new(script(&[2, 3]))));
    };
    let (a_outcome, b_outcome, ()) = tokio::join!(a_run, b_run, person);
    let a_outcome = a_outcome.expect("the seat's run completes");
    b_outcome.expect("b completes");

    assert_eq!(a_outcome.commands(), [1, 2, 3, 0].map(|n| Value::from(obj! { "n" => n as u32 })).to_vec());
    assert_eq!(a_outcome.person_decisions, vec![1, 2], "the person made decisions 1 and 2");
    assert_eq!(agent.interrupts, vec![true], "the takeover interrupted the decision in flight");
    let [takeover, handback] = &events.changes[..] else { panic!("two changes of hands: {:?}", events.changes) };
    assert_eq!(takeover.step, 1);
    assert_eq!(takeover.controller, Controller::Person { driver: "scripted".into() });
    assert_eq!(takeover.interrupt.map(|i| (i.mode, i.interrupted)), Some((InterruptMode::Abort, true)));
    assert_eq!(handback.step, 3);
    assert_eq!(handback.controller, Controller::Agent { driver: "thinker".into() });

    // The agent saw the guidance once (its first decision), the run's
    // system prompt every time, and nothing of the person's turns.
    let seen = seen.lock().expect("seen").clone();
    let steps: Vec<u64> = seen.iter().map(|s| s.step).collect();
    assert_eq!(steps, vec![0, 1, 3], "asked at 0, interrupted at 1, back at 3");
    assert_eq!(seen[0].guidance, vec!["open with 1".to_owned()]);
    assert!(seen[1..].iter().all(|s| s.guidance.is_empty()), "{seen:?}");
    assert!(seen.iter().all(|s| s.system_prompt.as_deref() == Some("You play seat a.")));

    // The host saw exactly the eight commands, each once.
    let response = http::get(
        &server.base_url,
        &format!("/v1/sessions/{}/transcript", created.session_id),
        Some(&server.operator_token),
    );
    assert_eq!(response.status, 200, "{}", response.text());
    let events: Vec<serde_json::Value> =
        response.text().lines().skip(1).map(|l| serde_json::from_str(l).expect("event")).collect();
    let accepted = http::accepted_identities(&events);
    assert_eq!(accepted.len(), 8, "4 rounds × 2 seats: {accepted:?}");
    let result = a_outcome.result.expect("finalized");
    http::verify_replay(GAOS, server.data_dir(), "takeover-counter", result.replay_text().expect("replay"));
}
