//! Reducer contracts: what a game implements so the kernel can run it.

use std::any::Any;
use std::sync::Arc;

use gaos_json::Value;

use crate::action::SubmittedAction;
use crate::error::GameError;

/// `replayMetrics(state)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayMetrics {
    pub actions_used: u64,
}

/// A deterministic game reducer (`TickReducer`): one `advance` call resolves
/// one window (or one tick) with its inputs in canonical order.
///
/// Views must be JSON objects of the `SessionView` shape (`status`, optional
/// `stars`, `participation`, `activeSeat`, `outcome`, ...). `view` is the full
/// view; `view_for` is a seat's partition (hidden information removed) and
/// defaults to the full view (perfect information).
pub trait TickReducer: Send + Sync {
    type State: Send;

    fn init(&self, level: &Value, seed: u32) -> Result<Self::State, GameError>;

    /// Resolve one window. Reducers may mutate the state they are given: the
    /// kernel only ever passes an isolated draft (see [`StateIsolation`]).
    fn advance(&self, state: Self::State, inputs: &[SubmittedAction]) -> Result<Self::State, GameError>;

    fn view(&self, state: &Self::State) -> Value;

    fn view_for(&self, state: &Self::State, _seat: &str) -> Value {
        self.view(state)
    }

    /// Whether this reducer partitions views per seat (`viewFor` present).
    fn has_view_for(&self) -> bool {
        false
    }

    /// Why the full view (`seat: None`) or a seat's view of `state` is not
    /// a JSON value, for reducers whose views cross a language boundary
    /// (game modules find `undefined` or a cycle before JSON can carry it).
    /// The kernel refuses such a view as `invalid_view` with this message.
    fn view_problem(&self, _state: &Self::State, _seat: Option<&str>) -> Option<String> {
        None
    }

    fn replay_metrics(&self, _state: &Self::State) -> Option<ReplayMetrics> {
        None
    }

    /// Refuse an action for `seat` (→ `illegal_command`). Runs on live state
    /// read-only; it cannot change it.
    fn validate_command(&self, _state: &Self::State, _seat: &str, _action: &SubmittedAction) -> Result<(), GameError> {
        Ok(())
    }

    /// False for action reducers without `advance`: they cannot resolve an
    /// empty tick, so ticks cadence is refused at construction.
    fn supports_empty_ticks(&self) -> bool {
        true
    }

    /// The state as JSON for a kernel checkpoint (`reducerState`, codec
    /// `gaos.json` 1). `None`: this reducer cannot be checkpointed, and
    /// `SessionKernel::checkpoint` refuses (`unsupported`).
    fn encode_state(&self, _state: &Self::State) -> Option<Value> {
        None
    }

    /// The inverse of [`TickReducer::encode_state`]: `decode(encode(s))` must
    /// behave exactly like `s` (same views, same future transitions).
    fn decode_state(&self, _value: &Value) -> Result<Self::State, GameError> {
        Err(GameError::new("this reducer cannot restore its state from a checkpoint"))
    }
}

impl<T: TickReducer + ?Sized> TickReducer for Arc<T> {
    type State = T::State;
    fn init(&self, level: &Value, seed: u32) -> Result<Self::State, GameError> {
        (**self).init(level, seed)
    }
    fn advance(&self, state: Self::State, inputs: &[SubmittedAction]) -> Result<Self::State, GameError> {
        (**self).advance(state, inputs)
    }
    fn view(&self, state: &Self::State) -> Value {
        (**self).view(state)
    }
    fn view_for(&self, state: &Self::State, seat: &str) -> Value {
        (**self).view_for(state, seat)
    }
    fn has_view_for(&self) -> bool {
        (**self).has_view_for()
    }
    fn view_problem(&self, state: &Self::State, seat: Option<&str>) -> Option<String> {
        (**self).view_problem(state, seat)
    }
    fn replay_metrics(&self, state: &Self::State) -> Option<ReplayMetrics> {
        (**self).replay_metrics(state)
    }
    fn validate_command(&self, state: &Self::State, seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        (**self).validate_command(state, seat, action)
    }
    fn supports_empty_ticks(&self) -> bool {
        (**self).supports_empty_ticks()
    }
    fn encode_state(&self, state: &Self::State) -> Option<Value> {
        (**self).encode_state(state)
    }
    fn decode_state(&self, value: &Value) -> Result<Self::State, GameError> {
        (**self).decode_state(value)
    }
}

