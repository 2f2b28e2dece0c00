//! [`AgentDriver`]: whatever decides a seat's next command — a person, a
//! model, a script, a random policy. The runner asks it once per decision and
//! submits its action unchanged (the runner never checks legality; the host
//! does).

use gaos_json::{Map, Value};

use crate::error::{DriverError, SessionError};
use gaos_session::BoxFuture;

/// What a driver sees for one decision.
#[derive(Debug, Clone, Copy)]
pub struct DriverContext<'a> {
    /// The seat's observation (`tick` of the envelope: on gaos-host the
    /// seat's view plus `legalActions` and `done`).
    pub observation: &'a Value,
    /// `tick.legalActions` (empty when the host lists none).
    pub legal_actions: &'a [Value],
    /// Decisions made so far in this run (0 for the first).
    pub step: u64,
    /// The session.
    pub session_id: &'a str,
    /// The seat being driven.
    pub seat: &'a str,
    /// `tick.systemActions`: actions outside the game's own (e.g. resign,
    /// offer a draw) the host lists for the seat; empty when it lists none.
    pub system_actions: &'a [Value],
    /// `tick.actionDefinitions`: what the host says each kind of action
    /// means (schemas, descriptions), when it says.
    pub action_definitions: Option<&'a Value>,
    /// The run's system prompt ([`crate::RunOptions::system_prompt`]).
    pub system_prompt: Option<&'a str>,
    /// Guidance from people watching, given since the last decision
    /// ([`crate::RunControl::guide`]), oldest first.
    pub guidance: &'a [String],
}

impl<'a> DriverContext<'a> {
    /// A context with only the observation and the run facts (no system
    /// actions, definitions, system prompt or guidance).
    pub fn new(
        observation: &'a Value,
        legal_actions: &'a [Value],
        step: u64,
        session_id: &'a str,
        seat: &'a str,
    ) -> Self {
        DriverContext {
            observation,
            legal_actions,
            step,
            session_id,
            seat,
            system_actions: &[],
            action_definitions: None,
            system_prompt: None,
            guidance: &[],
        }
    }
}

/// What an interrupt asks of a driver (`interrupt?({prompt?})`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InterruptRequest {
    /// Something to tell the driver with the interrupt (a person's note).
    pub prompt: Option<String>,
}

/// How a driver took an interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InterruptMode {
    /// It stopped and will decide again with its context (plus the prompt).
    Resume,
    /// It stopped and dropped the decision; asked again, it starts that
    /// decision afresh with its earlier context.
    Abort,
    /// It stopped and forgot its context (like `reset`).
    Restart,
    /// It cannot be interrupted (the runner still drops the decision in flight).
    Unsupported,
}

impl InterruptMode {
    /// `resume`, `abort`, `restart`, `unsupported`.
    pub fn as_str(self) -> &'static str {
        match self {
            InterruptMode::Resume => "resume",
            InterruptMode::Abort => "abort",
            InterruptMode::Restart => "restart",
            InterruptMode::Unsupported => "unsupported",
        }
    }
}

/// `{mode, interrupted, preservesContext}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InterruptOutcome {
    /// How the driver took it.
    pub mode: InterruptMode,
    /// Whether a decision was in flight and stopped.
    pub interrupted: bool,
    /// Whether the driver keeps its conversation context.
    pub preserves_context: bool,
}

impl InterruptOutcome {
    /// What a driver without interrupt support answers.
    pub fn unsupported() -> Self {
        InterruptOutcome { mode: InterruptMode::Unsupported, interrupted: false, preserves_context: true }
    }
}

/// What a model call used (summed over re-asks).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// What the provider charged, in its own currency units, when it says
    /// (finite, ≥ 0; e.g. OpenRouter's `usage.cost`).
    pub cost: Option<f64>,
}

impl std::ops::Add for Usage {
    type Output = Usage;

    /// The sum of two usages (tokens saturating; a cost only one side
    /// reports is that side's cost).
    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cost: add_costs(self.cost, other.cost),
        }
    }
}

/// The sum of two optional costs: absent only when both are.
pub(crate) fn add_costs(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (one, None) | (None, one) => one,
    }
}

