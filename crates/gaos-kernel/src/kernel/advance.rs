//! Advance: resolve the open window (turns) or the due ticks (ticks), and
//! turn a resolution draft into a prepared transition.

use std::collections::BTreeMap;

use gaos_json::Value;
use serde::{Deserialize, Serialize};

use super::commit::{AdvancePatch, Patch};
use super::prepared::{Prepared, PreparedResult};
use super::resolve::RejectionRecord;
use super::{SeatView, SessionKernel};
use crate::action::SubmittedAction;
use crate::commitment::CommitmentBook;
use crate::error::{AdvanceCode, KernelError};
use crate::event::{EventBody, ResolutionCause};
use crate::observation::{ObservationDelta, RejectionNotice};
use crate::options::Cadence;
use crate::protocol::IntentWindow;
use crate::reducer::TickReducer;

/// A live warning (never an error): a salt reused across commitments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionWarning {
    pub code: String,
    pub message: String,
    pub participant_id: String,
    pub commitment_id: u32,
}

/// `AdvanceSummary` (also the result of timeouts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdvanceSummary {
    pub resolutions: u64,
    pub partial: bool,
    pub cursor: u64,
    pub tick: u64,
    pub digest: u32,
    pub deltas: Vec<ObservationDelta>,
    pub rejections: Vec<RejectionNotice>,
    pub warnings: Vec<SessionWarning>,
}

