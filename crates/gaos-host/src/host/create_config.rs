//! A create request read against its game: the session's configuration.
//! The request's own shape was checked when it was read
//! ([`CreateRequest`]); what is checked here needs the game (its levels and
//! seats, a run's levels, a timeout mapper) or the host (lease bounds).

use std::sync::Arc;

use gaos_kernel::{Cadence, Game, SeedPolicy};
use gaos_session::policy::SessionPolicy;

use crate::config::{LeaseBounds, SessionConfig};
use crate::error::HostError;
use crate::requests::CreateRequest;
use crate::requests::check_seats;
use crate::run_spec::RunSpec;

fn bad(message: impl Into<String>) -> HostError {
    HostError::invalid_request(message)
}

/// The configuration of a new session `session_id` of `game` as `request`
/// asks for it (`generated_seed` when it names none).
pub(super) fn parse_create(
    request: &CreateRequest,
    game: &Arc<dyn Game>,
    session_id: String,
    generated_seed: u32,
    now_ms: i64,
    bounds: &LeaseBounds,
) -> Result<SessionConfig, HostError> {
    let run = request.run.as_ref().map(|v| RunSpec::parse_request(v, game.as_ref()).map_err(bad)).transpose()?;
    let levels = game.levels();
    let (level_id, level_version, level) = match (&run, &request.level_id, &request.level) {
        (Some(run), _, _) => {
            let first = run.levels[0].clone();
            (first.id, first.version, first.level)
        }
        (None, Some(id), Some(level)) => (id.clone(), request.level_version.clone(), level.clone()),
        (None, None, Some(level)) => ("custom".to_owned(), request.level_version.clone(), level.clone()),
        (None, Some(id), None) => {
            let spec = levels.iter().find(|l| &l.id == id).ok_or_else(|| {
                let known: Vec<&str> = levels.iter().map(|l| l.id.as_str()).collect();
                bad(format!("game {} has no level {id:?} (levels: {})", game.game_ref().id, known.join(", ")))
            })?;
            (spec.id.clone(), spec.version.clone(), spec.level.clone())
        }
        (None, None, None) => {
            let spec = levels.first().ok_or_else(|| bad("the game ships no default level; pass level"))?;
            (spec.id.clone(), spec.version.clone(), spec.level.clone())
        }
    };
    let seats = match &request.seats {
        Some(seats) => seats.clone(),
        None => {
            let seats = game.seats();
            check_seats(&seats)?;
            seats
        }
    };
    let creator = match &request.participant_id {
        None => seats[0].clone(),
        Some(seat) if seats.contains(seat) => seat.clone(),
        Some(_) => return Err(bad(format!("participantId must be one of the seats ({})", seats.join(", ")))),
    };
    // A request that names no cadence gets the one the game offers.
    let cadence = request.cadence.unwrap_or_else(|| game.cadence());
    if request.timeouts.is_some() {
        if !game.has_timeout_mapper() {
            return Err(bad(format!(
                "game {} has no timeout mapper, so the host cannot play for a seat whose turn times out",
                game.game_ref().id
            )));
        }
        if cadence != Cadence::Turns {
            return Err(bad("timeouts.turnMs applies to turns cadence; ticks sessions advance on their own"));
        }
    }
    let lease_ms = request.lease.map(|lease| lease.duration(bounds)).transpose()?.flatten();
    let signing =
        crate::signing::parse_create_signing(&request.signing, &seats, run.is_some(), &cadence, game.as_ref())?;
    Ok(SessionConfig {
        session_id,
        game: game.game_ref().id,
        level_id,
        level_version,
        level,
        seed: request.seed.unwrap_or(generated_seed),
        seed_policy: SeedPolicy::Explicit,
        seats,
        creator,
        cadence,
        limits: request.limits,
        timeouts: request.timeouts,
        receipts: request.receipts,
        policy: request.policy.clone().unwrap_or_else(SessionPolicy::host_default),
        created_at_ms: now_ms,
        lease_ms,
        module_sha256: None,
        run,
        manifest: None,
        seat_keys: signing.seat_keys,
        seat_keys_at_attach: signing.at_attach,
        timeout_policy: signing.timeout_policy,
        registered_keys: Vec::new(),
    })
}
