//! The built-in drivers: random (seeded, legal only), first-legal, scripted
//! (JSONL), human (injected terminal), and the `--driver` spec syntax.

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

use gaos_json::{Value, obj};
use gaos_runner::drivers::{DriverSettings, DriverSpec, FirstLegalDriver, HumanDriver, RandomDriver, ScriptedDriver};
use gaos_runner::{AgentDriver, DriverContext, DriverError};

fn legal() -> Vec<Value> {
    (0..4u32).map(|n| obj! { "n" => n }.into()).collect()
}

fn context<'a>(observation: &'a Value, legal: &'a [Value], step: u64) -> DriverContext<'a> {
    DriverContext::new(observation, legal, step, "s-1", "a")
}

async fn decide(driver: &mut dyn AgentDriver, legal: &[Value], step: u64) -> Result<Value, DriverError> {
    let observation: Value = obj! { "status" => "playing", "legalActions" => legal.to_vec() }.into();
    driver.act(context(&observation, legal, step)).await.map(|d| d.action)
}

#[tokio::test]
async fn random_is_seeded_and_only_picks_legal_actions() {
    let legal = legal();
    let mut a = RandomDriver::new(7);
    let mut b = RandomDriver::new(7);
    let mut c = RandomDriver::new(8);
    let mut picks = (Vec::new(), Vec::new(), Vec::new());
    for step in 0..50 {
        picks.0.push(decide(&mut a, &legal, step).await.expect("a"));
        picks.1.push(decide(&mut b, &legal, step).await.expect("b"));
        picks.2.push(decide(&mut c, &legal, step).await.expect("c"));
    }
    assert_eq!(picks.0, picks.1, "the same seed gives the same commands");
    assert_ne!(picks.0, picks.2, "another seed gives other commands");
    assert!(picks.0.iter().all(|p| legal.contains(p)));
    let distinct: std::collections::BTreeSet<String> = picks.0.iter().map(gaos_json::canonical_json).collect();
    assert_eq!(distinct.len(), 4, "50 draws cover all 4 actions");
    // mulberry32(7) draws 0.0117..., 0.0619..., 0.9769...: indexes 0, 0, 3.
    assert_eq!(picks.0[..3], [legal[0].clone(), legal[0].clone(), legal[3].clone()]);
    assert_eq!(decide(&mut a, &[], 0).await, Err(DriverError::NoLegalActions));
}

#[tokio::test]
async fn first_legal_and_scripted() {
    let legal = legal();
    let mut first = FirstLegalDriver::new();
    assert_eq!(decide(&mut first, &legal, 0).await, Ok(legal[0].clone()));
    assert_eq!(decide(&mut first, &[], 0).await, Err(DriverError::NoLegalActions));
    // Guidance cannot change its choice; its message says the guidance arrived.
    let observation = Value::Null;
    let guidance = vec!["take the centre".to_owned()];
    let context = DriverContext { guidance: &guidance, ..DriverContext::new(&observation, &legal, 1, "s-1", "x") };
    let decision = first.act(context).await.expect("decides");
    assert_eq!(decision.action, legal[0]);
    assert_eq!(decision.message.as_deref(), Some("guidance received (first-legal cannot follow it): take the centre"));
    assert_eq!(
        first.act(DriverContext::new(&observation, &legal, 2, "s-1", "x")).await.expect("decides").message,
        None
    );

    let dir = gaos_testkit::server::TempDir::new("gaos-scripted");
    let path = dir.path().join("moves.jsonl");
    std::fs::write(&path, "{\"n\":3}\n\n{\"cell\":4}\n").expect("write");
    let mut scripted = ScriptedDriver::from_path(&path).expect("script");
    assert_eq!(scripted.remaining(), 2);
    assert_eq!(decide(&mut scripted, &legal, 0).await, Ok(obj! { "n" => 3u32 }.into()));
    scripted.reset();
    assert_eq!(decide(&mut scripted, &legal, 1).await, Ok(obj! { "cell" => 4u32 }.into()), "reset does not rewind");
    assert_eq!(decide(&mut scripted, &legal, 2).await, Err(DriverError::Exhausted { commands: 2 }));
    std::fs::write(&path, "{\"n\":3}\nnot json\n").expect("write");
    let error = ScriptedDriver::from_path(&path).expect_err("bad line");
    assert!(matches!(&error, DriverError::Config(m) if m.contains("line 2")), "{error}");
}

/// A writer the test can read back.
#[derive(Clone, Default)]
struct Screen(Arc<Mutex<Vec<u8>>>);

impl Write for Screen {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("screen").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Screen {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("screen")).into_owned()
    }
}