/// One decision: the command to submit and what the driver says about it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    /// The command, submitted as is.
    pub action: Value,
    /// Why (a model's stated reasoning), when the driver has one.
    pub reasoning: Option<String>,
    /// A message for people watching (chat text, coach note).
    pub message: Option<String>,
    /// Tokens used, for model drivers.
    pub usage: Option<Usage>,
    /// A label for the submission: the runner submits it under the id
    /// `<tag>:<default id>` instead of the default id. Replays keep
    /// submission ids, so a verifier can tell these decisions apart (an
    /// arena marks the moves it played for a seat this way). `None` (the
    /// default) submits under the default id.
    pub submission_tag: Option<String>,
}

impl Decision {
    /// A decision with only an action.
    pub fn action(action: Value) -> Self {
        Decision { action, ..Decision::default() }
    }

    /// The decision as JSON (`{action, reasoning?, message?, usage?: {inputTokens, outputTokens, cost?},
    /// submissionTag?}`),
    /// e.g. for transcripts.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("action".into(), self.action.clone());
        if let Some(reasoning) = &self.reasoning {
            map.insert("reasoning".into(), reasoning.clone().into());
        }
        if let Some(message) = &self.message {
            map.insert("message".into(), message.clone().into());
        }
        if let Some(usage) = self.usage {
            let mut u = Map::new();
            u.insert("inputTokens".into(), usage.input_tokens.into());
            u.insert("outputTokens".into(), usage.output_tokens.into());
            if let Some(cost) = usage.cost {
                u.insert("cost".into(), Value::Number(cost));
            }
            map.insert("usage".into(), Value::Object(u));
        }
        if let Some(tag) = &self.submission_tag {
            map.insert("submissionTag".into(), tag.clone().into());
        }
        Value::Object(map)
    }
}

/// Decides a seat's commands. `act` is async (a model call or a person may
/// take minutes) and its future must be `Send`; the runner drops it when the
/// run is cancelled.
pub trait AgentDriver: Send {
    /// A stable id (e.g. `random`, `openai:gpt-4o-mini`).
    fn id(&self) -> &str;

    /// A human-readable label.
    fn label(&self) -> &str;

    /// The model provider this driver calls (e.g. `openai`), recorded in a
    /// benchmark episode's observations; `None` (the default) for drivers
    /// that call no provider.
    fn provider(&self) -> Option<&str> {
        None
    }

    /// Forget conversation context. `run_session` calls it at the start of
    /// a fresh-per-episode run and at every later episode transition; the
    /// authoritative session is not touched.
    fn reset(&mut self) {}

    /// The seat's session already holds `decisions` commands that this
    /// driver, or the same driver in a process that stopped, decided (a
    /// resumed benchmark episode). Deterministic drivers skip ahead so the
    /// run goes on exactly as if it had never stopped; the default does
    /// nothing (a model starts a fresh conversation, as after any attach).
    fn resume_after(&mut self, decisions: u64) {
        let _ = decisions;
    }

    /// The host refused this driver's last action as illegal (HTTP 422
    /// `illegal_command`); nothing changed in the session. Return true to be
    /// asked again for the same observation (a person who mistyped: the
    /// human driver explains the refusal and re-asks); the default, false,
    /// ends the run with the refusal, so an agent's illegal action stays an
    /// error its caller sees.
    fn retry_after_illegal(&mut self, action: &Value, error: &SessionError) -> bool {
        let _ = (action, error);
        false
    }

    /// Stop the decision in flight (the runner has already dropped its
    /// future when `in_flight`) and say how: resume, abort or restart
    /// (RFC-018 `interrupt?({prompt?})`). The runner interrupts on
    /// [`crate::RunControl::interrupt`] and when a person takes the seat
    /// over. The default keeps everything and answers `unsupported`.
    fn interrupt(&mut self, request: &InterruptRequest, in_flight: bool) -> InterruptOutcome {
        let _ = (request, in_flight);
        InterruptOutcome::unsupported()
    }

    /// The game is over: `outcome` is the seat's last view's `outcome`
    /// (`null` when the view has none). [`crate::run_session`] calls it
    /// once, at the terminal observation, before it finalizes; a driver
    /// that runs a program tells it and lets it exit. The default does
    /// nothing.
    fn end<'a>(&'a mut self, outcome: &'a Value) -> BoxFuture<'a, ()> {
        let _ = outcome;
        Box::pin(std::future::ready(()))
    }

    /// Decide the next command.
    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>>;
}
