//! Runner inputs from people (RFC-018 §8: "human actions and Coach guidance
//! are runner inputs"): guidance for the next decision, an interrupt of the
//! decision in flight, and taking a seat over from its agent and handing it
//! back. A [`RunControl`] sends them to one [`crate::run_session`] through
//! its [`RunInputs`]; every action still goes through the handle's `act`.

use tokio::sync::mpsc;

use crate::driver::{AgentDriver, InterruptOutcome, InterruptRequest};

/// One input to a running session.
pub enum RunInput {
    /// Guidance for the driver's next decision ([`crate::DriverContext::guidance`]).
    Guidance(String),
    /// Interrupt the active driver (its decision in flight is dropped) and
    /// ask it again for the same observation.
    Interrupt(InterruptRequest),
    /// A person takes the seat over: the agent is interrupted and this
    /// driver decides until [`RunInput::HandBack`].
    TakeOver(Box<dyn AgentDriver>),
    /// The person hands the seat back to the agent.
    HandBack,
}

impl std::fmt::Debug for RunInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunInput::Guidance(text) => f.debug_tuple("Guidance").field(text).finish(),
            RunInput::Interrupt(request) => f.debug_tuple("Interrupt").field(request).finish(),
            RunInput::TakeOver(person) => f.debug_tuple("TakeOver").field(&person.id()).finish(),
            RunInput::HandBack => f.write_str("HandBack"),
        }
    }
}

/// Sends inputs to one run (cheap to clone; a product's UI holds one).
#[derive(Debug, Clone)]
pub struct RunControl {
    sender: mpsc::UnboundedSender<RunInput>,
}

/// The receiving end a run takes ([`crate::RunOptions::inputs`]).
#[derive(Debug)]
pub struct RunInputs {
    receiver: mpsc::UnboundedReceiver<RunInput>,
}

/// A connected control and input pair.
pub fn run_control() -> (RunControl, RunInputs) {
    let (sender, receiver) = mpsc::unbounded_channel();
    (RunControl { sender }, RunInputs { receiver })
}

impl RunControl {
    /// Send `input`; false once the run has ended.
    pub fn send(&self, input: RunInput) -> bool {
        self.sender.send(input).is_ok()
    }

    /// Guidance for the next decision.
    pub fn guide(&self, text: impl Into<String>) -> bool {
        self.send(RunInput::Guidance(text.into()))
    }

    /// Interrupt the active driver, with an optional prompt.
    pub fn interrupt(&self, prompt: Option<String>) -> bool {
        self.send(RunInput::Interrupt(InterruptRequest { prompt }))
    }

    /// Take the seat over with `person` (e.g. the human driver).
    pub fn take_over(&self, person: Box<dyn AgentDriver>) -> bool {
        self.send(RunInput::TakeOver(person))
    }

    /// Hand the seat back to the agent.
    pub fn hand_back(&self) -> bool {
        self.send(RunInput::HandBack)
    }
}

impl RunInputs {
    /// The next input; never resolves once every control is gone (a run
    /// without inputs simply has none).
    pub(crate) async fn next(&mut self) -> RunInput {
        match self.receiver.recv().await {
            Some(input) => input,
            None => std::future::pending().await,
        }
    }

    /// An input that already arrived, if any.
    pub(crate) fn ready(&mut self) -> Option<RunInput> {
        self.receiver.try_recv().ok()
    }
}

/// Who decides for the seat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Controller {
    /// The run's own driver.
    Agent {
        /// Its id.
        driver: String,
    },
    /// A person who took the seat over.
    Person {
        /// The person's driver id.
        driver: String,
    },
}

/// The seat changed hands ([`crate::RunEvents::on_control_change`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlChange {
    /// Decisions made before the change.
    pub step: u64,
    /// Who decides from now on.
    pub controller: Controller,
    /// How the agent took the interrupt, on a takeover.
    pub interrupt: Option<InterruptOutcome>,
}
