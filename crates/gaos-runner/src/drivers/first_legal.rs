//! `first-legal`: always the first legal action.

use crate::driver::{AgentDriver, Decision, DriverContext};
use crate::error::DriverError;
use gaos_session::BoxFuture;

/// Submits `legal_actions[0]`: the simplest deterministic opponent. It
/// cannot act on guidance, but says in its decision's message that it got
/// it, so a person coaching it (`gaos play --console`) sees the text arrive.
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
        let message = (!context.guidance.is_empty())
            .then(|| format!("guidance received (first-legal cannot follow it): {}", context.guidance.join(" | ")));
        let decision = context
            .legal_actions
            .first()
            .cloned()
            .map(|action| Decision { message, ..Decision::action(action) })
            .ok_or(DriverError::NoLegalActions);
        Box::pin(std::future::ready(decision))
    }
}