/// The action-reducer compatibility path (`ActionReducer`): `apply` for a
/// single input, optional `apply_intents` for a simultaneous batch.
pub trait ActionReducer: Send + Sync {
    type State: Send;
    fn init(&self, level: &Value, seed: u32) -> Result<Self::State, GameError>;
    fn apply(&self, state: Self::State, action: &SubmittedAction) -> Result<Self::State, GameError>;
    /// `None` when the reducer cannot resolve several inputs atomically.
    fn apply_intents(
        &self,
        _state: Self::State,
        _actions: &[SubmittedAction],
    ) -> Option<Result<Self::State, GameError>> {
        None
    }
    fn view(&self, state: &Self::State) -> Value;
    fn view_for(&self, state: &Self::State, _seat: &str) -> Value {
        self.view(state)
    }
    fn has_view_for(&self) -> bool {
        false
    }
    fn replay_metrics(&self, _state: &Self::State) -> Option<ReplayMetrics> {
        None
    }
    fn validate_command(&self, _state: &Self::State, _seat: &str, _action: &SubmittedAction) -> Result<(), GameError> {
        Ok(())
    }
    /// See [`TickReducer::encode_state`].
    fn encode_state(&self, _state: &Self::State) -> Option<Value> {
        None
    }
    /// See [`TickReducer::decode_state`].
    fn decode_state(&self, _value: &Value) -> Result<Self::State, GameError> {
        Err(GameError::new("this reducer cannot restore its state from a checkpoint"))
    }
}

/// Runs an [`ActionReducer`] as a [`TickReducer`] with the reference dispatch
/// (`advanceTick`): one input → `apply`, several → `apply_intents` (error if
/// absent), none → error.
#[derive(Debug, Clone)]
pub struct ActionReducerAdapter<R>(pub R);

impl<R: ActionReducer> TickReducer for ActionReducerAdapter<R> {
    type State = R::State;
    fn init(&self, level: &Value, seed: u32) -> Result<Self::State, GameError> {
        self.0.init(level, seed)
    }
    fn advance(&self, state: Self::State, inputs: &[SubmittedAction]) -> Result<Self::State, GameError> {
        match inputs {
            [] => Err(GameError::new("action reducers cannot advance an empty tick")),
            [one] => self.0.apply(state, one),
            many => self
                .0
                .apply_intents(state, many)
                .unwrap_or_else(|| Err(GameError::new("multi-input ticks require applyIntents or a TickReducer"))),
        }
    }
    fn view(&self, state: &Self::State) -> Value {
        self.0.view(state)
    }
    fn view_for(&self, state: &Self::State, seat: &str) -> Value {
        self.0.view_for(state, seat)
    }
    fn has_view_for(&self) -> bool {
        self.0.has_view_for()
    }
    fn replay_metrics(&self, state: &Self::State) -> Option<ReplayMetrics> {
        self.0.replay_metrics(state)
    }
    fn validate_command(&self, state: &Self::State, seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        self.0.validate_command(state, seat, action)
    }
    fn supports_empty_ticks(&self) -> bool {
        false
    }
    fn encode_state(&self, state: &Self::State) -> Option<Value> {
        self.0.encode_state(state)
    }
    fn decode_state(&self, value: &Value) -> Result<Self::State, GameError> {
        self.0.decode_state(value)
    }
}

/// How the kernel isolates prepared drafts from live state (`SessionStateIsolation`).
///
/// `fork` must return a draft whose mutation cannot affect `state` (or any
/// view derived from it). `discard` cleans up a draft that was never published
/// (abort, stale commit); `retire` cleans up the previous live state after a
/// commit published a new one. The kernel calls each exactly once per draft.
pub trait StateIsolation<S>: Send + Sync {
    fn fork(&self, state: &S) -> S;
    fn discard(&self, _draft: S) {}
    fn retire(&self, _previous: S) {}
}