#[tokio::test]
async fn human_picks_numbered_legal_actions_or_types_json() {
    let legal = legal();
    let screen = Screen::default();
    // "x" is unreadable, 9 is out of range, 2 picks the second action; then a JSON command.
    let input = Cursor::new(b"x\n9\n2\n{\"n\": 3, \"say\": \"hi\"}\n".to_vec());
    let mut human = HumanDriver::new(input, screen.clone());
    assert_eq!(decide(&mut human, &legal, 0).await, Ok(legal[1].clone()));
    let text = screen.text();
    assert!(text.contains("seat a · decision 1"), "{text}");
    assert!(text.contains("  1) {\"n\":0}") && text.contains("  4) {\"n\":3}"), "{text}");
    assert!(text.contains("9 is not a listed action"), "{text}");
    assert!(!text.contains("legalActions"), "the view is shown without the action list: {text}");
    assert_eq!(decide(&mut human, &legal, 1).await, Ok(obj! { "n" => 3u32, "say" => "hi" }.into()));
    let closed = decide(&mut human, &legal, 2).await;
    assert!(matches!(closed, Err(DriverError::Input(m)) if m.contains("end of input")));
}

#[tokio::test]
async fn human_menu_numbers_stay_the_same_between_turns() {
    let all = legal();
    let screen = Screen::default();
    let mut human = HumanDriver::new(Cursor::new(b"1\n4\n".to_vec()), screen.clone());
    assert_eq!(decide(&mut human, &all, 0).await, Ok(all[0].clone()));
    // {"n":0} and {"n":2} are gone: the others keep their numbers, and 4 is still {"n":3}.
    let later = vec![all[1].clone(), all[3].clone()];
    assert_eq!(decide(&mut human, &later, 1).await, Ok(all[3].clone()));
    let text = screen.text();
    let second = &text[text.find("decision 2]").expect("second prompt")..];
    assert!(second.contains("  2) {\"n\":1}\n  4) {\"n\":3}\n") && second.contains("Choose 2, 4"), "{second}");
}

#[test]
fn driver_specs_parse_and_build() {
    assert_eq!("random".parse(), Ok(DriverSpec::Random { seed: None }));
    assert_eq!("first-legal".parse(), Ok(DriverSpec::FirstLegal));
    assert_eq!("scripted:m.jsonl".parse(), Ok(DriverSpec::Scripted { path: "m.jsonl".into() }));
    assert_eq!("human".parse(), Ok(DriverSpec::Human));
    assert_eq!("openai".parse(), Ok(DriverSpec::OpenAi { model: None }));
    assert_eq!("openai:gpt-x".parse(), Ok(DriverSpec::OpenAi { model: Some("gpt-x".into()) }));
    for bad in ["random:-1", "scripted", "scripted:", "robot", "first-legal:1"] {
        assert!(bad.parse::<DriverSpec>().is_err(), "{bad} must be refused");
    }
    let settings = DriverSettings::new(5, "alice");
    for (spec, id) in [("random", "random"), ("first-legal", "first-legal"), ("human", "human")] {
        let driver = spec.parse::<DriverSpec>().expect("spec").build(&settings).expect("build");
        assert_eq!(driver.id(), id);
    }
    let missing = "scripted:/definitely/not/here.jsonl".parse::<DriverSpec>().expect("spec").build(&settings);
    assert!(matches!(missing, Err(DriverError::Config(_))));
}

#[tokio::test]
async fn random_spec_derives_distinct_seeds_per_seat() {
    let legal = legal();
    let spec = DriverSpec::Random { seed: None };
    let mut alice = spec.build(&DriverSettings::new(5, "alice")).expect("build");
    let mut alice_again = spec.build(&DriverSettings::new(5, "alice")).expect("build");
    let mut bob = spec.build(&DriverSettings::new(5, "bob")).expect("build");
    let (mut a, mut a2, mut b) = (Vec::new(), Vec::new(), Vec::new());
    for step in 0..20 {
        a.push(decide(alice.as_mut(), &legal, step).await.expect("a"));
        a2.push(decide(alice_again.as_mut(), &legal, step).await.expect("a"));
        b.push(decide(bob.as_mut(), &legal, step).await.expect("b"));
    }
    assert_eq!(a, a2);
    assert_ne!(a, b);
}

#[test]
fn a_sessions_controller_kind_is_its_drivers_when_they_agree() {
    use gaos_runner::drivers::session_controller_kind;
    use gaos_session::ControllerKind;
    let spec = |text: &str| text.parse::<DriverSpec>().expect("a driver spec");
    let kind = |texts: &[&str]| session_controller_kind(texts.iter().map(|t| spec(t)).collect::<Vec<_>>().iter());
    assert_eq!(kind(&["random", "first-legal", "random:3"]), ControllerKind::LocalAgent);
    assert_eq!(kind(&["process:python3 a.py", "process:./b"]), ControllerKind::Cli);
    assert_eq!(kind(&["openai", "openai:gpt-4o-mini"]), ControllerKind::Provider);
    assert_eq!(kind(&["human"]), ControllerKind::Human);
    assert_eq!(kind(&["human", "random"]), ControllerKind::Mixed);
    assert_eq!(kind(&[]), ControllerKind::Mixed);
}
