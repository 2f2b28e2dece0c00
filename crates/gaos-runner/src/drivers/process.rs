//! `process`: an agent in any language. The driver starts a program (one
//! process per seat and match, at the seat's first decision) and speaks
//! JSON lines with it over stdin/stdout (docs/process-agents.md):
//!
//! ```text
//! → {"type":"start","game","seat","levelId","level","seed","entrant"}      once
//! → {"type":"decide","seat","observation","legalActions","deadlineMs"}    each decision
//! ← {"command": {...}}  or  {"index": n}                                   one line
//! → {"type":"refused","code","message"}                                   then another decide
//! → {"type":"end","outcome"}                                              then stdin closes
//! ```
//!
//! A line that is not a readable answer is an error of this decision (the
//! next `decide` is preceded by a `refused` with code `unreadable_answer`).
//! No answer within the deadline, an exit or a crash stops the process for
//! good: every later decision fails at once, so a stalled agent costs one
//! deadline, not one per move. What the caller does about a failed
//! decision is its policy (an arena's `illegalMoves`); alone, the failure
//! ends the run like any driver error. stderr goes to a log file when one
//! is given (each line prefixed with the seat), else to this process's
//! stderr.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use gaos_json::{Map, Value, canonical_json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::driver::{AgentDriver, Decision, DriverContext};
use crate::error::{DriverError, SessionError};
use gaos_session::BoxFuture;

/// How long a process may take to answer a decision unless told otherwise.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);

/// The longest answer line read (a longer one stops the process).
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The most stderr kept in the log per process; the rest is read and dropped.
pub const MAX_LOG_BYTES: u64 = 1 << 20;

/// How long a process may take to exit after `end` before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Re-asks per decision after the host refused a move, unless told otherwise.
pub const DEFAULT_REASKS: u32 = 3;

/// What the `start` message tells the program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProcessStart {
    /// The game id.
    pub game: String,
    /// The seat it plays.
    pub seat: String,
    /// The level id.
    pub level_id: String,
    /// The level definition (`null` when unknown).
    pub level: Value,
    /// The session seed.
    pub seed: u32,
    /// Who it plays as (an arena entrant id, or the driver spec).
    pub entrant: String,
}

impl ProcessStart {
    fn message(&self) -> Value {
        let mut map = Map::new();
        map.insert("type".into(), "start".into());
        map.insert("game".into(), self.game.clone().into());
        map.insert("seat".into(), self.seat.clone().into());
        map.insert("levelId".into(), self.level_id.clone().into());
        map.insert("level".into(), self.level.clone());
        map.insert("seed".into(), self.seed.into());
        map.insert("entrant".into(), self.entrant.clone().into());
        Value::Object(map)
    }
}

/// Everything a [`ProcessDriver`] needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessConfig {
    /// The program and its arguments (a relative program path with a `/`
    /// is taken relative to `cwd`).
    pub command: Vec<String>,
    /// The working directory (default: this process's).
    pub cwd: Option<PathBuf>,
    /// How long each decision may take (`deadlineMs` of every `decide`).
    pub deadline: Duration,
    /// What `start` says.
    pub start: ProcessStart,
    /// Append stderr here (each line prefixed `[seat] `); `None`: inherit.
    pub stderr_log: Option<PathBuf>,
    /// Re-asks per decision after the host refused a move.
    pub max_reasks: u32,
}

impl ProcessConfig {
    /// `command` with the defaults: this directory, a 10 s deadline,
    /// stderr inherited, 3 re-asks.
    pub fn new(command: Vec<String>, start: ProcessStart) -> Self {
        ProcessConfig {
            command,
            cwd: None,
            deadline: DEFAULT_DEADLINE,
            start,
            stderr_log: None,
            max_reasks: DEFAULT_REASKS,
        }
    }
}

