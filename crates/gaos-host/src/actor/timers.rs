//! The actor's timers: the ticks scheduler, the turn deadline and lease
//! expiries, driven by the pure [`TickSchedule`](crate::schedule::TickSchedule)
//! and [`TurnClock`](crate::schedule::TurnClock) with the host clock's time.
//! The run loop sleeps until [`SessionActor::next_deadline`], then calls
//! [`SessionActor::on_timer`] (also on an acknowledged test-clock change).

use gaos_kernel::TimeoutInput;

use super::SessionActor;
use crate::storage::SessionStatus;

/// `timeoutPolicyRef` of a policy timeout: the header's policy (kernel spec §4.10).
const POLICY_REF: &str = "header.timeoutPolicy";

impl SessionActor {
    /// Bring the timers up to date after anything that may move them.
    pub(super) fn arm_timers(&mut self) {
        let now = self.clock.now_ms();
        // A signed session waiting for seat keys has not started: no tick and
        // no turn runs out before every seat can sign (`seat_keys.rs`).
        let active =
            self.status == SessionStatus::Active && !self.kernel.is_terminal() && !self.config.awaits_seat_keys();
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
        if let Some(due) = self.ticks.take_due(now, self.leases.any_paused(now))
            && !self.wait_for_window_deadline(due).await
        {
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
        self.run_timeout(&timeout).await;
    }

    /// A tick-bounded window (a signed session's `timeoutPolicy`, kernel
    /// spec §4.10) waits for its missing seats while `windowTicks`
    /// scheduled ticks pass (advancing the kernel before its deadline is a
    /// no-op), then times out the first seat still awaited with the game's
    /// mapper, at tick `cursor + windowTicks`. Counted in memory: after a
    /// restart the open window waits its whole `windowTicks` again. `false`
    /// when the window is not tick-bounded (complete, or no such policy):
    /// the ticks then resolve as usual.
    async fn wait_for_window_deadline(&mut self, due: u64) -> bool {
        let Some(deadline) = self.kernel.next_deadline() else { return false };
        let cursor = self.kernel.cursor();
        let before = if self.window_wait.0 == cursor { self.window_wait.1 } else { 0 };
        let waited = before.saturating_add(due);
        self.window_wait = (cursor, waited);
        if waited < deadline.saturating_sub(self.kernel.tick()) {
            return true;
        }
        let Some(seat) = self.kernel.awaiting_seats().into_iter().next() else { return true };
        let mut timeout = TimeoutInput::new(&format!("deadline:{cursor}:{seat}"), deadline, Some(&seat), "elapsed");
        timeout.timeout_policy_ref = Some(POLICY_REF.into());
        self.run_timeout(&timeout).await;
        true
    }

    /// Time a seat out with the game's mapper (the kernel refuses a signed
    /// session's forced input).
    async fn run_timeout(&mut self, timeout: &TimeoutInput) {
        match self.kernel.prepare_timeout(timeout, None) {
            Ok(prepared) => {
                if let Err(e) = self.run_transition(prepared, Vec::new()).await {
                    tracing::warn!(session = %self.id, error = %e, "a timeout could not be persisted");
                }
            }
            Err(e @ gaos_kernel::KernelError::Reducer { .. }) => {
                let revoked = self.game_failed(e).await;
                tracing::warn!(session = %self.id, error = %revoked, "a turn timeout met failing game code");
            }
            Err(e) => tracing::warn!(session = %self.id, error = %e, "a timeout was refused"),
        }
    }
}
