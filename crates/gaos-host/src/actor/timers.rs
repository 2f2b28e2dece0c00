//! The actor's timers: the ticks scheduler, the turn deadline and lease
//! expiries, driven by the pure [`TickSchedule`](crate::schedule::TickSchedule)
//! and [`TurnClock`](crate::schedule::TurnClock) with the host clock's time.
//! The run loop sleeps until [`SessionActor::next_deadline`], then calls
//! [`SessionActor::on_timer`] (also on an acknowledged test-clock change).

use gaos_kernel::TimeoutInput;

use super::SessionActor;
use crate::storage::SessionStatus;

impl SessionActor {
    /// Bring the timers up to date after anything that may move them.
    pub(super) fn arm_timers(&mut self) {
        let now = self.clock.now_ms();
        let active = self.status == SessionStatus::Active && !self.kernel.is_terminal();
        if !active {
            self.stop_timers();
            return;
        }
        // Both are only looked at for sessions that have the timer (this
        // runs after every transition).
        if self.ticks.is_ticks() {
            // The scheduler stops while a seat is paused or lapsed.
            self.ticks.arm(now, self.leases.any_paused(now));
        }
        if self.turn.is_limited() {
            let paused_since = self.turn_paused_since(now);
            // The session revision names the window across a run's levels.
            self.turn.arm(self.revision(), now, paused_since);
        }
    }

    pub(super) fn stop_timers(&mut self) {
        self.ticks.stop();
        self.turn.stop();
    }

    /// When the pause of the one awaited seat began, if that seat is paused
    /// now: at its lapse (the lease ran out then), or now for a safety pause
    /// (applied by a call, which re-arms the timers at once).
    fn turn_paused_since(&self, now: i64) -> Option<i64> {
        let awaiting = self.kernel.awaiting_seats();
        let [seat] = awaiting.as_slice() else { return None };
        if !self.leases.seat_paused(seat, now) {
            return None;
        }
        let lease = self.leases.seats.get(seat.as_str())?;
        let lapsed_at = lease.current.as_ref().map(|c| c.expires_at).filter(|at| *at <= now);
        Some(match lapsed_at {
            Some(at) if !lease.safety_paused => at,
            _ => now,
        })
    }

    pub(super) fn next_deadline(&self) -> Option<i64> {
        [self.ticks.next_at(), self.turn.deadline_at(), self.leases.next_expiry(self.clock.now_ms())]
            .into_iter()
            .flatten()
            .min()
    }

    pub(super) async fn on_timer(&mut self) {
        self.expire_leases().await;
        let now = self.clock.now_ms();
        if let Some(due) = self.ticks.take_due(now, self.leases.any_paused(now)) {
            // Bounded catch-up: resolve the ticks that came due, at most
            // the kernel's catch-up limit per firing.
            let limits = *self.kernel.limits();
            let steps = due.min(limits.max_catch_up_ticks).min(limits.max_future_ticks + 1);
            let target = self.kernel.tick() + steps - 1;
            match self.kernel.prepare_advance(Some(target as f64)) {
                Ok(prepared) => {
                    if let Err(e) = self.run_transition(prepared, Vec::new()).await {
                        tracing::warn!(session = %self.id, error = %e, "a scheduled tick failed");
                    }
                }
                Err(e @ gaos_kernel::KernelError::Reducer { .. }) => {
                    let revoked = self.game_failed(e).await;
                    tracing::warn!(session = %self.id, error = %revoked, "a scheduled tick met failing game code");
                }
                Err(e) => tracing::error!(session = %self.id, error = %e, "a scheduled tick was refused"),
            }
        }
        if let Some(cursor) = self.turn.take_expired(now)
            && cursor == self.revision()
            && !self.kernel.is_terminal()
        {
            self.on_turn_deadline(self.kernel.cursor()).await;
        }
        self.arm_timers();
    }

    /// A turn ran out: time out the one seat still awaited (with the game's
    /// timeout mapper), unless that seat is paused or its lease lapsed (a
    /// thinking holder is never played for). With several seats awaited
    /// nobody has acted yet, so the window stays open for another turn.
    async fn on_turn_deadline(&mut self, cursor: u64) {
        let awaiting = self.kernel.awaiting_seats();
        if awaiting.len() != 1 {
            return;
        }
        let seat = &awaiting[0];
        if self.leases.seat_paused(seat, self.clock.now_ms()) {
            return;
        }
        let timeout = TimeoutInput::new(&format!("turn:{cursor}:{seat}"), self.kernel.tick(), Some(seat), "elapsed");
        match self.kernel.prepare_timeout(&timeout, None) {
            Ok(prepared) => {
                if let Err(e) = self.run_transition(prepared, Vec::new()).await {
                    tracing::warn!(session = %self.id, error = %e, "a turn timeout could not be persisted");
                }
            }
            Err(e @ gaos_kernel::KernelError::Reducer { .. }) => {
                let revoked = self.game_failed(e).await;
                tracing::warn!(session = %self.id, error = %revoked, "a turn timeout met failing game code");
            }
            Err(e) => tracing::warn!(session = %self.id, error = %e, "a turn timeout was refused"),
        }
    }
}