/// Split a command line the way a shell would for plain words: whitespace
/// separates, `'…'` is literal, `"…"` allows `\"` and `\\`, and `\` quotes
/// the next character elsewhere. No variables, globs or redirections.
pub fn split_command(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => current.push(c),
                        None => return Err(format!("unclosed ' in {text:?}")),
                    }
                }
            }
            '"' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => current.push(c),
                            Some(c) => {
                                current.push('\\');
                                current.push(c);
                            }
                            None => return Err(format!("unclosed \" in {text:?}")),
                        },
                        Some(c) => current.push(c),
                        None => return Err(format!("unclosed \" in {text:?}")),
                    }
                }
            }
            '\\' => {
                let escaped = chars.next().ok_or_else(|| format!("{text:?} ends with a lone \\"))?;
                word.get_or_insert_with(String::new).push(escaped);
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    if words.is_empty() {
        return Err("the command is empty".into());
    }
    Ok(words)
}

/// Appends lines to a log file, each prefixed, up to [`MAX_LOG_BYTES`].
#[derive(Debug, Clone)]
struct Log {
    path: Option<PathBuf>,
    prefix: String,
}

impl Log {
    /// A note of the driver's own (why it stopped the process, …).
    fn note(&self, text: &str) {
        match &self.path {
            Some(path) => append(path, format!("{} gaos: {text}\n", self.prefix).as_bytes()),
            None => eprintln!("{} gaos: {text}", self.prefix),
        }
    }
}

fn append(path: &Path, bytes: &[u8]) {
    // Best effort: a log that cannot be written must not stop the match.
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = file.write_all(bytes);
    }
}

/// Copy `stderr` into the log, line by line with the prefix, until EOF.
async fn copy_stderr(stderr: tokio::process::ChildStderr, log: Log) {
    let Some(path) = log.path.clone() else { return };
    let mut reader = BufReader::new(stderr);
    let mut kept: u64 = 0;
    let mut truncated = false;
    loop {
        match read_line(&mut reader, 64 << 10).await {
            Ok(Line::Text(bytes)) | Ok(Line::TooLong(bytes)) => {
                if truncated {
                    continue;
                }
                let mut line = format!("{} ", log.prefix).into_bytes();
                line.extend_from_slice(&bytes);
                line.push(b'\n');
                if kept + line.len() as u64 > MAX_LOG_BYTES {
                    truncated = true;
                    log.note(&format!("stderr truncated after {MAX_LOG_BYTES} bytes"));
                    continue;
                }
                kept += line.len() as u64;
                let path = path.clone();
                let _ = tokio::task::spawn_blocking(move || append(&path, &line)).await;
            }
            Ok(Line::Eof) | Err(_) => return,
        }
    }
}

/// One line of a child's output.
enum Line {
    Text(Vec<u8>),
    /// The first `limit` bytes of a longer line (the rest is skipped).
    TooLong(Vec<u8>),
    Eof,
}

/// Read one line (without its `\n`) of at most `limit` bytes. A last line
/// without `\n` counts as a line.
async fn read_line(reader: &mut (impl AsyncBufRead + Unpin), limit: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (line.is_empty() && !too_long, too_long) {
                (true, _) => Line::Eof,
                (false, true) => Line::TooLong(line),
                (false, false) => Line::Text(line),
            });
        }
        let (chunk, end) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        let room = limit.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        too_long |= chunk.len() > room;
        let used = end.unwrap_or(available.len());
        reader.consume(used);
        if end.is_some() {
            return Ok(if too_long { Line::TooLong(line) } else { Line::Text(line) });
        }
    }
}

/// A running agent process.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The task copying stderr into the log: awaited at the end, so the log
    /// is whole when the match is over.
    stderr_copy: Option<tokio::task::JoinHandle<()>>,
}

enum State {
    NotStarted,
    Running(Box<Running>),
    /// Stopped for good, and why (every later decision fails with it).
    Stopped(String),
}

