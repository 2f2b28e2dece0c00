//! [`HostedEpisodeFactory`]: the [`SessionFactory`] for GAOS hosts. It owns
//! everything an episode needs besides the host's transport: the create
//! request and policy, one session per episode with every seat attached,
//! the attachment recorded for resume, and attaching again with drivers
//! moved past the commands the session holds. A host plugs in by
//! implementing [`EpisodeHost`] (gaos-host in process, gaos-client over
//! HTTP); the handles it returns are the ordinary ones.

use gaos_session::ErrorCode;
use std::collections::BTreeMap;

use gaos_json::Value;

use crate::benchmark::checkpoint::{AgentIdentity, InProgressEpisode};
use crate::benchmark::factory::{
    DriverAssignment, EpisodeSeat, EpisodeSession, SessionFactory, episode_level, episode_policy, episode_request,
    episode_session_id,
};
use crate::benchmark::manifest::BenchmarkManifest;
use crate::benchmark::plan::EpisodePlan;
use crate::drivers::DriverSettings;
use crate::error::FactoryError;
use crate::host_seats::{
    OpenSeats, SignedSeat, add_signing, attach_seats, create_seats, read_attachment, signed_seats,
};
use gaos_session::signing::SeatSigningKey;
use gaos_session::{BoxFuture, EpisodeHost, SessionPolicy};

/// What the factory knows about the benchmark's game.
#[derive(Debug, Clone, PartialEq)]
pub struct GameInfo {
    /// The game id episodes are created with (the manifest's
    /// `benchmark.adapter` may name a game module file instead).
    pub id: String,
    /// The game's seats in declared order (the first is the scored seat).
    pub seats: Vec<String>,
    /// The game's levels by id (a task id must name one).
    pub levels: BTreeMap<String, Value>,
}

impl GameInfo {
    /// The seats and levels a game declares.
    pub fn from_game(game: &dyn gaos_kernel::Game) -> Self {
        GameInfo {
            id: game.game_ref().id,
            seats: game.seats(),
            levels: game.levels().into_iter().map(|l| (l.id, l.level)).collect(),
        }
    }
}

/// The [`SessionFactory`] for GAOS hosts: one session per episode, created
/// with `{game: adapter, levelId: task, level, seed: plan seed,
/// participantId: scored seat, manifest}` under [`episode_policy`] (official
/// evaluation: the host binds the episode's score to the manifest); the other seats
/// attached with their tokens; the attachment is `{sessionId, seats: {seat:
/// token}}`.
pub struct HostedEpisodeFactory<H> {
    host: H,
    game: GameInfo,
    drivers: DriverAssignment,
    settings: DriverSettings,
    policy: SessionPolicy,
    manifest: Value,
    /// Seat keys given for signed episodes (empty: unsigned episodes).
    seat_keys: BTreeMap<String, SeatSigningKey>,
}

impl<H: EpisodeHost> HostedEpisodeFactory<H> {
    /// A factory for `manifest` on `host`. Refuses tasks that name no level
    /// of the game and drivers for seats the game does not have.
    pub fn new(
        host: H,
        manifest: &BenchmarkManifest,
        game: GameInfo,
        drivers: DriverAssignment,
        settings: DriverSettings,
    ) -> Result<Self, FactoryError> {
        let Some(scored) = game.seats.first() else {
            return Err(FactoryError(format!("game {} declares no seat", manifest.benchmark.adapter)));
        };
        for task in &manifest.tasks {
            if !game.levels.contains_key(&task.id) {
                let known: Vec<&str> = game.levels.keys().map(String::as_str).collect();
                return Err(FactoryError(format!(
                    "task {:?} names no level of game {} (levels: {}); a task id is the level it plays",
                    task.id,
                    manifest.benchmark.adapter,
                    known.join(", ")
                )));
            }
        }
        if let Some(seat) = drivers.named_seats().find(|s| !game.seats.iter().any(|g| g == s)) {
            return Err(FactoryError(format!(
                "--driver names seat {seat:?}, but game {} has seats {}",
                manifest.benchmark.adapter,
                game.seats.join(", ")
            )));
        }
        let policy = episode_policy(manifest, &drivers.agent(scored));
        Ok(HostedEpisodeFactory {
            host,
            game,
            drivers,
            settings,
            policy,
            manifest: manifest.value().clone(),
            seat_keys: BTreeMap::new(),
        })
    }

