//! `gaos play --console SEAT`: the person at the terminal coaches the agent
//! playing SEAT, or takes the seat over, by typing lines on stdin:
//!
//! - `/guide TEXT`: guidance for the agent's next decision;
//! - `/take`: the person plays the seat (the `human` driver's prompt) until
//! - `/back`: the agent plays it again;
//! - `/interrupt [NOTE]`: stop the decision in flight (the driver decides again);
//! - `/help`: these lines.
//!
//! One thread reads stdin for the whole run ([`start`]). A line starting
//! with `/` is a console command, whoever holds the seat (so `/back` works
//! while the person's prompt waits); any other line is the person's answer
//! to that prompt while they hold the seat, and is refused with a hint
//! otherwise. Every command becomes a runner input ([`RunControl`]); the
//! person's moves go through the seat's handle like the agent's.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;

use gaos_json::canonical_json;
use gaos_runner::drivers::HumanDriver;
use gaos_runner::{ControlChange, Controller, Decision, InterruptMode, InterruptOutcome, RunControl, RunEvents};

/// What a console line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConsoleCommand {
    /// `/guide TEXT`.
    Guide(String),
    /// `/take`.
    Take,
    /// `/back`.
    Back,
    /// `/interrupt [NOTE]`.
    Interrupt(Option<String>),
    /// `/help`.
    Help,
}

pub(crate) const HELP: &str = "console commands:
  /guide TEXT       guidance for the agent's next decision
  /take             play the seat yourself (answer its prompts here)
  /back             give the seat back to the agent
  /interrupt [NOTE] stop the agent's decision in flight; it decides again
  /help             this list";

/// Read one line starting with `/` (the text after the command is trimmed).
pub(crate) fn parse_command(line: &str) -> Result<ConsoleCommand, String> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(w, r)| (w, r.trim()));
    let no_argument = |command: ConsoleCommand| {
        if rest.is_empty() { Ok(command) } else { Err(format!("{word} takes no argument; type /help")) }
    };
    match word {
        "/guide" if rest.is_empty() => Err("/guide needs the text: /guide TEXT".into()),
        "/guide" => Ok(ConsoleCommand::Guide(rest.to_owned())),
        "/take" => no_argument(ConsoleCommand::Take),
        "/back" => no_argument(ConsoleCommand::Back),
        "/interrupt" => Ok(ConsoleCommand::Interrupt((!rest.is_empty()).then(|| rest.to_owned()))),
        "/help" => no_argument(ConsoleCommand::Help),
        _ => Err(format!("unknown console command {word}; type /help")),
    }
}

/// The person's answers while they hold the seat: the lines the router
/// forwards, read as a terminal by the `human` driver (end of input once
/// the router lets go of the sender).
struct ForwardedLines {
    lines: mpsc::Receiver<String>,
    pending: Vec<u8>,
    at: usize,
}

impl Read for ForwardedLines {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at >= self.pending.len() {
            match self.lines.recv() {
                Ok(line) => {
                    self.pending = format!("{line}\n").into_bytes();
                    self.at = 0;
                }
                Err(mpsc::RecvError) => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn say(text: &str) {
    eprintln!("[console] {text}");
}

/// Routes console lines: owns who holds the seat as the router sees it.
struct Router {
    seat: String,
    control: RunControl,
    /// The person's line sink while they hold the seat.
    person: Option<mpsc::Sender<String>>,
    /// Sinks of earlier takeovers. Kept, not dropped: dropping one would end
    /// a prompt the runner may not have stopped yet, and the run would take
    /// that end of input for the person's answer. They go with the router.
    retired: Vec<mpsc::Sender<String>>,
}

impl Router {
    fn line(&mut self, line: &str) {
        if !line.trim_start().starts_with('/') {
            match &self.person {
                Some(person) => {
                    let _ = person.send(line.to_owned());
                }
                None if line.trim().is_empty() => {}
                None => say(&format!("the agent plays seat {}: type /take to play it yourself, or /help", self.seat)),
            }
            return;
        }
        match parse_command(line) {
            Err(problem) => say(&problem),
            Ok(ConsoleCommand::Help) => eprintln!("{HELP}"),
            Ok(ConsoleCommand::Guide(text)) => {
                self.control.guide(text.clone());
                say(&format!("guidance for the next decision of seat {}: {text}", self.seat));
            }
            Ok(ConsoleCommand::Interrupt(note)) => {
                self.control.interrupt(note);
            }
            Ok(ConsoleCommand::Take) if self.person.is_some() => say(&format!("you already play seat {}", self.seat)),
            Ok(ConsoleCommand::Take) => {
                let (sender, lines) = mpsc::channel();
                let terminal = BufReader::new(ForwardedLines { lines, pending: Vec::new(), at: 0 });
                self.control.take_over(Box::new(HumanDriver::new(terminal, std::io::stderr())));
                self.person = Some(sender);
            }
            Ok(ConsoleCommand::Back) => self.hand_back("the agent already plays seat"),
        }
    }

    fn hand_back(&mut self, not_held: &str) {
        match self.person.take() {
            Some(sender) => {
                self.control.hand_back();
                self.retired.push(sender);
            }
            None => say(&format!("{not_held} {}", self.seat)),
        }
    }
}

/// Start reading stdin for the console of `seat`; the thread ends at end
/// of input (handing the seat back to the agent if the person held it).
pub(crate) fn start(seat: &str, agent: &str, control: RunControl) {
    let mut router = Router { seat: seat.to_owned(), control, person: None, retired: Vec::new() };
    say(&format!("{agent} plays seat {seat}; type /help for the console commands"));
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { break };
            router.line(&line);
        }
        if router.person.is_some() {
            say("end of input: the agent plays the rest of the game");
            router.hand_back("");
        }
    });
}