/// The `process` driver (see the module docs).
pub struct ProcessDriver {
    config: ProcessConfig,
    label: String,
    state: State,
    log: Log,
    /// A `refused` to send before the next `decide`: `(code, message)`.
    notice: Option<(String, String)>,
    /// The decision re-asks count for, and how many it had.
    reasks: (u64, u32),
}

impl std::fmt::Debug for ProcessDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessDriver").field("command", &self.config.command).finish()
    }
}

impl ProcessDriver {
    /// A driver that will start `config.command` at its first decision.
    pub fn new(config: ProcessConfig) -> Result<Self, DriverError> {
        if config.command.first().is_none_or(|program| program.is_empty()) {
            return Err(DriverError::Config("a process driver needs a command to run".into()));
        }
        let label = format!("process: {}", config.command.join(" "));
        let log = Log { path: config.stderr_log.clone(), prefix: format!("[{}]", config.start.seat) };
        Ok(ProcessDriver { config, label, state: State::NotStarted, log, notice: None, reasks: (u64::MAX, 0) })
    }

    /// The program, resolved against the working directory when it is a
    /// relative path (`./bot.py`), so it does not depend on this process's.
    fn program(&self) -> PathBuf {
        let program = Path::new(&self.config.command[0]);
        match &self.config.cwd {
            Some(cwd) if program.is_relative() && program.components().count() > 1 => cwd.join(program),
            _ => program.to_path_buf(),
        }
    }

    fn spawn(&mut self) -> Result<Box<Running>, String> {
        let mut command = Command::new(self.program());
        command.args(&self.config.command[1..]).stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        if let Some(cwd) = &self.config.cwd {
            command.current_dir(cwd);
        }
        command.stderr(if self.config.stderr_log.is_some() { Stdio::piped() } else { Stdio::inherit() });
        let mut child =
            command.spawn().map_err(|e| format!("cannot start {:?}: {e}", self.config.command.join(" ")))?;
        let stderr_copy = child.stderr.take().map(|stderr| tokio::spawn(copy_stderr(stderr, self.log.clone())));
        let stdin = child.stdin.take().ok_or("the process has no stdin")?;
        let stdout = child.stdout.take().ok_or("the process has no stdout")?;
        Ok(Box::new(Running { child, stdin: Some(stdin), stdout: BufReader::new(stdout), stderr_copy }))
    }

    /// Stop the process for good (killed if it still runs), noting why.
    async fn stop(&mut self, why: String) -> DriverError {
        if let State::Running(running) = &mut self.state {
            let _ = running.child.start_kill();
            let _ = tokio::time::timeout(EXIT_GRACE, running.child.wait()).await;
        }
        self.log.note(&format!("{why}; the process is stopped, its remaining decisions fail"));
        self.state = State::Stopped(why.clone());
        DriverError::Process(why)
    }

    /// How the process ended (it closed stdout or stdin).
    async fn ended(running: &mut Running) -> String {
        match tokio::time::timeout(Duration::from_secs(1), running.child.wait()).await {
            Ok(Ok(status)) => match status.code() {
                Some(code) => format!("the process exited with status {code}"),
                None => format!("the process was ended by a signal ({status})"),
            },
            _ => "the process closed its stdout".to_owned(),
        }
    }

