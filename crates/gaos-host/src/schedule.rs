//! The session timers, pure (like `lease.rs`): the ticks-cadence scheduler
//! and the turn clock. Every operation takes the host clock's `now` in
//! milliseconds; nothing here sleeps or reads a clock. The actor sleeps
//! until the earliest deadline and then asks what came due.

/// The ticks-cadence scheduler: when the next tick is due.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TickSchedule {
    /// Milliseconds per tick (`None`: not a ticks session).
    period_ms: Option<f64>,
    next_at: Option<i64>,
}

impl TickSchedule {
    pub(crate) fn new(period_ms: Option<f64>) -> Self {
        TickSchedule { period_ms, next_at: None }
    }

    /// Whether the session runs on ticks.
    pub(crate) fn is_ticks(&self) -> bool {
        self.period_ms.is_some()
    }

    /// The next tick's time, when one is scheduled.
    pub(crate) fn next_at(&self) -> Option<i64> {
        self.next_at
    }

    /// Keep the scheduler running: the next tick one period from `now` if
    /// none is scheduled; stopped while a seat is `paused` or lapsed.
    pub(crate) fn arm(&mut self, now: i64, paused: bool) {
        let Some(period) = self.period_ms else { return };
        if paused {
            self.next_at = None;
        } else if self.next_at.is_none() {
            self.next_at = Some(now + period.ceil() as i64);
        }
    }

    pub(crate) fn stop(&mut self) {
        self.next_at = None;
    }

    /// How many ticks came due by `now` (at least one), scheduling the next
    /// one after them; `None` when nothing is due or a seat is paused.
    pub(crate) fn take_due(&mut self, now: i64, paused: bool) -> Option<u64> {
        let (at, period) = (self.next_at?, self.period_ms?);
        if now < at || paused {
            return None;
        }
        let due = 1 + ((now - at) as f64 / period) as u64;
        self.next_at = Some(at + (period * due as f64).ceil() as i64);
        Some(due)
    }
}

/// The turn clock of a turns session with a per-turn deadline: it runs for
/// the window at `cursor`, and stops (keeping the time left) while the one
/// awaited seat is paused or lapsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TurnClock {
    /// Milliseconds per turn (`None`: no turn deadline).
    turn_ms: Option<u64>,
    /// Running: (cursor it belongs to, when it fires).
    deadline: Option<(u64, i64)>,
    /// Stopped: (cursor it belongs to, milliseconds left).
    frozen: Option<(u64, i64)>,
}

impl TurnClock {
    pub(crate) fn new(turn_ms: Option<u64>) -> Self {
        TurnClock { turn_ms, deadline: None, frozen: None }
    }

    /// Whether turns have a deadline at all.
    pub(crate) fn is_limited(&self) -> bool {
        self.turn_ms.is_some()
    }

    /// When the running turn clock fires.
    pub(crate) fn deadline_at(&self) -> Option<i64> {
        self.deadline.map(|(_, at)| at)
    }

    /// Bring the clock up to date for the window at `cursor`.
    /// `paused_since`: when the pause of the awaited seat began, if it is
    /// paused now; the clock then stops where it stood at that moment.
    pub(crate) fn arm(&mut self, cursor: u64, now: i64, paused_since: Option<i64>) {
        let Some(ms) = self.turn_ms else { return };
        let ms = ms as i64;
        match paused_since {
            Some(since) => {
                if let Some((c, at)) = self.deadline.take()
                    && c == cursor
                {
                    self.frozen = Some((c, (at - since).clamp(0, ms)));
                }
                if self.frozen.is_none_or(|(c, _)| c != cursor) {
                    self.frozen = Some((cursor, ms));
                }
            }
            // Running: a stopped turn clock runs on with the time it had left.
            None => {
                if self.deadline.is_none_or(|(c, _)| c != cursor) {
                    let left = self.frozen.filter(|(c, _)| *c == cursor).map_or(ms, |(_, left)| left);
                    self.deadline = Some((cursor, now + left));
                }
                self.frozen = None;
            }
        }
    }

    pub(crate) fn stop(&mut self) {
        self.deadline = None;
        self.frozen = None;
    }

    /// The clock's state as persisted (`session_state` `turnClock`): the
    /// deadline as wall-clock milliseconds, so a restart counts the
    /// downtime against the turn; `None` when nothing runs or is stopped.
    pub(crate) fn to_json(&self) -> Option<String> {
        let (cursor, field, ms) = match (self.deadline, self.frozen) {
            (Some((cursor, at)), _) => (cursor, "deadlineAt", at),
            (None, Some((cursor, left))) => (cursor, "leftMs", left),
            (None, None) => return None,
        };
        Some(format!("{{\"cursor\":{cursor},\"{field}\":{ms}}}"))
    }

    /// Take up a persisted state for the window at `cursor` (a state of
    /// another window, or an unreadable one, is dropped: that window's turn
    /// starts afresh).
    pub(crate) fn restore(&mut self, text: &str, cursor: u64) {
        let Ok(value) = gaos_json::parse(text) else { return };
        if value.get("cursor").and_then(gaos_json::Value::as_u64) != Some(cursor) {
            return;
        }
        let field = |k: &str| value.get(k).and_then(gaos_json::Value::as_i64);
        if let Some(at) = field("deadlineAt") {
            self.deadline = Some((cursor, at));
        } else if let Some(left) = field("leftMs") {
            self.frozen = Some((cursor, left));
        }
    }

