//! `human`: a person at a terminal picks each command from the numbered
//! legal actions (or types a JSON command). The prompt shows what changed
//! since the seat's last move, the view as `key: value` lines
//! ([`crate::drivers::human_view`]) and a menu numbered the same from turn
//! to turn; a command the game refuses is explained and asked again.

use std::io::{BufRead, BufReader, Write};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use gaos_json::{Value, canonical_json};

use crate::driver::{AgentDriver, Decision, DriverContext};
use crate::drivers::human_view;
use crate::error::{DriverError, SessionError};
use gaos_session::BoxFuture;

/// Unreadable answers tolerated for one decision before giving up.
pub const MAX_PROMPT_ATTEMPTS: u32 = 20;

struct Terminal {
    reader: Box<dyn BufRead + Send>,
    writer: Box<dyn Write + Send>,
}

/// Prompts on a writer and reads answers from a reader: a number picks that
/// legal action (1-based), a line of JSON is submitted as the command. The
/// terminal is used from a blocking thread, so a waiting person never stalls
/// the async runtime. Several human seats on one terminal take turns.
///
/// ```
/// use gaos_runner::drivers::HumanDriver;
///
/// // Tests inject the terminal: answer "2" to the first prompt.
/// let driver = HumanDriver::new(std::io::Cursor::new(b"2\n".to_vec()), std::io::sink());
/// # let _ = driver;
/// ```
pub struct HumanDriver {
    terminal: Arc<Mutex<Terminal>>,
    memory: Memory,
}

impl std::fmt::Debug for HumanDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HumanDriver").finish_non_exhaustive()
    }
}

impl HumanDriver {
    /// A driver over this reader (answers) and writer (prompts).
    pub fn new(reader: impl BufRead + Send + 'static, writer: impl Write + Send + 'static) -> Self {
        HumanDriver {
            terminal: Arc::new(Mutex::new(Terminal { reader: Box::new(reader), writer: Box::new(writer) })),
            memory: Memory::default(),
        }
    }

    /// A driver on the process's stdin (answers) and stderr (prompts, so
    /// stdout stays clean for results). All stdio drivers share one terminal.
    pub fn stdio() -> Self {
        static STDIO: OnceLock<Arc<Mutex<Terminal>>> = OnceLock::new();
        let terminal = STDIO.get_or_init(|| {
            Arc::new(Mutex::new(Terminal {
                reader: Box::new(BufReader::new(std::io::stdin())),
                writer: Box::new(std::io::stderr()),
            }))
        });
        HumanDriver { terminal: Arc::clone(terminal), memory: Memory::default() }
    }
}

/// Numbers the legal actions for a person: an action keeps the number it
/// got when first listed, so the menu reads the same from turn to turn as
/// far as the game allows (a taken square's number is simply missing).
#[derive(Debug, Default)]
struct Menu {
    /// Canonical JSON of every action listed so far, numbered from 1 in order.
    seen: Vec<String>,
}

impl Menu {
    /// `(number, action)` for each legal action, by number.
    fn number(&mut self, legal: &[Value]) -> Vec<(usize, Value)> {
        let mut entries: Vec<(usize, Value)> = legal
            .iter()
            .map(|action| {
                let key = canonical_json(action);
                let index = match self.seen.iter().position(|k| *k == key) {
                    Some(index) => index,
                    None => {
                        self.seen.push(key);
                        self.seen.len() - 1
                    }
                };
                (index + 1, action.clone())
            })
            .collect();
        entries.sort_by_key(|(n, _)| *n);
        entries
    }
}

/// The seat's driver-side memory between prompts.
#[derive(Debug, Default)]
struct Memory {
    menu: Menu,
    /// The view at the seat's last prompt, to announce what changed since.
    last_view: Option<Value>,
}

fn view_of(observation: &Value) -> Value {
    let mut view = observation.clone();
    if let Some(map) = view.as_object_mut() {
        map.remove("legalActions");
    }
    view
}

