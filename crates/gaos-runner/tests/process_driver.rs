//! The `process` driver against real programs (Python agents written to a
//! scratch directory): the exact JSON-lines protocol (start, decide,
//! refused, end), answers by command or index, and every way an agent can
//! fail to answer (garbage, a late answer, an exit, a program that does not
//! start), each a driver error that names it, never a hang.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gaos_json::{Value, parse};
use gaos_runner::drivers::{ProcessConfig, ProcessDriver, ProcessStart};
use gaos_runner::{AgentDriver, DriverContext, DriverError, ErrorCode, SessionError};

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!("gaos-process-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).expect("scratch dir");
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn python() -> String {
    std::env::var("GAOS_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// A driver running `script` (Python) in `dir`, its stderr logged to `dir/agent.log`.
fn driver(dir: &Path, script: &str, deadline: Duration) -> ProcessDriver {
    std::fs::write(dir.join("agent.py"), script).expect("write the agent");
    let start = ProcessStart {
        game: "conformance/hilo".into(),
        seat: "alice".into(),
        level_id: "default".into(),
        level: parse(r#"{"handSize":3,"maxCard":9}"#).expect("JSON"),
        seed: 7,
        entrant: "mine".into(),
    };
    let config = ProcessConfig {
        cwd: Some(dir.to_path_buf()),
        deadline,
        stderr_log: Some(dir.join("agent.log")),
        ..ProcessConfig::new(vec![python(), "agent.py".into()], start)
    };
    ProcessDriver::new(config).expect("a command")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

fn view() -> Value {
    parse(r#"{"status":"playing","hand":[4,9,2],"round":0,"legalActions":[{"card":0},{"card":1},{"card":2}]}"#)
        .expect("JSON")
}

fn legal() -> Vec<Value> {
    ["{\"card\":0}", "{\"card\":1}", "{\"card\":2}"].iter().map(|t| parse(t).expect("JSON")).collect()
}

fn refusal() -> SessionError {
    SessionError::Host {
        status: 422,
        code: Some(ErrorCode::IllegalCommand),
        message: "card 99 is not in the hand".into(),
    }
}

/// Records every message it gets in messages.jsonl; answers the first
/// decide by index, the next ones by command; says goodbye on stderr when
/// stdin closes.
const RECORDER: &str = r#"
import json, sys
answered = 0
with open("messages.jsonl", "w") as out:
    for line in sys.stdin:
        out.write(line)
        out.flush()
        message = json.loads(line)
        if message["type"] == "decide":
            if answered == 0:
                print(json.dumps({"index": 1}), flush=True)
            else:
                print(json.dumps({"command": {"card": 2}}), flush=True)
            answered += 1
print("stdin closed after", answered, "answers", file=sys.stderr)
"#;

#[test]
fn the_agent_gets_start_decide_refused_and_end_exactly_as_documented() {
    let scratch = Scratch::new("protocol");
    let mut agent = driver(&scratch.0, RECORDER, Duration::from_secs(20));
    let (observation, legal) = (view(), legal());
    runtime().block_on(async {
        let context = DriverContext::new(&observation, &legal, 0, "s-1", "alice");
        let first = agent.act(context).await.expect("answers by index");
        assert_eq!(first.action, legal[1]);
        assert!(agent.retry_after_illegal(&first.action, &refusal()), "a running agent is asked again");
        let second = agent.act(context).await.expect("answers by command");
        assert_eq!(second.action, legal[2]);
        let outcome = parse(r#"{"kind":"decided","ranking":[{"seat":"alice","rank":1}]}"#).expect("JSON");
        agent.end(&outcome).await;
    });
    let messages: Vec<Value> = std::fs::read_to_string(scratch.0.join("messages.jsonl"))
        .expect("the agent recorded its messages")
        .lines()
        .map(|line| parse(line).expect("every message is one JSON line"))
        .collect();
    let text = |m: &Value| gaos_json::canonical_json(m);
    assert_eq!(messages.len(), 5, "{messages:?}");
    assert_eq!(
        text(&messages[0]),
        r#"{"entrant":"mine","game":"conformance/hilo","level":{"handSize":3,"maxCard":9},"levelId":"default","seat":"alice","seed":7,"type":"start"}"#
    );
    // The observation is the seat's view; the legal actions travel beside it.
    assert_eq!(
        text(&messages[1]),
        r#"{"deadlineMs":20000,"legalActions":[{"card":0},{"card":1},{"card":2}],"observation":{"hand":[4,9,2],"round":0,"status":"playing"},"seat":"alice","type":"decide"}"#
    );
    assert_eq!(
        text(&messages[2]),
        r#"{"code":"illegal_command","message":"card 99 is not in the hand","type":"refused"}"#
    );
    assert_eq!(messages[3].get("type").and_then(Value::as_str), Some("decide"));
    assert_eq!(
        text(&messages[4]),
        r#"{"outcome":{"kind":"decided","ranking":[{"rank":1,"seat":"alice"}]},"type":"end"}"#
    );
    // stdin closed after the end message, and stderr went to the log, prefixed with the seat.
    let log = std::fs::read_to_string(scratch.0.join("agent.log")).expect("the log");
    assert!(log.contains("[alice] stdin closed after 2 answers"), "{log}");
}

#[test]
fn garbage_is_an_unreadable_answer_and_the_next_decide_says_so() {
    let scratch = Scratch::new("garbage");
    let script = r#"
import json, sys
decides = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "refused":
        print("refused:", message["code"], file=sys.stderr, flush=True)
    if message["type"] == "decide":
        decides += 1
        print("not json at all" if decides == 1 else json.dumps({"index": 9}) if decides == 2 else json.dumps({"index": 0}), flush=True)
"#;
    let mut agent = driver(&scratch.0, script, Duration::from_secs(20));
    let (observation, legal) = (view(), legal());
    runtime().block_on(async {
        let context = DriverContext::new(&observation, &legal, 0, "s-1", "alice");
        let error = agent.act(context).await.expect_err("garbage");
        assert!(matches!(&error, DriverError::Process(why) if why.contains("not JSON")), "{error}");
        let error = agent.act(context).await.expect_err("an index out of range");
        assert!(matches!(&error, DriverError::Process(why) if why.contains("out of range")), "{error}");
        let decision = agent.act(context).await.expect("the third answer is readable");
        assert_eq!(decision.action, legal[0]);
        agent.end(&Value::Null).await;
    });
    let log = std::fs::read_to_string(scratch.0.join("agent.log")).expect("the log");
    assert_eq!(log.matches("refused: unreadable_answer").count(), 2, "{log}");
    assert!(log.contains("[alice] gaos: unreadable answer: the line \"not json at all\" is not JSON"), "{log}");
}

#[test]
fn a_late_answer_stops_the_agent_and_every_later_decision_fails_at_once() {
    let scratch = Scratch::new("stall");
    let script = "import sys, time\nsys.stdin.readline()\ntime.sleep(3600)\n";
    let mut agent = driver(&scratch.0, script, Duration::from_millis(300));
    let (observation, legal) = (view(), legal());
    runtime().block_on(async {
        let context = DriverContext::new(&observation, &legal, 0, "s-1", "alice");
        let started = Instant::now();
        let error = agent.act(context).await.expect_err("no answer");
        assert!(matches!(&error, DriverError::Process(why) if why.contains("300 ms")), "{error}");
        assert!(started.elapsed() < Duration::from_secs(10), "the deadline holds: {:?}", started.elapsed());
        let started = Instant::now();
        assert!(agent.act(context).await.is_err(), "a stopped agent is not asked again");
        assert!(started.elapsed() < Duration::from_millis(200), "it fails at once: {:?}", started.elapsed());
        assert!(!agent.retry_after_illegal(&legal[0], &refusal()), "nor re-asked");
    });
    let log = std::fs::read_to_string(scratch.0.join("agent.log")).expect("the log");
    assert!(log.contains("no answer within the deadline of 300 ms; the process is stopped"), "{log}");
}

#[test]
fn an_exit_or_a_program_that_cannot_start_is_named() {
    let scratch = Scratch::new("exit");
    let mut agent = driver(&scratch.0, "import sys\nsys.stdin.readline()\nsys.exit(3)\n", Duration::from_secs(20));
    let (observation, legal) = (view(), legal());
    runtime().block_on(async {
        let context = DriverContext::new(&observation, &legal, 0, "s-1", "alice");
        let error = agent.act(context).await.expect_err("it exited");
        assert!(matches!(&error, DriverError::Process(why) if why.contains("exited with status 3")), "{error}");
        let start = ProcessStart { seat: "bob".into(), ..ProcessStart::default() };
        let config =
            ProcessConfig { cwd: Some(scratch.0.clone()), ..ProcessConfig::new(vec!["./no-such-agent".into()], start) };
        let mut missing = ProcessDriver::new(config).expect("a command");
        let error = missing.act(context).await.expect_err("nothing to start");
        assert!(matches!(&error, DriverError::Process(why) if why.contains("cannot start")), "{error}");
    });
    assert!(ProcessDriver::new(ProcessConfig::new(Vec::new(), ProcessStart::default())).is_err());
}