    /// The cursor whose turn ran out by `now`, taking the deadline.
    pub(crate) fn take_expired(&mut self, now: i64) -> Option<u64> {
        let (cursor, at) = self.deadline?;
        if now < at {
            return None;
        }
        self.deadline = None;
        Some(cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_scheduled_one_period_ahead_and_caught_up_in_bulk() {
        let mut ticks = TickSchedule::new(Some(100.0));
        assert!(ticks.is_ticks());
        ticks.arm(1_000, false);
        assert_eq!(ticks.next_at(), Some(1_100));
        ticks.arm(1_050, false);
        assert_eq!(ticks.next_at(), Some(1_100), "arming again keeps the schedule");
        assert_eq!(ticks.take_due(1_099, false), None);
        assert_eq!(ticks.take_due(1_100, false), Some(1));
        assert_eq!(ticks.next_at(), Some(1_200));
        assert_eq!(ticks.take_due(1_450, false), Some(3), "three ticks came due");
        assert_eq!(ticks.next_at(), Some(1_500));
    }

    #[test]
    fn fractional_periods_round_the_schedule_up() {
        let mut ticks = TickSchedule::new(Some(33.4));
        ticks.arm(0, false);
        assert_eq!(ticks.next_at(), Some(34));
        assert_eq!(ticks.take_due(34, false), Some(1));
        assert_eq!(ticks.next_at(), Some(34 + 34));
    }

    #[test]
    fn a_pause_stops_the_tick_scheduler() {
        let mut ticks = TickSchedule::new(Some(100.0));
        ticks.arm(0, false);
        assert_eq!(ticks.take_due(500, true), None, "nothing is due while paused");
        ticks.arm(500, true);
        assert_eq!(ticks.next_at(), None);
        ticks.arm(700, false);
        assert_eq!(ticks.next_at(), Some(800), "resumed one period after the pause ended");
        ticks.stop();
        assert_eq!(ticks.next_at(), None);
    }

    #[test]
    fn a_turns_session_has_no_tick_schedule() {
        let mut ticks = TickSchedule::new(None);
        ticks.arm(0, false);
        assert_eq!((ticks.is_ticks(), ticks.next_at(), ticks.take_due(10_000, false)), (false, None, None));
    }

    #[test]
    fn the_turn_clock_fires_once_per_window() {
        let mut turn = TurnClock::new(Some(1_000));
        turn.arm(0, 5_000, None);
        assert_eq!(turn.deadline_at(), Some(6_000));
        turn.arm(0, 5_500, None);
        assert_eq!(turn.deadline_at(), Some(6_000), "the same window keeps its deadline");
        assert_eq!(turn.take_expired(5_999), None);
        assert_eq!(turn.take_expired(6_000), Some(0));
        assert_eq!(turn.take_expired(7_000), None, "taken once");
        turn.arm(1, 6_100, None);
        assert_eq!(turn.deadline_at(), Some(7_100), "a new window gets a full turn");
    }

    #[test]
    fn a_paused_seat_stops_its_turn_clock_with_the_time_it_had_left() {
        let mut turn = TurnClock::new(Some(1_000));
        turn.arm(4, 0, None);
        // The seat lapsed at 300 (noticed at 450): 700 ms were left then.
        turn.arm(4, 450, Some(300));
        assert_eq!(turn.deadline_at(), None);
        turn.arm(4, 2_000, Some(300));
        assert_eq!(turn.deadline_at(), None, "still stopped");
        turn.arm(4, 5_000, None);
        assert_eq!(turn.deadline_at(), Some(5_700), "runs on with the 700 ms it had left");
    }

    #[test]
    fn a_window_that_opens_paused_gets_a_full_turn_later() {
        let mut turn = TurnClock::new(Some(1_000));
        turn.arm(2, 100, Some(100));
        turn.arm(2, 9_000, None);
        assert_eq!(turn.deadline_at(), Some(10_000));
        turn.stop();
        assert_eq!((turn.deadline_at(), turn.take_expired(20_000)), (None, None));
    }

    #[test]
    fn a_persisted_turn_clock_is_taken_up_for_its_own_window_only() {
        let mut turn = TurnClock::new(Some(1_000));
        assert_eq!(turn.to_json(), None);
        turn.arm(3, 5_000, None);
        let running = turn.to_json().expect("running");
        assert_eq!(running, r#"{"cursor":3,"deadlineAt":6000}"#);
        let mut restored = TurnClock::new(Some(1_000));
        restored.restore(&running, 3);
        restored.arm(3, 9_000, None);
        assert_eq!(restored.deadline_at(), Some(6_000), "the downtime counted: the deadline passed");
        let mut other = TurnClock::new(Some(1_000));
        other.restore(&running, 4);
        other.arm(4, 9_000, None);
        assert_eq!(other.deadline_at(), Some(10_000), "another window starts afresh");
        turn.arm(3, 5_400, Some(5_300));
        let mut stopped = TurnClock::new(Some(1_000));
        stopped.restore(&turn.to_json().expect("stopped"), 3);
        stopped.arm(3, 20_000, None);
        assert_eq!(stopped.deadline_at(), Some(20_700), "a stopped clock keeps its time left");
    }

    #[test]
    fn without_a_turn_limit_the_clock_never_runs() {
        let mut turn = TurnClock::new(None);
        assert!(!turn.is_limited());
        turn.arm(0, 0, None);
        assert_eq!(turn.deadline_at(), None);
    }
}
