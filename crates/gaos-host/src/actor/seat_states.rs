//! Where each seat of a live session stands, for the people watching it:
//! whether it submitted in the open window or is awaited, and its
//! controller lease (state, holder kind, expiry). Never what a seat
//! submitted: the answer holds nothing a seat's own envelope or the public
//! view does not already tell (the pending envelope names who submitted).

use serde::Serialize;

use super::SessionActor;
use super::mailbox::SessionSummary;
use crate::lease::{BEARER_HOLDER, ClaimState};

/// A seat's part in the open window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowPart {
    /// Its action is in; the window waits for others.
    Submitted,
    /// The window waits for this seat.
    Awaited,
    /// Not this seat's turn (or the game is over).
    Idle,
}

/// Who holds a seat's claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HolderKind {
    /// A lease-unaware caller acting with the seat token (an implicit claim).
    Bearer,
    /// A controller that attached with a lease of its own.
    Controller,
}

/// A seat's current claim.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatLeaseState {
    pub state: ClaimState,
    pub holder: HolderKind,
    pub expires_at: i64,
}

/// One seat, as `GET /v1/sessions/{id}/seats` and the session list show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatState {
    pub seat: String,
    pub window: WindowPart,
    /// `None`: nobody holds the seat.
    pub lease: Option<SeatLeaseState>,
    /// The seat's clock-driven progress is stopped (lapsed claim or a
    /// safety pause).
    pub paused: bool,
}

impl SessionActor {
    pub(super) fn summary(&self) -> SessionSummary {
        let now = self.clock.now_ms();
        let window = self.kernel.window();
        let done = self.kernel.is_terminal();
        let seat_states = self
            .config
            .seats
            .iter()
            .map(|seat| {
                let part = if done || !window.participants.contains(seat) {
                    WindowPart::Idle
                } else if window.intents.contains_key(seat) {
                    WindowPart::Submitted
                } else {
                    WindowPart::Awaited
                };
                let claim = self.leases.seats.get(seat).and_then(|l| l.current.as_ref());
                let lease = claim.zip(self.leases.state(seat, now)).map(|(claim, state)| SeatLeaseState {
                    state,
                    holder: if claim.holder_id == BEARER_HOLDER { HolderKind::Bearer } else { HolderKind::Controller },
                    expires_at: claim.expires_at,
                });
                SeatState { seat: seat.clone(), window: part, lease, paused: self.leases.seat_paused(seat, now) }
            })
            .collect();
        SessionSummary {
            status: self.status,
            cursor: self.revision(),
            tick: self.kernel.tick(),
            seats: self.config.seats.clone(),
            game: self.game.game_ref().id,
            paused: self.leases.any_paused(now),
            seat_states,
        }
    }
}
