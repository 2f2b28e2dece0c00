//! What a reducer state implies: the full view's facts (status, stars,
//! actionsUsed, participants), the seats' partitioned views, the next
//! window and the kernel digest over them.

use std::collections::BTreeMap;
use std::sync::Arc;

use gaos_json::{CanonicalSink, Value, canonical_json};

use super::{SeatView, SessionKernel};
use crate::error::{AdvanceCode, KernelError};
use crate::game::GameRef;
use crate::options::KernelOptions;
use crate::protocol::IntentWindow;
use crate::reducer::TickReducer;
use crate::view::{GameStatus, participants_of};

/// What a freshly advanced reducer state implies: its views and next window.
pub(super) struct Derived {
    pub(super) full_view: Value,
    pub(super) facts: ViewFacts,
    pub(super) seat_views: Vec<SeatView>,
    pub(super) window: IntentWindow,
}

/// Status and metrics derived from a full view.
pub(super) struct ViewFacts {
    pub(super) status: GameStatus,
    pub(super) stars: Option<f64>,
    pub(super) actions_used: u64,
    pub(super) participants: Vec<String>,
}

/// `invalid_view`, naming the game: with games loaded from modules, the
/// author must see which game's view was refused.
pub(super) fn invalid_view(game: &GameRef, message: impl std::fmt::Display) -> KernelError {
    KernelError::advance(AdvanceCode::InvalidView, format!("the view of {}: {message}", game.id))
}

/// A view must be canonical-JSON encodable (kernel spec §2.1): a number that
/// is no longer a safe integer (a counter passing 2^53) is the kernel's
/// `invalid_view`, not a reducer failure.
fn in_value_domain(game: &GameRef, view: &Value) -> Result<(), KernelError> {
    gaos_json::check_value(view).map_err(|e| invalid_view(game, format!("a view must be plain JSON: {e}")))
}

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    pub(super) fn kernel_digest(
        options: &KernelOptions<R>,
        sorted: &[usize],
        cursor: u64,
        tick: u64,
        views: &[SeatView],
    ) -> u32 {
        let seats = sorted.iter().map(|&index| (options.seats[index].as_str(), &views[index]));
        crate::digest::digest_of_views(cursor, tick, seats, |view, h| h.push_str(&view.canonical))
    }

    /// Status, stars, metrics and window participants of a full view.
    pub(super) fn facts(options: &KernelOptions<R>, state: &R::State, view: &Value) -> Result<ViewFacts, KernelError> {
        // The reducer's own account names the game and the call already.
        if let Some(problem) = options.reducer.view_problem(state, None) {
            return Err(KernelError::advance(AdvanceCode::InvalidView, problem));
        }
        let map = view.as_object().ok_or_else(|| invalid_view(&options.game, "a view must be a JSON object"))?;
        in_value_domain(&options.game, view)?;
        let Some(status) = map.get("status").and_then(Value::as_str).and_then(GameStatus::parse) else {
            return Err(invalid_view(&options.game, "view.status must be playing, won, failed or ended"));
        };
        let stars = match map.get("stars") {
            None => None,
            Some(Value::Number(x)) => Some(*x),
            Some(_) => return Err(invalid_view(&options.game, "view.stars must be a number")),
        };
        if status == GameStatus::Ended && stars.is_some() {
            return Err(invalid_view(&options.game, "an ended view must not report stars"));
        }
        let actions_used = match options.reducer.replay_metrics(state) {
            Some(m) => m.actions_used,
            None => view
                .get("hud")
                .and_then(|hud| hud.get("actionsUsed"))
                .and_then(Value::as_f64)
                .filter(|x| gaos_json::is_safe_integer(*x) && *x >= 0.0)
                .map(|x| x as u64)
                .ok_or_else(|| invalid_view(&options.game, "actionsUsed must be a non-negative safe integer"))?,
        };
        let participants = participants_of(view, &options.seats)?;
        Ok(ViewFacts { status, stars, actions_used, participants })
    }

    pub(super) fn compute_seat_views(
        options: &KernelOptions<R>,
        state: &R::State,
        previous: Option<&[SeatView]>,
    ) -> Result<Vec<SeatView>, KernelError> {
        options
            .seats
            .iter()
            .enumerate()
            .map(|(i, seat)| {
                if let Some(problem) = options.reducer.view_problem(state, Some(seat)) {
                    return Err(KernelError::advance(AdvanceCode::InvalidView, problem));
                }
                let view = options.reducer.view_for(state, seat);
                if !view.is_object() {
                    return Err(invalid_view(&options.game, format!("the view for {seat} must be a JSON object")));
                }
                in_value_domain(&options.game, &view)?;
                let canonical = canonical_json(&view);
                let revision = previous.map_or(0, |p| p[i].revision + 1);
                Ok(SeatView {
                    digest: gaos_json::fnv1a32(&canonical),
                    canonical: Arc::from(canonical),
                    view: Arc::new(view),
                    revision,
                })
            })
            .collect()
    }

    /// The window at `cursor` for participants taken from a view. They are
    /// a subset of the declared seats (checked by `participants_of`), whose
    /// ids were validated at construction.
    pub(super) fn window_for(
        options: &KernelOptions<R>,
        cursor: u64,
        participants: &[String],
    ) -> Result<IntentWindow, KernelError> {
        let mut sorted = participants.to_vec();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(KernelError::type_error("view participants must be unique"));
        }
        Ok(IntentWindow {
            session_id: options.session_id.clone(),
            tick_id: crate::protocol::make_tick_id(&options.session_id, cursor),
            revision: cursor,
            participants: sorted,
            intents: BTreeMap::new(),
        })
    }

    /// Full view, facts, seat views and next window of a freshly advanced
    /// state; `check` vets the facts before the seat views are computed.
    pub(super) fn derive(
        &self,
        state: &R::State,
        previous_views: &[SeatView],
        next_cursor: u64,
        check: impl FnOnce(&ViewFacts) -> Result<(), KernelError>,
    ) -> Result<Derived, KernelError> {
        let full_view = self.options.reducer.view(state);
        let facts = Self::facts(&self.options, state, &full_view)?;
        check(&facts)?;
        let seat_views = Self::compute_seat_views(&self.options, state, Some(previous_views))?;
        let window = Self::window_for(&self.options, next_cursor, &facts.participants)?;
        Ok(Derived { full_view, facts, seat_views, window })
    }
}
