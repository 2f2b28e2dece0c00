//! A person plays `gaos play` in a real terminal (issue 16): the test runs
//! it in a tmux pane with a human seat against `first-legal`, types keys and
//! reads the pane back. A mistyped (illegal) move must be explained and
//! asked again, not end the match; the other seat's move and the round's
//! result must be announced; the match then ends with a replay.
//!
//! Needs `tmux` (`apt-get install tmux`; `.ci/run` installs it). A missing
//! tmux is a failure that says so, never a skip. Every wait is bounded.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use gaos_testkit::server::TempDir;

/// How long one expected text may take to appear in the pane.
const WAIT: Duration = Duration::from_secs(30);

/// A tmux server of its own (`-L`), killed on drop with everything in it.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("tmux {args:?} could not run ({e}); install tmux: apt-get install tmux"));
        assert!(output.status.success(), "tmux {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
        output
    }

    /// The pane's whole text, wrapped lines joined.
    fn pane(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "play"]).stdout).into_owned()
    }

    /// Type `text` literally, then Enter.
    fn type_line(&self, text: &str) {
        self.run(&["send-keys", "-t", "play", "-l", text]);
        self.run(&["send-keys", "-t", "play", "Enter"]);
    }

    /// Wait (bounded) until `ready` holds for the pane's text; return it.
    fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let pane = self.pane();
            if ready(&pane) {
                return pane;
            }
            if Instant::now() > deadline {
                panic!("the pane did not show {what} within {WAIT:?}:\n{pane}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).output();
    }
}

#[test]
fn a_person_in_a_terminal_is_asked_again_after_an_illegal_move_and_told_the_other_seats_move() {
    let version = Command::new("tmux").arg("-V").output();
    assert!(
        version.as_ref().is_ok_and(|o| o.status.success()),
        "this test needs tmux on the PATH (apt-get install tmux): {version:?}"
    );
    let dir = TempDir::new("gaos-tmux-play");
    let replay = dir.path().join("match.gaos-replay.jsonl");
    let gaos = Path::new(env!("CARGO_BIN_EXE_gaos"));
    // The pane stays open after gaos exits (the sleep), so its last lines can be read.
    let command = format!(
        "'{}' play --game conformance/hilo --seed 1 --seat alice --driver human --seat bob --driver first-legal \
         --out '{}'; echo \"gaos play exited $?\"; sleep 60",
        gaos.display(),
        replay.display()
    );
    let tmux = Tmux { socket: format!("gaos-test-{}", std::process::id()) };
    tmux.run(&["new-session", "-d", "-s", "play", "-x", "200", "-y", "60", &command]);

    let first = tmux.wait_for("the first prompt", |p| p.contains("Choose 1-3"));
    assert!(first.contains("seat alice · decision 1]") && first.contains("  hand: "), "{first}");
    assert!(!first.contains("\"legalActions\""), "the view is rendered for a person, not raw JSON:\n{first}");

    // An illegal move (alice holds three cards): explained, nothing played, asked again.
    tmux.type_line(r#"{"card":7}"#);
    let refused = tmux.wait_for("the refusal and the second prompt", |p| {
        p.contains("Not accepted") && p.matches("seat alice · decision 1]").count() == 2 && p.ends_with_prompt()
    });
    assert!(refused.contains(r#"Not accepted: {"card":7}"#), "{refused}");
    assert!(!refused.contains("gaos play exited"), "the match must go on:\n{refused}");

    // A legal move: the next prompt announces bob's card and the round's winner.
    tmux.type_line("1");
    let second = tmux.wait_for("the second decision", |p| p.contains("decision 2]") && p.ends_with_prompt());
    let announced = &second[second.find("decision 2]").expect("second prompt")..];
    assert!(announced.contains("Since your last move:"), "{announced}");
    let round = announced.lines().find(|l| l.contains("* history: you ")).unwrap_or_else(|| panic!("{announced}"));
    assert!(round.contains(", bob ") && round.contains("winner"), "the other seat's card and the winner: {round}");

    // Play out the match: it ends normally with a replay.
    tmux.type_line("1");
    tmux.wait_for("the third decision", |p| p.contains("decision 3]") && p.ends_with_prompt());
    tmux.type_line("1");
    let end = tmux.wait_for("the end of the match", |p| p.contains("gaos play exited"));
    assert!(end.contains("game over") && end.contains("gaos play exited 0"), "{end}");
    assert!(replay.is_file(), "the replay was written:\n{end}");
}

/// The pane's last non-blank line is a prompt waiting for input.
trait EndsWithPrompt {
    fn ends_with_prompt(&self) -> bool;
}

impl EndsWithPrompt for str {
    fn ends_with_prompt(&self) -> bool {
        self.lines().rev().find(|l| !l.trim().is_empty()).is_some_and(|l| l.contains("(or type a JSON command):"))
    }
}