fn prompt_text(context: &DriverContext<'_>, memory: &Memory, menu: &[(usize, Value)]) -> String {
    let view = view_of(context.observation);
    let mut text = format!("\n[{} · seat {} · decision {}]\n", context.session_id, context.seat, context.step + 1);
    if let Some(before) = &memory.last_view {
        let changes = human_view::describe_changes(before, &view, context.seat);
        if !changes.is_empty() {
            text.push_str("Since your last move:\n");
            for change in changes {
                text.push_str(&format!("  * {change}\n"));
            }
        }
    }
    text.push_str(&human_view::render_view(&view, context.seat));
    if menu.is_empty() {
        text.push_str("No legal actions are listed; type a JSON command: ");
    } else {
        text.push_str("Legal actions:\n");
        for (n, action) in menu {
            text.push_str(&format!("  {n}) {}\n", canonical_json(action)));
        }
        text.push_str(&format!("Choose {} (or type a JSON command): ", choices(menu)));
    }
    text
}

/// `1-3`, or `1, 3, 4` when the numbers have gaps.
fn choices(menu: &[(usize, Value)]) -> String {
    let numbers: Vec<usize> = menu.iter().map(|(n, _)| *n).collect();
    match (numbers.first(), numbers.last()) {
        (Some(first), Some(last)) if last - first + 1 == numbers.len() && first != last => format!("{first}-{last}"),
        _ => numbers.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
    }
}

/// Read one answer: the number of a listed action, or a JSON command.
fn read_choice(terminal: &mut Terminal, prompt: &str, menu: &[(usize, Value)]) -> Result<Value, DriverError> {
    let io = |e: std::io::Error| DriverError::Input(format!("the terminal failed: {e}"));
    terminal.writer.write_all(prompt.as_bytes()).map_err(io)?;
    terminal.writer.flush().map_err(io)?;
    for _ in 0..MAX_PROMPT_ATTEMPTS {
        let mut line = String::new();
        if terminal.reader.read_line(&mut line).map_err(io)? == 0 {
            return Err(DriverError::Input("the terminal closed (end of input) before a choice was made".into()));
        }
        let answer = line.trim();
        if let Ok(n) = answer.parse::<usize>() {
            if let Some((_, action)) = menu.iter().find(|(number, _)| *number == n) {
                return Ok(action.clone());
            }
            let again = format!("{n} is not a listed action; choose {}: ", choices(menu));
            terminal.writer.write_all(again.as_bytes()).map_err(io)?;
        } else if let Ok(command) = gaos_json::parse(answer) {
            return Ok(command);
        } else {
            terminal.writer.write_all(b"Type the number of an action, or a JSON command: ").map_err(io)?;
        }
        terminal.writer.flush().map_err(io)?;
    }
    Err(DriverError::Input(format!("no usable answer after {MAX_PROMPT_ATTEMPTS} tries")))
}

impl AgentDriver for HumanDriver {
    fn id(&self) -> &str {
        "human"
    }

    fn label(&self) -> &str {
        "a person at the terminal"
    }

    /// A person who mistyped gets the host's reason and the same choice again.
    fn retry_after_illegal(&mut self, action: &Value, error: &SessionError) -> bool {
        let reason = match error {
            SessionError::Host { message, .. } => message.clone(),
            other => other.to_string(),
        };
        let note =
            format!("\nNot accepted: {} ({reason}). Nothing was played; choose again.\n", canonical_json(action));
        let mut terminal = self.terminal.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = terminal.writer.write_all(note.as_bytes()).and_then(|()| terminal.writer.flush());
        true
    }

    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let menu = self.memory.menu.number(context.legal_actions);
        let prompt = prompt_text(&context, &self.memory, &menu);
        self.memory.last_view = Some(view_of(context.observation));
        let terminal = Arc::clone(&self.terminal);
        Box::pin(async move {
            let chosen = tokio::task::spawn_blocking(move || {
                let mut terminal = terminal.lock().unwrap_or_else(PoisonError::into_inner);
                read_choice(&mut terminal, &prompt, &menu)
            })
            .await
            .map_err(|e| DriverError::Input(format!("the terminal thread failed: {e}")))??;
            Ok(Decision::action(chosen))
        })
    }
}
