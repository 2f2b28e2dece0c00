//! Arenas: tournaments between agents, with ratings anyone can recompute
//! from the replays (docs/arena.md).
//!
//! A tournament is a `gaos.arena-manifest.v1` ([`ArenaManifest`]): a game,
//! levels with seeds, entrants (built-in drivers, model drivers, or
//! programs in any language through the `process` driver), a schedule,
//! the illegal-move policy and the rating settings. Every match is an
//! ordinary session, created by an [`ArenaFactory`] on a host and driven
//! seat by seat with [`crate::run_session`] under a [`RefereeDriver`];
//! there is no arena-only handle or runner.
//!
//! ```text
//! manifest ─► plan_matches ─► run_arena (jobs workers; journal on start and completion)
//!                                └─ per match: factory.create/attach ─► run_session per seat ─► finalize
//!          ─► standings (Bradley–Terry + bootstrap) ─► pack_arena (files, digests)
//!          ─► verify_arena (replays re-simulated, results, standings, digests recomputed)
//! ```
//!
//! # Decisions where the issue is silent
//!
//! - `maxSteps` bounds each seat's decisions in a match; a level that has a
//!   `maxSteps` of its own is played with the manifest's, so the game ends
//!   within the budget. A match that does not end within it stops the run
//!   (the manifest is wrong for the game; completed matches are kept).
//! - The moves the referee plays for a seat are submitted under tagged
//!   ids, so forfeits and substitutions are recomputed from the replays.
//!   Refused moves and failed answers (`faults`) and `wallClockMs` leave
//!   no trace in a replay: they are self-reported, and say so.
//! - A match's built-in drivers are seeded from its id alone
//!   ([`MatchPlan::driver_seed`]), so results do not depend on `--jobs`.

pub mod bundle;
pub mod error;
pub mod factory;
pub mod journal;
pub mod keys;
pub mod manifest;
pub mod orchestrate;
pub mod plan;
pub mod ratings;
pub mod referee;
pub mod result;
pub mod standings;
pub mod verify;

pub use bundle::{ARENA_BUNDLE_SCHEMA, ArenaBundle, GameIdentity, pack_arena, read_arena_bundle, write_arena_bundle};
pub use error::ArenaError;
pub use factory::{ArenaFactory, MatchSeat, MatchSession};
pub use keys::EntrantKeys;
pub use manifest::{
    ARENA_MANIFEST_SCHEMA, AfterRetries, ArenaIdentity, ArenaLevel, ArenaManifest, Entrant, IllegalMoves,
    RatingSettings, Schedule, ScheduleKind,
};
pub use orchestrate::{ArenaObserver, ArenaOptions, ArenaRun, ArenaStatus, run_arena};
pub use plan::{MAX_MATCHES, MatchPlan, plan_matches};
pub use ratings::{Rating, rate};
pub use referee::{FORFEIT_TAG, RANDOM_TAG, RefereeDriver, SeatConduct};
pub use result::{
    MatchRecord, MatchResult, PairGame, ReplayConduct, game_ranking, match_ranking, pairwise_games, replay_conduct,
};
pub use standings::{Head, Standing, Standings, standings};
pub use verify::{ArenaVerification, check_match, verify_arena};
