//! [`HostedEpisodeFactory`]: the [`SessionFactory`] for GAOS hosts. It owns
//! everything an episode needs besides the host's transport: the create
//! request and policy, one session per episode with every seat attached,
//! the attachment recorded for resume, and attaching again with drivers
//! moved past the commands the session holds. A host plugs in by
//! implementing [`EpisodeHost`] (gaos-host in process, gaos-client over
//! HTTP); the handles it returns are the ordinary ones.

use gaos_session::ErrorCode;
use std::collections::BTreeMap;

use gaos_json::{Map, Value, obj};

use crate::benchmark::checkpoint::{AgentIdentity, InProgressEpisode};
use crate::benchmark::error::FactoryError;
use crate::benchmark::factory::{
    DriverAssignment, EpisodeSeat, EpisodeSession, SessionFactory, accepted_commands, episode_policy, episode_request,
    episode_session_id,
};
use crate::benchmark::manifest::BenchmarkManifest;
use crate::benchmark::plan::EpisodePlan;
use crate::drivers::DriverSettings;
use gaos_session::signing::SeatSigningKey;
use gaos_session::{AttachRequest, BoxFuture, EpisodeHost, SessionPolicy};

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

    /// The key `seat` signs with in episode `plan` (`None`: unsigned episodes).
    fn seat_key(&self, plan: &EpisodePlan, seat: &str) -> Option<SeatSigningKey> {
        if let Some(key) = self.seat_keys.get(seat) {
            return Some(key.clone());
        }
        let root = self.game.seats.iter().find_map(|s| self.seat_keys.get(s))?;
        Some(root.derive(&format!("{}/{seat}", episode_session_id(plan))))
    }

    /// `seatKeys` + `signaturePolicy` of a signed episode's create request.
    fn add_signing(&self, plan: &EpisodePlan, request: &mut Map) {
        let keys: Vec<Value> = self
            .game
            .seats
            .iter()
            .filter_map(|seat| self.seat_key(plan, seat).map(|key| key.seat_key(seat, 1)))
            .collect();
        if keys.is_empty() {
            return;
        }
        request.insert("seatKeys".into(), Value::Array(keys));
        request.insert("signaturePolicy".into(), gaos_kernel::signing::signature_policy_value());
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

    fn attachment(session_id: &str, tokens: &BTreeMap<String, String>) -> Value {
        let seats: Map = tokens.iter().map(|(seat, token)| (seat.clone(), Value::from(token.as_str()))).collect();
        obj! { "sessionId" => session_id, "seats" => seats }.into()
    }

    fn driver(&self, seat: &str, plan: &EpisodePlan) -> Result<Box<dyn crate::AgentDriver>, FactoryError> {
        Ok(self.drivers.build(seat, plan, &self.settings)?)
    }

    async fn create(&self, plan: &EpisodePlan) -> Result<EpisodeSession, FactoryError> {
        let scored = self.scored_seat();
        let level = self.game.levels.get(&plan.task_id);
        let session_id = self.host.names_sessions().then(|| episode_session_id(plan));
        let mut request = episode_request(&self.game.id, plan, scored, level, session_id.as_deref());
        // The manifest travels with the create, so any GAOS host can bind
        // the official score to it (the host checks it against the policy's
        // digest), not only one started with `--manifest`.
        if let Some(map) = request.as_object_mut() {
            map.insert("manifest".into(), self.manifest.clone());
            self.add_signing(plan, map);
        }
        let created = match self.host.create(&request, &self.policy, self.seat_key(plan, scored)).await {
            Ok(created) => created,
            // A run stopped between creating this session and recording it:
            // take the session over (new seat tokens) and continue it.
            Err(e) if e.code() == Some(&ErrorCode::SessionExists) => {
                let id = session_id.unwrap_or_default();
                let mut tokens = BTreeMap::new();
                for seat in &self.game.seats {
                    tokens.insert(seat.clone(), self.host.reissue_seat_token(&id, seat).await?);
                }
                let transcript = self.host.transcript(&id).await?;
                return self.attach(plan, &id, &tokens, &transcript).await;
            }
            Err(e) => return Err(e.into()),
        };
        let mut seats = vec![EpisodeSeat { handle: created.handle, driver: self.driver(scored, plan)?, accepted: 0 }];
        for seat in self.game.seats.iter().skip(1) {
            let token = created.seat_tokens.get(seat).ok_or_else(|| {
                FactoryError(format!("the host issued no token for seat {seat:?} of {}", created.session_id))
            })?;
            let request =
                AttachRequest { participant_id: Some(seat.clone()), ..AttachRequest::new(format!("bench:{seat}")) };
            let signing = self.seat_key(plan, seat);
            let handle = self.host.attach(&created.session_id, token, &request, &self.policy, signing).await?;
            seats.push(EpisodeSeat { handle, driver: self.driver(seat, plan)?, accepted: 0 });
        }
        Ok(EpisodeSession {
            seats,
            attachment: Self::attachment(&created.session_id, &created.seat_tokens),
            attach_receipt_digest: None,
        })
    }

    async fn attach(
        &self,
        plan: &EpisodePlan,
        session_id: &str,
        tokens: &BTreeMap<String, String>,
        transcript: &str,
    ) -> Result<EpisodeSession, FactoryError> {
        let events = transcript.lines().count();
        let mut seats = Vec::with_capacity(self.game.seats.len());
        let mut receipt_digest = None;
        for seat in &self.game.seats {
            let token = tokens.get(seat).ok_or_else(|| {
                FactoryError(format!("the checkpoint holds no token for seat {seat:?} of {session_id}"))
            })?;
            // Attach at the durable head; the id names the head (events so far),
            // so a repeated resume at the same head gets the same answer.
            let request = AttachRequest {
                participant_id: Some(seat.clone()),
                ..AttachRequest::new(format!("bench-resume:{seat}:{events}"))
            };
            let handle =
                match self.host.attach(session_id, token, &request, &self.policy, self.seat_key(plan, seat)).await {
                    Ok(handle) => handle,
                    // Finalized before the run recorded it: adopt the head;
                    // run_session repeats the finalize and gets the stored result.
                    Err(e) if e.code() == Some(&ErrorCode::SessionFinalized) => {
                        self.host.adopt(session_id, seat, token, &self.policy).await?
                    }
                    Err(e) => return Err(e.into()),
                };
            if receipt_digest.is_none() {
                receipt_digest = handle.receipt().map(|r| r.receipt_digest);
            }
            let accepted = accepted_commands(transcript, seat).map_err(FactoryError)?;
            let mut driver = self.driver(seat, plan)?;
            driver.resume_after(accepted);
            seats.push(EpisodeSeat { handle, driver, accepted });
        }
        Ok(EpisodeSession {
            seats,
            attachment: Self::attachment(session_id, tokens),
            attach_receipt_digest: receipt_digest,
        })
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
            let attachment = &in_progress.attachment;
            let session_id = attachment
                .get("sessionId")
                .and_then(Value::as_str)
                .ok_or_else(|| FactoryError("the in-progress attachment has no sessionId".into()))?;
            let tokens: BTreeMap<String, String> = attachment
                .get("seats")
                .and_then(Value::as_object)
                .ok_or_else(|| FactoryError("the in-progress attachment has no seat tokens".into()))?
                .iter()
                .filter_map(|(seat, token)| Some((seat.clone(), token.as_str()?.to_owned())))
                .collect();
            match self.host.transcript(session_id).await {
                Ok(transcript) => self.attach(&in_progress.plan, session_id, &tokens, &transcript).await,
                // The host no longer has the session (a private host kept
                // on tmpfs, after a reboot): the episode starts over in a
                // new session. Nothing it did before survives to repeat.
                Err(e) if e.code() == Some(&ErrorCode::UnknownSession) => self.create(&in_progress.plan).await,
                Err(e) => Err(e.into()),
            }
        })
    }
}
