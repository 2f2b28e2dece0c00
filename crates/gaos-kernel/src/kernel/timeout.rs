//! Timeouts (kernel spec §4.10): a recorded system input resolves the open
//! window.

use gaos_json::canonical_json;

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

    /// `prepareTimeout(timeout, forcedInput)`: resolve the open window with a
    /// recorded system input (from the timeout mapper, or `forced_input`).
    pub fn prepare_timeout(
        &self,
        timeout: &TimeoutInput,
        forced_input: Option<&SubmittedAction>,
    ) -> Result<Prepared<R::State>, KernelError> {
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        if timeout.timeout_id.is_empty() || timeout.reason.is_empty() {
            return Err(KernelError::type_error("timeoutId and reason must be non-empty strings"));
        }
        if timeout.tick != self.live.tick as f64 {
            return Err(KernelError::advance(
                AdvanceCode::StaleTarget,
                format!("timeout tick {} is not the open tick {}", timeout.tick, self.live.tick),
            ));
        }
        if let Some(seat) = &timeout.participant_id {
            if !self.live.window.has_participant(seat) {
                return Err(KernelError::conflict(format!("{seat} is not a participant of the open window")));
            }
            if self.live.window.intents.contains_key(seat) {
                return Err(KernelError::conflict(format!("{seat} already submitted for the open window")));
            }
        }
        let mut action = match self.timeout_to_action(timeout) {
            Some(mapped) => {
                let mapped = mapped?;
                if let Some(forced) = forced_input
                    && canonical_json(&forced.to_value()) != canonical_json(&mapped.to_value())
                {
                    return Err(KernelError::conflict("the forced input differs from the game's timeout mapping"));
                }
                mapped
            }
            None => forced_input.cloned().ok_or_else(|| {
                KernelError::type_error("a timeout needs a forced input when the game has no timeout mapper")
            })?,
        };
        match (&timeout.participant_id, &action.seat) {
            (Some(seat), Some(action_seat)) if action_seat != seat => {
                return Err(KernelError::conflict(format!("a timeout for {seat} cannot act for {action_seat}")));
            }
            (Some(seat), None) => action.seat = Some(seat.clone()),
            (None, Some(action_seat)) => {
                return Err(KernelError::conflict(format!(
                    "a window-wide timeout cannot carry an action for {action_seat}"
                )));
            }
            _ => {}
        }
        if action.commit.is_some() || action.reveal.is_some() || action.verified_payload.is_some() {
            return Err(KernelError::conflict("a timeout input cannot carry commit, reveal or verifiedPayload"));
        }
        let mut draft = self.start_draft();
        draft.bodies.push(EventBody::Timeout {
            tick: self.live.tick,
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