pub(super) struct Draft<S> {
    pub(super) state: Option<S>,
    pub(super) cursor: u64,
    pub(super) tick: u64,
    pub(super) window: IntentWindow,
    pub(super) window_actions: BTreeMap<String, SubmittedAction>,
    pub(super) full_view: Option<Value>,
    pub(super) seat_views: Option<Vec<SeatView>>,
    /// The resolution's commitment changes, layered over the live book.
    pub(super) commitments: CommitmentBook<String>,
    pub(super) removed_receipts: Vec<String>,
    pub(super) rejections: Vec<RejectionRecord>,
    pub(super) last_checkpoint_tick: u64,
    pub(super) bodies: Vec<EventBody>,
    pub(super) deltas: Vec<ObservationDelta>,
    pub(super) notices: Vec<RejectionNotice>,
    pub(super) warnings: Vec<SessionWarning>,
    pub(super) resolutions: u64,
    pub(super) terminal: bool,
    pub(super) rejected: bool,
    /// Transition revision the draft's events and deltas carry.
    pub(super) next_revision: u64,
}

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    pub(super) fn start_draft(&self) -> Draft<R::State> {
        Draft {
            state: None,
            cursor: self.live.cursor,
            tick: self.live.tick,
            window: self.live.window.clone(),
            window_actions: self.live.window_actions.clone(),
            full_view: None,
            seat_views: None,
            commitments: CommitmentBook::new(),
            removed_receipts: Vec::new(),
            rejections: Vec::new(),
            last_checkpoint_tick: self.live.last_checkpoint_tick,
            bodies: Vec::new(),
            deltas: Vec::new(),
            notices: Vec::new(),
            warnings: Vec::new(),
            resolutions: 0,
            terminal: self.is_terminal(),
            rejected: false,
            next_revision: self.live.transition_revision + 1,
        }
    }

    /// `prepareAdvance(target)` with the target as a caller passed it
    /// (SCRIPT-FORMAT.md §4): absent is the default; anything that is not a
    /// number (a string, `null`) is not a safe integer and reaches the
    /// target checks as one (`invalid_target`).
    pub fn prepare_advance_value(&self, target: Option<&gaos_json::Value>) -> Result<Prepared<R::State>, KernelError> {
        self.prepare_advance(target.map(|t| t.as_f64().unwrap_or(f64::NAN)))
    }

    /// `prepareAdvance(target)`: resolve the open window (turns) or the ticks
    /// up to `target` inclusive (ticks), bounded by the catch-up limit.
    pub fn prepare_advance(&self, target: Option<f64>) -> Result<Prepared<R::State>, KernelError> {
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        let mut draft = self.start_draft();
        let mut partial = false;
        match self.options.cadence {
            Cadence::Turns => {
                if target.is_some() {
                    return Err(KernelError::advance(AdvanceCode::InvalidTarget, "turns cadence takes no target"));
                }
                if !draft.window.is_complete() {
                    return Err(KernelError::advance(
                        AdvanceCode::NotReady,
                        format!("the window still awaits {}", draft.window.awaiting().join(", ")),
                    ));
                }
                self.resolve_once(&mut draft, ResolutionCause::Complete, None)?;
            }
            Cadence::Ticks(_) => {
                let tick = self.live.tick;
                let target = match target {
                    None => tick,
                    Some(t) => {
                        if !(gaos_json::is_safe_integer(t) && t >= 0.0) {
                            return Err(KernelError::advance(
                                AdvanceCode::InvalidTarget,
                                "target must be a non-negative safe integer",
                            ));
                        }
                        t as u64
                    }
                };
                if target < tick {
                    return Err(KernelError::advance(
                        AdvanceCode::StaleTarget,
                        format!("target {target} is behind the open tick {tick}"),
                    ));
                }
                // A tick-bounded timeout policy (signed sessions): an
                // incomplete window waits for its deadline, then only a
                // timeout resolves it.
                let bounded = self.tick_timeout_window().filter(|_| !draft.window.is_complete());
                if let Some(window_ticks) = bounded
                    && target >= tick + window_ticks
                {
                    return Err(KernelError::advance(
                        AdvanceCode::NotReady,
                        format!("the open window reached tick {}; prepare_timeout is required", tick + window_ticks),
                    ));
                }
                if target - tick > self.limits.max_future_ticks {
                    return Err(KernelError::advance(
                        AdvanceCode::InvalidTarget,
                        format!("target {target} is more than maxFutureTicks {} ahead", self.limits.max_future_ticks),
                    ));
                }
                if bounded.is_some() {
                    return Ok(self.noop_advance());
                }
                let requested = target - tick + 1;
                let count = requested.min(self.limits.max_catch_up_ticks);
                partial = requested > count;
                for i in 0..count {
                    let cause =
                        if draft.window.is_complete() { ResolutionCause::Complete } else { ResolutionCause::Tick };
                    self.resolve_once(&mut draft, cause, None)?;
                    if draft.terminal || draft.rejected {
                        break;
                    }
                    if self.tick_timeout_window().is_some() && !draft.window.is_complete() {
                        partial |= i + 1 < count;
                        break;
                    }
                }
            }
        }
        self.finish_advance(draft, partial)
    }

    /// An advance with nothing to do (a bounded window before its deadline):
    /// no events, `base == next`.
    fn noop_advance(&self) -> Prepared<R::State> {
        let summary = AdvanceSummary {
            resolutions: 0,
            partial: false,
            cursor: self.live.cursor,
            tick: self.live.tick,
            digest: self.digest(),
            deltas: Vec::new(),
            rejections: Vec::new(),
            warnings: Vec::new(),
        };
        self.prepared(
            self.live.transition_revision,
            Vec::new(),
            Vec::new(),
            PreparedResult::Advance(summary),
            Patch::Noop,
        )
    }

    /// `windowTicks` of the tick-bounded timeout policy, which the kernel
    /// enforces in signed sessions (kernel spec §4.1, §4.10).
    pub(super) fn tick_timeout_window(&self) -> Option<u64> {
        self.options.signing.as_ref()?;
        self.options.timeout_policy.as_ref()?.get("windowTicks")?.as_u64()
    }

    /// `nextDeadline()`: `tick + windowTicks` while a tick-bounded window is
    /// incomplete, else none.
    pub fn next_deadline(&self) -> Option<u64> {
        let window_ticks = self.tick_timeout_window()?;
        (!self.live.window.is_complete() && !self.is_terminal()).then_some(self.live.tick + window_ticks)
    }

    pub(super) fn finish_advance(
        &self,
        mut draft: Draft<R::State>,
        partial: bool,
    ) -> Result<Prepared<R::State>, KernelError> {
        let views = draft.seat_views.as_deref().unwrap_or(&self.live.seat_views);
        let digest = Self::kernel_digest(&self.options, &self.sorted_seats, draft.cursor, draft.tick, views);
        let last_is_rejection = matches!(draft.bodies.last(), Some(EventBody::Rejection { .. }));
        if (draft.resolutions > 0 && draft.tick - draft.last_checkpoint_tick >= self.limits.checkpoint_interval)
            || last_is_rejection
        {
            draft.bodies.push(EventBody::Checkpoint { tick: draft.tick, digest });
            draft.last_checkpoint_tick = draft.tick;
        }
        let next = draft.next_revision;
        let events = match self.finish_events(next, std::mem::take(&mut draft.bodies)) {
            Ok(events) => events,
            Err(e) => {
                // A failed prepare has no completion that would discard its draft.
                if let Some(state) = draft.state.take() {
                    self.isolation.discard(state);
                }
                return Err(e);
            }
        };
        let summary = AdvanceSummary {
            resolutions: draft.resolutions,
            partial,
            cursor: draft.cursor,
            tick: draft.tick,
            digest,
            deltas: draft.deltas.clone(),
            rejections: std::mem::take(&mut draft.notices),
            warnings: std::mem::take(&mut draft.warnings),
        };
        let deltas = std::mem::take(&mut draft.deltas);
        let patch = AdvancePatch {
            cursor: draft.cursor,
            tick: draft.tick,
            full_view: draft.full_view.take().unwrap_or_else(|| self.live.full_view.clone()),
            seat_views: draft.seat_views.take().unwrap_or_else(|| self.live.seat_views.clone()),
            state: draft.state.take(),
            window: draft.window,
            window_actions: draft.window_actions,
            commitments: draft.commitments,
            removed_receipts: draft.removed_receipts,
            rejections: draft.rejections,
            last_checkpoint_tick: draft.last_checkpoint_tick,
            evict: draft.resolutions > 0,
        };
        Ok(self.prepared(next, events, deltas, PreparedResult::Advance(summary), Patch::Advance(Box::new(patch))))
    }
}