/// The default isolation: `Clone` (the reference uses `structuredClone`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CloneIsolation;

impl<S: Clone> StateIsolation<S> for CloneIsolation {
    fn fork(&self, state: &S) -> S {
        state.clone()
    }
}

/// Reducer state behind a type-erased [`DynReducer`].
pub struct AnyState(Box<dyn CloneAny>);

trait CloneAny: Any + Send {
    fn clone_box(&self) -> Box<dyn CloneAny>;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Any + Send + Clone> CloneAny for T {
    fn clone_box(&self) -> Box<dyn CloneAny> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

impl Clone for AnyState {
    fn clone(&self) -> Self {
        AnyState(self.0.clone_box())
    }
}

impl std::fmt::Debug for AnyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnyState")
    }
}

impl AnyState {
    pub fn new<T: Any + Send + Clone>(state: T) -> Self {
        AnyState(Box::new(state))
    }

    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        (*self.0).as_any().downcast_ref()
    }

    pub fn downcast<T: Any>(self) -> Result<T, AnyState> {
        if (*self.0).as_any().is::<T>() {
            Ok(*self.0.into_any().downcast::<T>().expect("type checked above"))
        } else {
            Err(self)
        }
    }
}

/// A reducer with its state type erased, so kernels of different games share
/// one type (`SessionKernel<DynReducer>`).
pub type DynReducer = Arc<dyn TickReducer<State = AnyState>>;

struct Erased<R>(R);

fn wrong_state() -> GameError {
    GameError::new("reducer received the state of another game")
}

impl<R> TickReducer for Erased<R>
where
    R: TickReducer,
    R::State: Any + Clone,
{
    type State = AnyState;
    fn init(&self, level: &Value, seed: u32) -> Result<AnyState, GameError> {
        self.0.init(level, seed).map(AnyState::new)
    }
    fn advance(&self, state: AnyState, inputs: &[SubmittedAction]) -> Result<AnyState, GameError> {
        let state = state.downcast::<R::State>().map_err(|_| wrong_state())?;
        self.0.advance(state, inputs).map(AnyState::new)
    }
    fn view(&self, state: &AnyState) -> Value {
        match state.downcast_ref::<R::State>() {
            Some(s) => self.0.view(s),
            None => Value::Null,
        }
    }
    fn view_for(&self, state: &AnyState, seat: &str) -> Value {
        match state.downcast_ref::<R::State>() {
            Some(s) => self.0.view_for(s, seat),
            None => Value::Null,
        }
    }
    fn has_view_for(&self) -> bool {
        self.0.has_view_for()
    }
    fn view_problem(&self, state: &AnyState, seat: Option<&str>) -> Option<String> {
        state.downcast_ref::<R::State>().and_then(|s| self.0.view_problem(s, seat))
    }
    fn replay_metrics(&self, state: &AnyState) -> Option<ReplayMetrics> {
        state.downcast_ref::<R::State>().and_then(|s| self.0.replay_metrics(s))
    }
    fn validate_command(&self, state: &AnyState, seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        let s = state.downcast_ref::<R::State>().ok_or_else(wrong_state)?;
        self.0.validate_command(s, seat, action)
    }
    fn supports_empty_ticks(&self) -> bool {
        self.0.supports_empty_ticks()
    }
    fn encode_state(&self, state: &AnyState) -> Option<Value> {
        state.downcast_ref::<R::State>().and_then(|s| self.0.encode_state(s))
    }
    fn decode_state(&self, value: &Value) -> Result<AnyState, GameError> {
        self.0.decode_state(value).map(AnyState::new)
    }
}

/// Erase a reducer's state type.
pub fn erase_reducer<R>(reducer: R) -> DynReducer
where
    R: TickReducer + 'static,
    R::State: Any + Clone,
{
    Arc::new(Erased(reducer))
}
