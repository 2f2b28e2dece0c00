//! A tiny test game shared by the kernel's integration tests: two seats
//! that submit every window, commands taken as the actions themselves (so a
//! test writes commits and reveals directly), a game that never ends unless
//! a test asks it to.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::sync::Arc;

use gaos_json::{Value, obj};
use gaos_kernel::{
    Cadence, GameError, GameRef, HostTime, KernelOptions, SeedPolicy, SessionLimits, SubmittedAction, TickReducer,
};

/// Both seats submit every window; the game ends after `ends_after`
/// resolutions (never when `None`).
pub struct Rounds {
    pub ends_after: Option<u64>,
}

impl TickReducer for Rounds {
    type State = u64;
    fn init(&self, _level: &Value, _seed: u32) -> Result<u64, GameError> {
        Ok(0)
    }
    fn advance(&self, round: u64, _inputs: &[SubmittedAction]) -> Result<u64, GameError> {
        Ok(round + 1)
    }
    fn view(&self, round: &u64) -> Value {
        let ended = self.ends_after.is_some_and(|end| *round >= end);
        let status = if ended { "ended" } else { "playing" };
        obj! { "status" => status, "hud" => obj! { "actionsUsed" => *round as u32 } }.into()
    }
}

/// Options of an endless [`Rounds`] session `session` of game `game`
/// (seats `a`, `b`, turns).
pub fn rounds_options(session: &str, game: &str) -> Arc<KernelOptions<Rounds>> {
    Arc::new(rounds_kernel_options(session, game, Rounds { ends_after: None }))
}

/// The same options, unshared, for a test that changes a field first.
pub fn rounds_kernel_options(session: &str, game: &str, reducer: Rounds) -> KernelOptions<Rounds> {
    test_kernel_options(session, game, reducer)
}

/// Options of a session of `reducer` with this module's conventions: seats
/// `a`, `b`, turns, seed 0, level `null`, commands taken as the actions
/// themselves, no timeout mapper.
pub fn test_kernel_options<R: TickReducer>(session: &str, game: &str, reducer: R) -> KernelOptions<R> {
    KernelOptions {
        session_id: session.into(),
        game: GameRef::conventional(game),
        level_id: "only".into(),
        level_version: None,
        reducer,
        level: Value::Null,
        seed: 0,
        seed_policy: SeedPolicy::Explicit,
        seats: vec!["a".into(), "b".into()],
        cadence: Cadence::Turns,
        host_time: HostTime::None,
        dmath: None,
        // Commands are the actions themselves.
        command_to_action: Arc::new(|command, _| {
            gaos_json::from_value(command.clone()).map_err(|e| GameError::new(e.to_string()))
        }),
        timeout_to_action: None,
        limits: SessionLimits::default(),
        state_isolation: None,
        signing: None,
        timeout_policy: None,
    }
}