    async fn decide(&mut self, context: DriverContext<'_>) -> Result<Decision, DriverError> {
        if context.step != self.reasks.0 {
            self.reasks = (context.step, 0);
        }
        match &self.state {
            State::Stopped(why) => return Err(DriverError::Process(why.clone())),
            State::NotStarted => match self.spawn() {
                Ok(running) => {
                    self.state = State::Running(running);
                    let start = self.config.start.message();
                    if let Err(why) = self.send(&start).await {
                        return Err(self.stop(why).await);
                    }
                }
                Err(why) => return Err(self.stop(why).await),
            },
            State::Running(_) => {}
        }
        if let Some((code, message)) = self.notice.take() {
            let mut refused = Map::new();
            refused.insert("type".into(), "refused".into());
            refused.insert("code".into(), code.into());
            refused.insert("message".into(), message.into());
            if let Err(why) = self.send(&Value::Object(refused)).await {
                return Err(self.stop(why).await);
            }
        }
        let mut observation = context.observation.clone();
        if let Some(map) = observation.as_object_mut() {
            map.remove("legalActions");
        }
        let deadline_ms = u64::try_from(self.config.deadline.as_millis()).unwrap_or(u64::MAX);
        let mut decide = Map::new();
        decide.insert("type".into(), "decide".into());
        decide.insert("seat".into(), context.seat.into());
        decide.insert("observation".into(), observation);
        decide.insert("legalActions".into(), Value::Array(context.legal_actions.to_vec()));
        decide.insert("deadlineMs".into(), deadline_ms.min((1 << 53) - 1).into());
        let deadline = self.config.deadline;
        let exchange = async {
            self.send(&Value::Object(decide)).await?;
            let State::Running(running) = &mut self.state else { return Err("the process is not running".into()) };
            match read_line(&mut running.stdout, MAX_ANSWER_BYTES).await {
                Ok(Line::Text(bytes)) => Ok(Some(bytes)),
                Ok(Line::TooLong(_)) => Err(format!("it answered a line longer than {MAX_ANSWER_BYTES} bytes")),
                Ok(Line::Eof) => Ok(None),
                Err(e) => Err(format!("cannot read its answer: {e}")),
            }
        };
        let answer = match tokio::time::timeout(deadline, exchange).await {
            Err(_) => return Err(self.stop(format!("no answer within the deadline of {deadline_ms} ms")).await),
            Ok(Err(why)) => return Err(self.stop(why).await),
            Ok(Ok(None)) => {
                let why = match &mut self.state {
                    State::Running(running) => Self::ended(running).await,
                    _ => "the process is not running".to_owned(),
                };
                return Err(self.stop(why).await);
            }
            Ok(Ok(Some(line))) => line,
        };
        match parse_answer(&answer, context.legal_actions) {
            Ok(action) => Ok(Decision::action(action)),
            Err(why) => {
                self.log.note(&format!("unreadable answer: {why}"));
                self.notice = Some(("unreadable_answer".into(), why.clone()));
                Err(DriverError::Process(format!("unreadable answer: {why}")))
            }
        }
    }

    /// Write one message line; `Err` says why the process cannot take it.
    async fn send(&mut self, message: &Value) -> Result<(), String> {
        let State::Running(running) = &mut self.state else { return Err("the process is not running".into()) };
        let mut line = canonical_json(message).into_bytes();
        line.push(b'\n');
        let Some(stdin) = running.stdin.as_mut() else { return Err("its stdin is closed".into()) };
        match stdin.write_all(&line).await {
            Ok(()) => stdin.flush().await.map_err(|e| e.to_string()),
            Err(_) => Err(Self::ended(running).await),
        }
    }
}

/// `{"command": {...}}` → the command; `{"index": n}` → `legal[n]`.
fn parse_answer(line: &[u8], legal: &[Value]) -> Result<Value, String> {
    let text = std::str::from_utf8(line).map_err(|_| "the line is not UTF-8".to_owned())?;
    let shown: String = text.chars().take(120).collect();
    let value = gaos_json::parse(text.trim()).map_err(|e| format!("the line {shown:?} is not JSON ({e})"))?;
    let map = value.as_object().ok_or_else(|| format!("the line {shown:?} is not a JSON object"))?;
    match (map.get("command"), map.get("index")) {
        (Some(command), None) => Ok(command.clone()),
        (None, Some(index)) => {
            let Some(i) = index.as_u64().filter(|_| index.as_f64().is_some_and(|f| f.fract() == 0.0)) else {
                return Err(format!("index must be a non-negative integer, not {index}"));
            };
            usize::try_from(i)
                .ok()
                .and_then(|i| legal.get(i))
                .cloned()
                .ok_or_else(|| format!("index {i} is out of range: there are {} legal actions", legal.len()))
        }
        (Some(_), Some(_)) => Err("the answer has both command and index; send one".into()),
        (None, None) => Err(format!("the line {shown:?} has neither command nor index")),
    }
}

