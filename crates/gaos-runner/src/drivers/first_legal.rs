//! `first-legal`: always the first legal action.

use crate::driver::{AgentDriver, Decision, DriverContext};
use crate::error::DriverError;
use gaos_session::BoxFuture;

/// Submits `legal_actions[0]`: the simplest deterministic opponent.
#[derive(Debug, Clone, Default)]
pub struct FirstLegalDriver;

impl FirstLegalDriver {
    /// The driver.
    pub fn new() -> Self {
        FirstLegalDriver
    }
}

impl AgentDriver for FirstLegalDriver {
    fn id(&self) -> &str {
        "first-legal"
    }

    fn label(&self) -> &str {
        "first legal action"
    }

    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        let decision = context.legal_actions.first().cloned().map(Decision::action).ok_or(DriverError::NoLegalActions);
        Box::pin(std::future::ready(decision))
    }
}