    /// Play signed episodes (RFC-010, `gaos bench run --seat-key SEAT=FILE`):
    /// each episode's create names every seat's public key, and every seat's
    /// handle signs its moves. A seat given no key signs with one derived
    /// from the first given key (in seat order) and the episode
    /// ([`SeatSigningKey::derive`]), so a resume, or a take-over of an
    /// episode whose session outlived its run, signs with the same keys.
    /// Refuses keys for seats the game does not have.
    pub fn signed_by(mut self, keys: BTreeMap<String, SeatSigningKey>) -> Result<Self, FactoryError> {
        if let Some(seat) = keys.keys().find(|s| !self.game.seats.contains(s)) {
            return Err(FactoryError(format!(
                "--seat-key names seat {seat:?}, but game {} has seats {}",
                self.game.id,
                self.game.seats.join(", ")
            )));
        }
        self.seat_keys = keys;
        Ok(self)
    }

    /// Every seat of episode `plan` with its key, in seat order (no keys: unsigned).
    fn signed_seats(&self, plan: &EpisodePlan) -> Vec<SignedSeat> {
        signed_seats(&self.game.seats, |seat| self.seat_keys.get(seat).cloned(), &episode_session_id(plan))
    }

    /// The agent identity (the scored seat's driver kind, the assignment as id).
    pub fn agent(&self) -> AgentIdentity {
        self.drivers.agent(self.scored_seat())
    }

    /// The scored seat (the game's first).
    pub fn scored_seat(&self) -> &str {
        &self.game.seats[0]
    }

    /// The host.
    pub fn host(&self) -> &H {
        &self.host
    }

    fn driver(&self, seat: &str, plan: &EpisodePlan) -> Result<Box<dyn crate::AgentDriver>, FactoryError> {
        // A `process` driver is told what it plays.
        let mut settings = self.settings.clone();
        let start = &mut settings.process.start;
        start.game = self.game.id.clone();
        start.level_id = plan.task_id.clone();
        start.level = self.game.levels.get(&plan.task_id).map_or(Value::Null, |level| episode_level(level, plan));
        start.seed = plan.seed;
        start.entrant = self.agent().id;
        Ok(self.drivers.build(seat, plan, &settings)?)
    }

    /// The episode's sessions from open seats: a driver per seat, moved
    /// past the commands the session already holds.
    fn episode(&self, plan: &EpisodePlan, open: OpenSeats) -> Result<EpisodeSession, FactoryError> {
        let attachment = open.attachment();
        let mut seats = Vec::with_capacity(open.handles.len());
        for ((handle, accepted), seat) in open.handles.into_iter().zip(open.accepted).zip(&self.game.seats) {
            let accepted = accepted.len() as u64;
            let mut driver = self.driver(seat, plan)?;
            if accepted > 0 {
                driver.resume_after(accepted);
            }
            seats.push(EpisodeSeat { handle, driver, accepted });
        }
        Ok(EpisodeSession { seats, attachment, attach_receipt_digest: open.receipt_digest })
    }

    async fn create(&self, plan: &EpisodePlan) -> Result<EpisodeSession, FactoryError> {
        let scored = self.scored_seat();
        let level = self.game.levels.get(&plan.task_id);
        let session_id = self.host.names_sessions().then(|| episode_session_id(plan));
        let mut request = episode_request(&self.game.id, plan, scored, level, session_id.as_deref());
        // The manifest travels with the create, so any GAOS host can bind
        // the official score to it (the host checks it against the policy's
        // digest), not only one started with `--manifest`.
        let seats = self.signed_seats(plan);
        if let Some(map) = request.as_object_mut() {
            map.insert("manifest".into(), self.manifest.clone());
            add_signing(map, &seats);
        }
        let open = create_seats(&self.host, &request, &self.policy, &seats, session_id.as_deref(), "bench").await?;
        self.episode(plan, open)
    }
}

impl<H: EpisodeHost> SessionFactory for HostedEpisodeFactory<H> {
    fn create_episode<'a>(&'a self, plan: &'a EpisodePlan) -> BoxFuture<'a, Result<EpisodeSession, FactoryError>> {
        Box::pin(self.create(plan))
    }

    fn attach_episode<'a>(
        &'a self,
        in_progress: &'a InProgressEpisode,
    ) -> BoxFuture<'a, Result<EpisodeSession, FactoryError>> {
        Box::pin(async move {
            let (session_id, tokens) = read_attachment(&in_progress.attachment)?;
            match self.host.transcript(&session_id).await {
                Ok(transcript) => {
                    let seats = self.signed_seats(&in_progress.plan);
                    let open =
                        attach_seats(&self.host, &session_id, &tokens, &transcript, &self.policy, &seats, "bench")
                            .await?;
                    self.episode(&in_progress.plan, open)
                }
                // The host no longer has the session (a private host kept
                // on tmpfs, after a reboot): the episode starts over in a
                // new session. Nothing it did before survives to repeat.
                Err(e) if e.code() == Some(&ErrorCode::UnknownSession) => self.create(&in_progress.plan).await,
                Err(e) => Err(e.into()),
            }
        })
    }
}
