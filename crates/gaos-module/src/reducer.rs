//! [`ModuleReducer`]: the module's reducer behind [`gaos_kernel::TickReducer`].
//!
//! A state is the module's own JSON text (so cloning is an `Arc` bump, the
//! key order the reducer produced is kept, and no engine holds it), plus
//! what the kernel derives from every state, computed in the same engine
//! call that produced it: the full view, `replayMetrics` and each declared
//! seat's `viewFor`. One call per transition instead of one per seat, and a
//! view that is not JSON fails the call that produced the state, naming the
//! export.

use std::sync::Arc;

use gaos_json::Value;
use gaos_kernel::{GameError, ReplayMetrics, SubmittedAction, TickReducer};

use crate::engine::{Arg, HostFn, read_view};
use crate::module_core::{At, ModuleCore};
use crate::realm::RealmKey;

/// Which optional reducer functions the module has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ReducerMeta {
    /// `advance` present (TickReducer); otherwise `apply` (ActionReducer).
    pub(crate) tick_shape: bool,
    pub(crate) has_view_for: bool,
    pub(crate) has_validate_command: bool,
    pub(crate) has_replay_metrics: bool,
}

impl ReducerMeta {
    pub(crate) fn parse(value: &Value) -> ReducerMeta {
        let flag = |key: &str| value.get(key).and_then(Value::as_bool).unwrap_or(false);
        ReducerMeta {
            tick_shape: value.get("shape").and_then(Value::as_str) == Some("tick"),
            has_view_for: flag("hasViewFor"),
            has_validate_command: flag("hasValidateCommand"),
            has_replay_metrics: flag("hasReplayMetrics"),
        }
    }
}

/// A module reducer's state (see the module docs).
#[derive(Debug, Clone)]
pub struct ModuleState(Arc<StateInner>);

#[derive(Debug)]
struct StateInner {
    text: Box<str>,
    /// `Err`: why the view is not a JSON value (the kernel's `invalid_view`).
    view: Result<Value, String>,
    metrics: Result<Option<u64>, String>,
    /// `viewFor(state, seat)` per seat of `ModuleReducer::seats` (empty
    /// without `viewFor`).
    seat_views: Vec<Result<Value, String>>,
}

impl ModuleState {
    /// The state as the module's JSON text.
    pub fn json(&self) -> &str {
        &self.0.text
    }
}

pub(crate) struct ModuleReducer {
    core: Arc<ModuleCore>,
    meta: ReducerMeta,
    /// The seats whose views are derived with every state.
    seats: Vec<String>,
    /// The module instance its calls run in (`realm.rs`).
    realm: RealmKey,
    /// For a verifier adapter: the level context the reducer belongs to.
    level: Option<Arc<str>>,
}

impl ModuleReducer {
    pub(crate) fn new(
        core: Arc<ModuleCore>,
        meta: ReducerMeta,
        seats: Vec<String>,
        realm: RealmKey,
        level: Option<Arc<str>>,
    ) -> ModuleReducer {
        ModuleReducer { core, meta, seats, realm, level }
    }

    /// Where its calls run.
    fn at(&self) -> At<'_> {
        At { realm: self.realm, level: self.level.as_deref() }
    }

    /// A state and its derived parts as the engine answered them: view,
    /// replayMetrics (null without one), then viewFor per declared seat.
    fn derived(
        &self,
        function: HostFn,
        state: String,
        parts: Vec<Result<Value, String>>,
    ) -> Result<ModuleState, GameError> {
        let bad = |what: &str| GameError::new(format!("{} of {}: {what}", function.export(), self.core.label));
        let mut parts = parts.into_iter();
        let view = parts.next().ok_or_else(|| bad("no view came back"))?;
        let metrics = match parts.next().ok_or_else(|| bad("no replayMetrics came back"))? {
            Ok(Value::Null) => Ok(None),
            Ok(metrics) => self.actions_used(&metrics).map(Some),
            Err(problem) => Err(problem),
        };
        let seat_views: Vec<Result<Value, String>> = parts.collect();
        if self.meta.has_view_for && seat_views.len() != self.seats.len() {
            return Err(bad("a view per seat did not come back"));
        }
        Ok(ModuleState(Arc::new(StateInner { text: state.into(), view, metrics, seat_views })))
    }

    fn actions_used(&self, metrics: &Value) -> Result<u64, String> {
        metrics
            .get("actionsUsed")
            .and_then(Value::as_f64)
            .filter(|x| gaos_json::is_safe_integer(*x) && *x >= 0.0)
            .map(|x| x as u64)
            .ok_or_else(|| {
                format!(
                    "replayMetrics(state) of {}: actionsUsed must be a non-negative safe integer, in {metrics}",
                    self.core.label
                )
            })
    }
}

