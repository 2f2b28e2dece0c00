//! `gaos play --console SEAT` through the real binary, its stdin piped: an
//! agent plays tic-tac-toe seat x, guidance typed on the console reaches its
//! decision context, the person takes the seat over, plays a move the agent
//! would not have played, hands the seat back, and the agent finishes. The
//! replay verifies and holds the person's move at the decision the console
//! reports. Unknown commands and stray lines are refused on stderr and
//! change nothing. In process and on a running `gaos serve`.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gaos_testkit::server::{TempDir, TestServer};
use serde_json::Value;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// A running `gaos play` whose stderr is collected as it arrives (prompts
/// end without a newline, so it is read byte by byte, not by lines).
struct Play {
    child: Child,
    stdin: Option<ChildStdin>,
    stderr: Arc<Mutex<String>>,
}

impl Play {
    fn start(extra: &[&str], env: &[(&str, &str)]) -> Play {
        let mut child = Command::new(GAOS)
            .args(["play", "--game", "conformance/tictactoe", "--driver", "first-legal", "--driver", "first-legal"])
            .args(["--console", "x", "--pace-ms", "500", "--seed", "1", "--json"])
            .args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn gaos play");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock().expect("stderr").push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        let stdin = child.stdin.take();
        Play { child, stdin, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr").clone()
    }

    fn type_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").and_then(|()| stdin.flush()).expect("type a line");
    }

    /// Wait until stderr after byte `from` satisfies `ready`; the text after `from`.
    fn wait_for(&self, from: usize, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = self.stderr();
            let tail = text.get(from..).unwrap_or("");
            if ready(tail) {
                return tail.to_owned();
            }
            assert!(Instant::now() < deadline, "waited a minute for {what}; stderr so far:\n{text}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Play {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `N) ACTION` entries of the last menu in `text`.
fn last_menu(text: &str) -> Vec<(String, String)> {
    let menu = text.rsplit("Legal actions:\n").next().unwrap_or("");
    menu.lines()
        .map_while(|line| line.trim_start().split_once(") ").filter(|(n, _)| n.parse::<u32>().is_ok()))
        .map(|(n, action)| (n.trim().to_owned(), action.to_owned()))
        .collect()
}

/// The canonical commands seat `seat` submitted, in order, read from a replay.
fn seat_commands(replay: &str, seat: &str) -> Vec<String> {
    replay
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["kind"] == "resolution")
        .flat_map(|record| record["inputs"].as_array().cloned().unwrap_or_default())
        .filter(|input| input["seat"] == seat)
        .filter_map(|input| input["canonicalCommand"].as_str().map(str::to_owned))
        .collect()
}

fn play_through_the_console(extra: &[&str], env: &[(&str, &str)]) {
    let dir = TempDir::new("gaos-play-console");
    let replay = dir.path().join("game.gaos-replay.jsonl");
    let replay_arg = replay.to_str().expect("UTF-8 path");
    let mut play = Play::start(&[&["--out", replay_arg], extra].concat(), env);

    play.wait_for(0, "the console's greeting", |t| t.contains("[console] first-legal plays seat x"));
    play.type_line("/guide take the centre");
    let mark = play.wait_for(0, "the guidance in the agent's decision", |t| {
        t.contains("[x] the agent plays {")
            && t.contains("(guidance received (first-legal cannot follow it): take the centre)")
    });
    // Then at once (the agent's decisions are paced 500 ms apart): an
    // unknown command and a stray line, both refused, changing nothing; an
    // interrupt; and the takeover.
    let mark = mark.len();
    play.type_line("/dance");
    play.type_line("e4");
    play.type_line("/interrupt look again");
    play.type_line("/take");
    play.wait_for(mark, "the refusals", |t| {
        t.contains("[console] unknown console command /dance; type /help")
            && t.contains("[console] the agent plays seat x: type /take to play it yourself, or /help")
    });
    play.wait_for(mark, "the interrupt", |t| {
        t.contains("[console] interrupted (unsupported): the driver cannot be interrupted; a decision in flight is asked again")
    });
    let prompt = play.wait_for(mark, "the person's prompt", |t| {
        t.contains("[console] you play seat x now")
            && t.rsplit("Legal actions:\n").next().is_some_and(|m| m.contains("Choose "))
    });
    let menu = last_menu(&prompt);
    assert!(menu.len() > 1, "a choice to make: {prompt}");
    // The last listed move: first-legal would have played the first.
    let (number, chosen) = menu.last().cloned().expect("a move");
    let first_legal = menu[0].1.clone();
    play.type_line(&number);
    play.wait_for(mark, "the person's move", |t| t.contains(&format!("[x] you play {chosen}")));
    play.type_line("/back");
    play.wait_for(mark, "the hand-back", |t| t.contains("[console] first-legal plays seat x again"));
    play.wait_for(mark, "the agent's next move", |t| {
        t.split("[console] first-legal plays seat x again")
            .nth(1)
            .is_some_and(|after| after.contains("[x] the agent plays {"))
    });

    drop(play.stdin.take());

    let mut stdout = String::new();
    play.child.stdout.take().expect("stdout").read_to_string(&mut stdout).expect("read stdout");
    let status = play.child.wait().expect("gaos play ends");
    assert!(status.success(), "gaos play failed:\n{stdout}\n{}", play.stderr());
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(result["outcome"]["status"].as_str().map(|s| s != "playing"), Some(true), "{result}");
    let person = result["personDecisions"]["x"].as_array().expect("the person's decisions").clone();
    assert_eq!(person.len(), 1, "exactly the one move the person made: {result}");
    let at = person[0].as_u64().expect("an index") as usize;

    // The replay re-simulates, and seat x's command at that decision is the person's.
    let verify = Command::new(GAOS).args(["replay", "verify", replay_arg]).output().expect("gaos replay verify");
    assert!(
        verify.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
    let text = std::fs::read_to_string(&replay).expect("the replay");
    let commands = seat_commands(&text, "x");
    assert_eq!(commands.len() as u64, result["steps"]["x"].as_u64().expect("steps"), "{commands:?}");
    assert_eq!(commands[at], chosen, "the person's move at decision {at}: {commands:?}");
    assert_ne!(chosen, first_legal, "a move the agent would not have made");
}

#[test]
fn a_person_guides_takes_over_and_hands_back_an_agent_in_process() {
    play_through_the_console(&[], &[]);
}

#[test]
fn a_person_guides_takes_over_and_hands_back_an_agent_on_a_running_host() {
    let server = TestServer::start(GAOS);
    let token = server.operator_token.clone();
    play_through_the_console(&["--host", &server.base_url], &[("GAOS_OPERATOR_TOKEN", token.as_str())]);
}

#[test]
fn the_console_must_name_an_agent_seat_and_own_the_terminal() {
    let run = |args: &[&str]| {
        let output = Command::new(GAOS)
            .args(["play", "--game", "conformance/tictactoe"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run gaos play");
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (code, stderr) = run(&["--console", "z"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--console z: no such seat (seats: x, o)"), "{stderr}");
    let (code, stderr) = run(&["--driver", "human", "--console", "x"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("a person already plays it"), "{stderr}");
    let (code, stderr) = run(&["--driver", "first-legal", "--driver", "human", "--console", "x"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("seat o cannot be --driver human too"), "{stderr}");
}
