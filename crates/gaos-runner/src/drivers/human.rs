//! `human`: a person at a terminal picks each command from the numbered
//! legal actions (or types a JSON command).

use std::io::{BufRead, BufReader, Write};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use gaos_json::{Value, canonical_json};

use crate::driver::{AgentDriver, Decision, DriverContext};
use crate::error::DriverError;
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
}

impl std::fmt::Debug for HumanDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HumanDriver").finish_non_exhaustive()
    }
}

impl HumanDriver {
    /// A driver over this reader (answers) and writer (prompts).
    pub fn new(reader: impl BufRead + Send + 'static, writer: impl Write + Send + 'static) -> Self {
        HumanDriver { terminal: Arc::new(Mutex::new(Terminal { reader: Box::new(reader), writer: Box::new(writer) })) }
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
        HumanDriver { terminal: Arc::clone(terminal) }
    }
}

fn prompt_text(context: &DriverContext<'_>) -> String {
    let mut view = context.observation.clone();
    if let Some(map) = view.as_object_mut() {
        map.remove("legalActions");
    }
    let mut text = format!(
        "\n[{} · seat {} · decision {}]\n{}\n",
        context.session_id,
        context.seat,
        context.step + 1,
        canonical_json(&view)
    );
    if context.legal_actions.is_empty() {
        text.push_str("No legal actions are listed; type a JSON command: ");
    } else {
        text.push_str("Legal actions:\n");
        for (i, action) in context.legal_actions.iter().enumerate() {
            text.push_str(&format!("  {}) {}\n", i + 1, canonical_json(action)));
        }
        text.push_str(&format!("Choose 1-{} (or type a JSON command): ", context.legal_actions.len()));
    }
    text
}

/// Read one answer: a 1-based index into `legal`, or a JSON command.
fn read_choice(terminal: &mut Terminal, prompt: &str, legal: &[Value]) -> Result<Value, DriverError> {
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
            if (1..=legal.len()).contains(&n) {
                return Ok(legal[n - 1].clone());
            }
            let again = format!("{n} is not a listed action; choose 1-{}: ", legal.len());
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

    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let prompt = prompt_text(&context);
        let legal = context.legal_actions.to_vec();
        let terminal = Arc::clone(&self.terminal);
        Box::pin(async move {
            let chosen = tokio::task::spawn_blocking(move || {
                let mut terminal = terminal.lock().unwrap_or_else(PoisonError::into_inner);
                read_choice(&mut terminal, &prompt, &legal)
            })
            .await
            .map_err(|e| DriverError::Input(format!("the terminal thread failed: {e}")))??;
            Ok(Decision::action(chosen))
        })
    }
}
