//! Timeouts (kernel spec §4.10): a recorded system input resolves the open
//! window.

use gaos_json::{Value, canonical_json};

use super::SessionKernel;
use super::prepared::Prepared;
use crate::action::SubmittedAction;
use crate::error::{AdvanceCode, KernelError};
use crate::event::{CanonicalInput, EventBody, ResolutionCause};
use crate::game::{TimeoutContext, TimeoutInput};
use crate::reducer::TickReducer;

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    /// `timeoutToAction(ctx, timeout)` with the session's mapper, if any.
    pub fn timeout_to_action(&self, timeout: &TimeoutInput) -> Option<Result<SubmittedAction, KernelError>> {
        let mapper = self.options.timeout_to_action.as_ref()?;
        let ctx = TimeoutContext {
            session_id: self.options.session_id.clone(),
            game: self.options.game.clone(),
            level_id: self.options.level_id.clone(),
            level_version: self.options.level_version.clone(),
            level: self.options.level.clone(),
            seed: self.options.init_seed(),
            participant_id: timeout.participant_id.clone(),
            window_ref: self.live.cursor,
        };
        Some(mapper(&ctx, timeout).map_err(KernelError::from))
    }

    /// `prepareTimeout(timeout, forcedInput)` for typed arguments: the same
    /// checks, in the same order, as [`Self::prepare_timeout_value`].
    pub fn prepare_timeout(
        &self,
        timeout: &TimeoutInput,
        forced_input: Option<&SubmittedAction>,
    ) -> Result<Prepared<R::State>, KernelError> {
        let forced = forced_input.map(SubmittedAction::to_value);
        self.prepare_timeout_value(&timeout.to_value(), forced.as_ref())
    }

    /// `prepareTimeout(timeout, forcedInput)` with the arguments as a caller
    /// passed them: resolve the open window with a recorded system input
    /// (from the timeout mapper, or `forced_input`). Wrongly typed fields
    /// reach the checks below, which run in the exact order of kernel spec
    /// §4.10 "Check order" (the first failing check decides the error), so
    /// that a host and the reference report the same error for the same
    /// bad call; note that "the game is still playing" comes last.
    pub fn prepare_timeout_value(
        &self,
        timeout: &Value,
        forced_input: Option<&Value>,
    ) -> Result<Prepared<R::State>, KernelError> {
        // (1) argument types.
        let Some(map) = timeout.as_object() else {
            return Err(KernelError::type_error("a timeout must be an object"));
        };
        let non_empty = |key: &str| map.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
        let (Some(timeout_id), Some(reason)) = (non_empty("timeoutId"), non_empty("reason")) else {
            return Err(KernelError::type_error("timeoutId and reason must be non-empty strings"));
        };
        let timeout_policy_ref = match map.get("timeoutPolicyRef") {
            None => None,
            Some(_) => match non_empty("timeoutPolicyRef") {
                Some(policy_ref) => Some(policy_ref.to_owned()),
                None => return Err(KernelError::type_error("timeoutPolicyRef must be a non-empty string")),
            },
        };
        // (2) the tick rule (no tick policy: the open tick; a tick-bounded
        // policy: the reference names the policy and the tick is the window's
        // deadline). A tick that is not a safe integer is stale too.
        let tick = map.get("tick").and_then(Value::as_f64).filter(|t| gaos_json::is_safe_integer(*t));
        let expected_tick = match self.tick_timeout_window() {
            None => self.live.tick,
            Some(window_ticks) => {
                if timeout_policy_ref.as_deref() != Some(crate::game::TIMEOUT_POLICY_REF) {
                    return Err(KernelError::conflict(format!(
                        "timeoutPolicyRef must be {}",
                        crate::game::TIMEOUT_POLICY_REF
                    )));
                }
                self.live.cursor + window_ticks
            }
        };
        if tick != Some(expected_tick as f64) {
            return Err(KernelError::advance(
                AdvanceCode::StaleTarget,
                format!(
                    "timeout tick {} is not the expected tick {expected_tick}",
                    canonical_or_missing(map.get("tick")),
                ),
            ));
        }
        // (3) the named participant (absent or null: window-wide).
        let participant_id = match map.get("participantId") {
            None | Some(Value::Null) => None,
            Some(Value::String(seat)) if self.live.window.has_participant(seat) => {
                if self.live.window.intents.contains_key(seat) {
                    return Err(KernelError::conflict(format!("{seat} already submitted for the open window")));
                }
                Some(seat.clone())
            }
            Some(other) => {
                return Err(KernelError::conflict(format!(
                    "{} is not a participant of the open window",
                    canonical_json(other)
                )));
            }
        };
        let input = TimeoutInput {
            timeout_id: timeout_id.to_owned(),
            tick: expected_tick as f64,
            participant_id,
            reason: reason.to_owned(),
            timeout_policy_ref,
        };
        // (4) the action: the mapper's (a supplied forced input must equal
        // it), else the forced input, which must be an object.
        let mut action = match self.timeout_to_action(&input) {
            Some(mapped) => {
                let mapped = mapped?.to_value();
                if let Some(forced) = forced_input
                    && canonical_json(forced) != canonical_json(&mapped)
                {
                    return Err(KernelError::conflict("the forced input differs from the game's timeout mapping"));
                }
                mapped
            }
            None if self.is_signed() => {
                return Err(KernelError::conflict("signed sessions require timeoutToAction for timeout transitions"));
            }
            None => match forced_input {
                Some(forced @ Value::Object(_)) => forced.clone(),
                Some(_) => return Err(KernelError::type_error("a timeout's forced input must be an object")),
                None => {
                    return Err(KernelError::type_error(
                        "a timeout needs a forced input when the game has no timeout mapper",
                    ));
                }
            },
        };
        let fields = action.as_object_mut().expect("an object, checked or built above");
        // (5) the action's seat: a present key (even `null`) must name the
        // timed-out participant, who must be in the window.
        match (&input.participant_id, fields.get("seat")) {
            (_, Some(Value::String(seat))) if !self.live.window.has_participant(seat) => {
                return Err(KernelError::conflict(format!("the timeout action's seat {seat} is not in the window")));
            }
            (Some(participant), Some(Value::String(seat))) if seat != participant => {
                return Err(KernelError::conflict(format!("a timeout for {participant} cannot act for {seat}")));
            }
            (Some(_), Some(Value::String(_))) => {}
            (None, Some(seat)) => {
                return Err(KernelError::conflict(format!(
                    "a window-wide timeout cannot carry an action for {}",
                    canonical_json(seat)
                )));
            }
            (Some(_), Some(other)) => {
                return Err(KernelError::conflict(format!(
                    "the timeout action's seat {} is not in the window",
                    canonical_json(other)
                )));
            }
            (Some(participant), None) => {
                fields.insert("seat".into(), participant.clone().into());
            }
            (None, None) => {}
        }
        // (6) no commitment fields.
        if ["commit", "reveal", "verifiedPayload"].iter().any(|key| fields.contains_key(*key)) {
            return Err(KernelError::conflict("a timeout input cannot carry commit, reveal or verifiedPayload"));
        }
        // (7) only now: the game must still be playing.
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        let action = SubmittedAction::from_value(&action)
            .map_err(|e| KernelError::type_error(format!("the timeout's forced input is not an action: {e}")))?;
        let timeout = input;
        let mut draft = self.start_draft();
        draft.bodies.push(EventBody::Timeout {
            tick: expected_tick,
            timeout_id: timeout.timeout_id.clone(),
            window_ref: self.live.cursor,
            participant_id: timeout.participant_id.clone(),
            reason: timeout.reason.clone(),
            timeout_policy_ref: timeout.timeout_policy_ref.clone(),
        });
        let system_input = CanonicalInput {
            participant_id: timeout.participant_id.clone(),
            submission_id: None,
            canonical_command: None,
            cursor: None,
            action,
            client_time: None,
            prev_chain_hash: None,
            sig: None,
        };
        self.resolve_once(&mut draft, ResolutionCause::Timeout, Some(system_input))?;
        self.finish_advance(draft, false)
    }
}

/// A tick argument for messages: its canonical text, or `missing`.
fn canonical_or_missing(value: Option<&Value>) -> String {
    value.map_or_else(|| "missing".to_owned(), canonical_json)
}
