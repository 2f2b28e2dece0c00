//! `scripted`: commands from a JSONL file, one per decision.

use std::path::Path;

use gaos_json::Value;

use crate::driver::{AgentDriver, Decision, DriverContext};
use crate::error::DriverError;
use gaos_session::BoxFuture;

/// Submits the script's commands in order, one per decision, whatever the
/// observation; fails with [`DriverError::Exhausted`] when none is left.
/// `reset` does not rewind (the script spans the whole run).
#[derive(Debug, Clone)]
pub struct ScriptedDriver {
    commands: Vec<Value>,
    next: usize,
}

impl ScriptedDriver {
    /// A driver over these commands.
    pub fn new(commands: Vec<Value>) -> Self {
        ScriptedDriver { commands, next: 0 }
    }

    /// Read a JSONL file: one JSON command per non-blank line.
    pub fn from_path(path: &Path) -> Result<Self, DriverError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DriverError::Config(format!("cannot read the script {}: {e}", path.display())))?;
        Self::from_jsonl(&text).map_err(|e| DriverError::Config(format!("{}: {e}", path.display())))
    }

    /// Parse JSONL text: one JSON command per non-blank line.
    pub fn from_jsonl(text: &str) -> Result<Self, String> {
        let mut commands = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let command = gaos_json::parse(line).map_err(|e| format!("line {} is not JSON: {e}", number + 1))?;
            commands.push(command);
        }
        Ok(ScriptedDriver::new(commands))
    }

    /// Commands not yet submitted.
    pub fn remaining(&self) -> usize {
        self.commands.len() - self.next
    }
}

impl AgentDriver for ScriptedDriver {
    fn id(&self) -> &str {
        "scripted"
    }

    fn label(&self) -> &str {
        "scripted commands (JSONL)"
    }

    /// Skip the commands already submitted.
    fn resume_after(&mut self, decisions: u64) {
        let skip = usize::try_from(decisions).unwrap_or(usize::MAX);
        self.next = self.next.saturating_add(skip).min(self.commands.len());
    }

    fn act<'a>(&'a mut self, _context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let decision = match self.commands.get(self.next) {
            Some(command) => {
                self.next += 1;
                Ok(Decision::action(command.clone()))
            }
            None => Err(DriverError::Exhausted { commands: self.commands.len() }),
        };
        Box::pin(std::future::ready(decision))
    }
}