impl AgentDriver for ProcessDriver {
    fn id(&self) -> &str {
        "process"
    }

    fn label(&self) -> &str {
        &self.label
    }

    /// Tell the program its move was refused and ask again (at most
    /// `max_reasks` times per decision, while the process runs).
    fn retry_after_illegal(&mut self, _action: &Value, error: &SessionError) -> bool {
        if !matches!(self.state, State::Running(_)) || self.reasks.1 >= self.config.max_reasks {
            return false;
        }
        self.reasks.1 += 1;
        let code = error.code().map_or("illegal_command", |c| c.as_str()).to_owned();
        let message = match error {
            SessionError::Host { message, .. } => message.clone(),
            other => other.to_string(),
        };
        self.notice = Some((code, message));
        true
    }

    fn end<'a>(&'a mut self, outcome: &'a Value) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if !matches!(self.state, State::Running(_)) {
                return;
            }
            let mut end = Map::new();
            end.insert("type".into(), "end".into());
            end.insert("outcome".into(), outcome.clone());
            let _ = tokio::time::timeout(EXIT_GRACE, self.send(&Value::Object(end))).await;
            if let State::Running(running) = &mut self.state {
                running.stdin = None;
                if tokio::time::timeout(EXIT_GRACE, running.child.wait()).await.is_err() {
                    let _ = running.child.start_kill();
                    let _ = running.child.wait().await;
                }
                // The process is gone: its last stderr lines reach the log
                // before the match counts as over.
                if let Some(copy) = running.stderr_copy.take() {
                    let _ = tokio::time::timeout(EXIT_GRACE, copy).await;
                }
            }
            self.state = State::Stopped("the game is over".into());
        })
    }

    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        Box::pin(self.decide(context))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_like_a_shell_for_plain_words() {
        let split = |text: &str| split_command(text).expect(text);
        assert_eq!(split("python3 bot.py"), ["python3", "bot.py"]);
        assert_eq!(split("  node 'my bot.js'  --fast "), ["node", "my bot.js", "--fast"]);
        assert_eq!(split(r#"sh -c "echo \"hi\" \\ there""#), ["sh", "-c", r#"echo "hi" \ there"#]);
        assert_eq!(split(r"a\ b c"), ["a b", "c"]);
        assert_eq!(split("''"), [""]);
        assert!(split_command("'open").is_err());
        assert!(split_command("   ").is_err());
    }

    #[test]
    fn answers_name_a_command_or_an_index_into_the_legal_actions() {
        let legal = [Value::from("a"), Value::from("b")];
        assert_eq!(parse_answer(br#"{"command":{"card":1}}"#, &legal), Ok(gaos_json::parse(r#"{"card":1}"#).unwrap()));
        assert_eq!(parse_answer(br#" {"index": 1} "#, &legal), Ok(Value::from("b")));
        for (line, words) in [
            (&b"hello"[..], "not JSON"),
            (b"[1]", "not a JSON object"),
            (br#"{"index":2}"#, "out of range"),
            (br#"{"index":-1}"#, "non-negative integer"),
            (br#"{"index":0.5}"#, "non-negative integer"),
            (br#"{"index":0,"command":{}}"#, "both"),
            (br#"{"move":1}"#, "neither"),
            (b"\xff", "UTF-8"),
        ] {
            let error = parse_answer(line, &legal).expect_err("refused");
            assert!(error.contains(words), "{error}");
        }
    }
}
