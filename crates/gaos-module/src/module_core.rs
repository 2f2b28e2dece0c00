//! [`ModuleCore`]: the engine side of one module (its identity, its pool of
//! engines and the wording of its failures), shared by the game and every
//! reducer it makes, and [`At`], where one call runs.

use gaos_json::Value;
use gaos_kernel::GameError;

use crate::engine::{Answer, Arg, CallFailure, HostFn};
use crate::pool::Pool;
use crate::realm::RealmKey;
use crate::sources::ModuleIdentity;

/// The engine side of one module, shared by the game and its reducers.
pub(crate) struct ModuleCore {
    pub(crate) identity: ModuleIdentity,
    pub(crate) pool: Pool,
    /// The game id, for messages.
    pub(crate) label: String,
}

impl ModuleCore {
    /// One host call, with limit failures worded for the game author, in
    /// the module instance of `at.realm`; for one level of a verifier
    /// adapter (`at.level`: the level context as JSON text) binding that
    /// level's reducer in the engine first when the engine last served
    /// another level.
    pub(crate) fn call_at(&self, at: At<'_>, function: HostFn, args: &[Arg<'_>]) -> Result<Answer, GameError> {
        self.pool
            .run(|engine| {
                if let Some(context) = at.level
                    && engine.level_key() != Some(context)
                {
                    engine.bind_level(context, "[]")?;
                }
                engine.call(at.realm, function, args)
            })
            .map_err(|failure| self.failure(function, failure))
    }

    /// A mapper's result (`commandToAction`, `timeoutToAction`, `legalActions`).
    pub(crate) fn call_value(&self, at: At<'_>, function: HostFn, args: &[Arg<'_>]) -> Result<Value, GameError> {
        self.call_shaped(at, function, args, |answer| match answer {
            Answer::Value(value) => Ok(value),
            other => Err(other),
        })
    }

    /// A text answer (a refusal reason, a view as JSON text).
    pub(crate) fn call_text(&self, at: At<'_>, function: HostFn, args: &[Arg<'_>]) -> Result<String, GameError> {
        self.call_shaped(at, function, args, |answer| match answer {
            Answer::Text(text) => Ok(text),
            other => Err(other),
        })
    }

    /// A new state and what is derived from it (`init`, `advance`).
    pub(crate) fn call_derived(
        &self,
        at: At<'_>,
        function: HostFn,
        args: &[Arg<'_>],
    ) -> Result<(String, Vec<Result<Value, String>>), GameError> {
        self.call_shaped(at, function, args, |answer| match answer {
            Answer::Derived { state, parts } => Ok((state, parts)),
            other => Err(other),
        })
    }

    /// One host call whose answer must have the shape `pick` takes.
    fn call_shaped<T>(
        &self,
        at: At<'_>,
        function: HostFn,
        args: &[Arg<'_>],
        pick: impl FnOnce(Answer) -> Result<T, Answer>,
    ) -> Result<T, GameError> {
        pick(self.call_at(at, function, args)?).map_err(|other| self.misread(function, &other))
    }

    /// An answer of another shape than the function's: a defect of this
    /// crate (engine and callers disagree), reported instead of a panic.
    fn misread(&self, function: HostFn, answer: &Answer) -> GameError {
        GameError::new(format!(
            "{} of {}: the engine answered {answer:?}, not what this call reads",
            function.export(),
            self.label
        ))
    }

    pub(crate) fn failure(&self, function: HostFn, failure: CallFailure) -> GameError {
        let limits = self.pool.limits();
        GameError::new(match failure {
            CallFailure::Module(message) => message,
            CallFailure::Sandbox(message) => format!("{} of {}: {message}", function.export(), self.label),
            CallFailure::TimeLimit => format!(
                "{} of {} exceeded the {} ms call time limit",
                function.export(),
                self.label,
                limits.call_time_limit.as_millis()
            ),
            CallFailure::MemoryLimit => format!(
                "{} of {} exceeded the {}-byte memory limit of its engine",
                function.export(),
                self.label,
                limits.memory_limit_bytes
            ),
            CallFailure::ValueLimit(what) => format!(
                "{} of {}: {what} is larger than the {}-byte value limit (--module-max-value-bytes); \
                 a value read out of the engine counts every part it shares each time it appears",
                function.export(),
                self.label,
                limits.max_value_bytes
            ),
        })
    }
}

/// Where a call runs: the module instance of a realm, and for a verifier
/// adapter the level whose reducer it calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    pub(crate) realm: RealmKey,
    pub(crate) level: Option<&'a str>,
}

impl At<'_> {
    pub(crate) fn realm(realm: RealmKey) -> At<'static> {
        At { realm, level: None }
    }
}