/// The console seat's decision log on stderr: who played what, control
/// changes and interrupts.
pub(crate) struct ConsoleLog {
    pub(crate) seat: String,
    pub(crate) person: bool,
}

impl RunEvents for ConsoleLog {
    fn on_decision(&mut self, decision: &Decision) {
        let who = if self.person { "you play" } else { "the agent plays" };
        let message = decision.message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
        eprintln!("[{}] {who} {}{message}", self.seat, canonical_json(&decision.action));
    }

    fn on_control_change(&mut self, change: &ControlChange) {
        match &change.controller {
            Controller::Person { .. } => {
                self.person = true;
                let how =
                    change.interrupt.map(|i| format!(" (agent interrupt: {})", i.mode.as_str())).unwrap_or_default();
                say(&format!("you play seat {} now{how}; /back gives it back", self.seat));
            }
            Controller::Agent { driver } => {
                self.person = false;
                say(&format!("{driver} plays seat {} again", self.seat));
            }
        }
    }

    fn on_interrupted(&mut self, outcome: &InterruptOutcome) {
        let what = match (outcome.mode, outcome.interrupted) {
            (InterruptMode::Unsupported, _) => "the driver cannot be interrupted; a decision in flight is asked again",
            (_, true) => "its decision in flight was stopped",
            (_, false) => "nothing was in flight",
        };
        say(&format!("interrupted ({}): {what}", outcome.mode.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_lines_parse_into_commands_or_say_what_is_wrong() {
        assert_eq!(parse_command("/guide  take the centre "), Ok(ConsoleCommand::Guide("take the centre".into())));
        assert_eq!(parse_command("/take"), Ok(ConsoleCommand::Take));
        assert_eq!(parse_command(" /back "), Ok(ConsoleCommand::Back));
        assert_eq!(parse_command("/interrupt"), Ok(ConsoleCommand::Interrupt(None)));
        assert_eq!(parse_command("/interrupt look again"), Ok(ConsoleCommand::Interrupt(Some("look again".into()))));
        assert_eq!(parse_command("/help"), Ok(ConsoleCommand::Help));
        assert!(parse_command("/guide").is_err_and(|e| e.contains("/guide TEXT")));
        assert!(parse_command("/take now").is_err_and(|e| e.contains("no argument")));
        assert!(parse_command("/dance").is_err_and(|e| e == "unknown console command /dance; type /help"));
    }

    #[test]
    fn forwarded_lines_read_as_a_terminal_until_the_sender_goes() {
        let (sender, lines) = mpsc::channel();
        let mut terminal = BufReader::new(ForwardedLines { lines, pending: Vec::new(), at: 0 });
        sender.send("3".to_owned()).expect("send");
        sender.send("{\"cell\":4}".to_owned()).expect("send");
        drop(sender);
        let mut read = Vec::new();
        let mut line = String::new();
        while terminal.read_line(&mut line).expect("reads") > 0 {
            read.push(std::mem::take(&mut line));
        }
        assert_eq!(read, ["3\n", "{\"cell\":4}\n"]);
    }
}