impl ModuleReducer {
    fn seat_view(&self, state: &ModuleState, seat: &str) -> Result<Value, String> {
        if !self.meta.has_view_for {
            return state.0.view.clone();
        }
        if let Some(i) = self.seats.iter().position(|s| s == seat) {
            return state.0.seat_views[i].clone();
        }
        // A seat the module does not declare (a host may declare others).
        let text = self
            .core
            .call_text(self.at(), HostFn::ViewFor, &[Arg::Text(state.json()), Arg::Text(seat)])
            .map_err(|e| e.message)?;
        read_view(&text)
    }
}

fn actions_json(actions: &[SubmittedAction]) -> String {
    let mut out = String::from("[");
    for (i, action) in actions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&action.to_value().to_string());
    }
    out.push(']');
    out
}

impl TickReducer for ModuleReducer {
    type State = ModuleState;

    fn init(&self, level: &Value, seed: u32) -> Result<ModuleState, GameError> {
        let level = level.to_string();
        let (state, parts) =
            self.core.call_derived(self.at(), HostFn::Init, &[Arg::Text(&level), Arg::Number(f64::from(seed))])?;
        self.derived(HostFn::Init, state, parts)
    }

    fn advance(&self, state: ModuleState, inputs: &[SubmittedAction]) -> Result<ModuleState, GameError> {
        let inputs = actions_json(inputs);
        let (next, parts) =
            self.core.call_derived(self.at(), HostFn::Advance, &[Arg::Text(state.json()), Arg::Text(&inputs)])?;
        self.derived(HostFn::Advance, next, parts)
    }

    fn view(&self, state: &ModuleState) -> Value {
        // A view that is not JSON is refused through `view_problem` first.
        state.0.view.clone().unwrap_or(Value::Null)
    }

    fn view_for(&self, state: &ModuleState, seat: &str) -> Value {
        self.seat_view(state, seat).unwrap_or(Value::Null)
    }

    fn has_view_for(&self) -> bool {
        self.meta.has_view_for
    }

    fn view_problem(&self, state: &ModuleState, seat: Option<&str>) -> Option<String> {
        match seat {
            None => state.0.view.as_ref().err().or(state.0.metrics.as_ref().err()).cloned(),
            Some(_) if !self.meta.has_view_for => state.0.view.as_ref().err().cloned(),
            Some(seat) => match self.seats.iter().position(|s| s == seat) {
                Some(i) => state.0.seat_views[i].as_ref().err().cloned(),
                None => self.seat_view(state, seat).err(),
            },
        }
    }

    fn replay_metrics(&self, state: &ModuleState) -> Option<ReplayMetrics> {
        state.0.metrics.clone().ok().flatten().map(|actions_used| ReplayMetrics { actions_used })
    }

    fn validate_command(&self, state: &ModuleState, seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        if !self.meta.has_validate_command {
            return Ok(());
        }
        let action = action.to_value().to_string();
        let refusal = self.core.call_text(
            self.at(),
            HostFn::Validate,
            &[Arg::Text(state.json()), Arg::Text(seat), Arg::Text(&action)],
        )?;
        if refusal.is_empty() { Ok(()) } else { Err(GameError::new(refusal)) }
    }

    fn supports_empty_ticks(&self) -> bool {
        self.meta.tick_shape
    }

    /// A module's state is checkpointed as its own JSON text, held in a
    /// JSON string: as a parsed value its keys would come back in canonical
    /// order, and a module that iterates its own objects (`Object.keys`,
    /// `for…in`) would then behave differently after a restore.
    fn encode_state(&self, state: &ModuleState) -> Option<Value> {
        Some(Value::String(state.json().to_owned()))
    }

    fn decode_state(&self, value: &Value) -> Result<ModuleState, GameError> {
        let Value::String(text) = value else {
            return Err(GameError::new(format!(
                "a checkpointed state of {} must be the module's JSON text (a string), not {}",
                self.core.label,
                value.type_name()
            )));
        };
        let (restored, parts) = self.core.call_derived(self.at(), HostFn::Derive, &[Arg::Text(text)])?;
        if restored != *text {
            return Err(GameError::new(format!(
                "the checkpointed state of {} does not survive JSON.parse and JSON.stringify unchanged",
                self.core.label
            )));
        }
        self.derived(HostFn::Derive, restored, parts)
    }
}
