//! Where each seat of a live session stands, for the people watching it:
//! whether it submitted in the open window or is awaited, and its
//! controller lease (state, holder kind, expiry). Never what a seat
//! submitted: the answer holds nothing a seat's own envelope or the public
//! view does not already tell (the pending envelope names who submitted).

use super::SessionActor;
use super::mailbox::SessionSummary;
use crate::lease::BEARER_HOLDER;
use crate::wire::{HolderKind, SeatLeaseState, SeatState, WindowPart};

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
