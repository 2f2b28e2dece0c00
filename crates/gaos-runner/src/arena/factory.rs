//! [`ArenaFactory`]: one session per match on a GAOS host (or spread over
//! several), every seat attached with its entrant's driver under the
//! referee, and attached again at the durable head when a resumed run
//! continues a match. A match of an entrant with a `seatKey` is a signed
//! session: every seat's handle signs its moves ([`crate::arena::keys`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use gaos_json::{Map, Value, fnv1a32};
use gaos_session::{EpisodeHost, ErrorCode, SessionControllerIdentity, SessionHandle, SessionPolicy};

use crate::arena::error::ArenaError;
use crate::arena::keys::EntrantKeys;
use crate::arena::manifest::ArenaManifest;
use crate::arena::plan::MatchPlan;
use crate::arena::referee::{FORFEIT_TAG, RANDOM_TAG, RefereeDriver, SeatConduct};
use crate::benchmark::hosted::GameInfo;
use crate::driver::AgentDriver;
use crate::drivers::{
    DriverSettings, DriverSpec, ProcessConfig, ProcessDriver, ProcessStart, RandomDriver, session_controller_kind,
};
use crate::error::FactoryError;
use crate::host_seats::{OpenSeats, add_signing, attach_seats, create_seats, read_attachment};

/// One seat of a match, ready to run.
pub struct MatchSeat {
    /// The seat.
    pub seat: String,
    /// Its handle.
    pub handle: Box<dyn SessionHandle>,
    /// Its entrant's driver, under the referee.
    pub driver: Box<dyn AgentDriver>,
    /// Commands of this seat the session held before this run.
    pub accepted: u64,
    /// What the referee saw.
    pub conduct: Arc<Mutex<SeatConduct>>,
}

/// A match's sessions, ready to run.
pub struct MatchSession {
    /// Every seat, in the game's order (the first finalizes).
    pub seats: Vec<MatchSeat>,
    /// What [`ArenaFactory::attach`] needs to attach again: `{host,
    /// sessionId, seats: {seat: token}}` (recorded before any action).
    pub attachment: Value,
}

/// Creates and attaches the sessions of matches (see the module docs).
pub struct ArenaFactory {
    hosts: Vec<Arc<dyn EpisodeHost>>,
    game: GameInfo,
    manifest: Arc<ArenaManifest>,
    settings: DriverSettings,
    manifest_dir: PathBuf,
    log_dir: Option<PathBuf>,
    policy: SessionPolicy,
    keys: EntrantKeys,
}

impl ArenaFactory {
    /// A factory for `manifest` (read from `manifest_dir`: process entrants
    /// start there, `scripted:` files are found there) on `hosts` (match
    /// `i` goes to host `i mod hosts`). `settings` supplies model settings.
    /// Agent processes append their stderr to `log_dir/<match>.log`.
    /// Refuses levels the game does not have and `seatKey` files that do
    /// not read.
    pub fn new(
        hosts: Vec<Arc<dyn EpisodeHost>>,
        manifest: Arc<ArenaManifest>,
        game: GameInfo,
        settings: DriverSettings,
        manifest_dir: PathBuf,
        log_dir: Option<PathBuf>,
    ) -> Result<Self, ArenaError> {
        if hosts.is_empty() {
            return Err(ArenaError::Options("an arena needs at least one host".into()));
        }
        for (i, level) in manifest.levels.iter().enumerate() {
            if !game.levels.contains_key(&level.id) {
                let known: Vec<&str> = game.levels.keys().map(String::as_str).collect();
                return Err(ArenaError::Plan(format!(
                    "levels[{i}].id: {:?} is not a level of {} (levels: {})",
                    level.id,
                    game.id,
                    known.join(", ")
                )));
            }
        }
        let policy = SessionPolicy::host_default().with_controller(&controller(&manifest));
        let keys = EntrantKeys::load(&manifest, &manifest_dir)?;
        Ok(ArenaFactory { hosts, game, manifest, settings, manifest_dir, log_dir, policy, keys })
    }

    /// The game's id.
    pub fn game_id(&self) -> &str {
        &self.game.id
    }

    /// The game's seats, in order.
    pub fn seats(&self) -> &[String] {
        &self.game.seats
    }

    fn host(&self, plan: &MatchPlan) -> (usize, &dyn EpisodeHost) {
        let i = (plan.index % self.hosts.len() as u64) as usize;
        (i, self.hosts[i].as_ref())
    }

    /// The level a match plays: the game's, with its `maxSteps` (when it
    /// has one) set to the manifest's.
    fn level(&self, plan: &MatchPlan) -> Value {
        let mut level = self.game.levels.get(&plan.level_id).cloned().unwrap_or(Value::Null);
        if let Some(map) = level.as_object_mut()
            && map.contains_key("maxSteps")
        {
            map.insert("maxSteps".into(), self.manifest.max_steps.into());
        }
        level
    }

    /// A fresh driver for `seat` of `plan`: its entrant's, under the referee.
    fn driver(&self, plan: &MatchPlan, seat: &str) -> Result<RefereeDriver, FactoryError> {
        let entrant_id = plan.entrant(seat).ok_or_else(|| FactoryError(format!("the plan has no seat {seat:?}")))?;
        let entrant = self
            .manifest
            .entrant(entrant_id)
            .ok_or_else(|| FactoryError(format!("the manifest has no entrant {entrant_id:?}")))?;
        let seed = plan.driver_seed() ^ fnv1a32(seat);
        let inner: Box<dyn AgentDriver> = match &entrant.driver {
            DriverSpec::Random { seed: own } => Box::new(RandomDriver::new(own.unwrap_or(0) ^ seed)),
            DriverSpec::Process { command } => {
                let start = ProcessStart {
                    game: self.game.id.clone(),
                    seat: seat.to_owned(),
                    level_id: plan.level_id.clone(),
                    level: self.level(plan),
                    seed: plan.seed,
                    entrant: entrant.id.clone(),
                };
                let config = ProcessConfig {
                    cwd: Some(self.manifest_dir.clone()),
                    deadline: std::time::Duration::from_millis(entrant.deadline_ms),
                    stderr_log: self.log_dir.as_ref().map(|dir| dir.join(format!("{}.log", plan.id))),
                    max_reasks: self.manifest.illegal_moves.retries,
                    ..ProcessConfig::new(command.clone(), start)
                };
                Box::new(ProcessDriver::new(config)?)
            }
            DriverSpec::Scripted { path } => {
                DriverSpec::Scripted { path: self.manifest_dir.join(path) }.build(&self.settings)?
            }
            spec => {
                let settings = DriverSettings { seed, seat: seat.to_owned(), ..self.settings.clone() };
                spec.build(&settings)?
            }
        };
        let substitute_seed = fnv1a32(&format!("substitute:{}:{seat}", plan.id));
        Ok(RefereeDriver::new(inner, self.manifest.illegal_moves, substitute_seed))
    }

    fn session(&self, plan: &MatchPlan, host: usize, open: OpenSeats) -> Result<MatchSession, FactoryError> {
        let mut attachment = match open.attachment() {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        attachment.insert("host".into(), host.into());
        let mut seats = Vec::with_capacity(open.handles.len());
        for ((handle, ids), seat) in open.handles.into_iter().zip(open.accepted).zip(&self.game.seats) {
            let tagged = |tag: &str| ids.iter().filter(|id| id.split_once(':').is_some_and(|(t, _)| t == tag)).count();
            let (random, forfeit) = (tagged(RANDOM_TAG) as u64, tagged(FORFEIT_TAG) as u64);
            let accepted = ids.len() as u64;
            let mut driver = self.driver(plan, seat)?;
            if accepted > 0 {
                driver = driver.resumed(accepted - random - forfeit, random + forfeit, forfeit > 0);
            }
            let conduct = driver.conduct();
            seats.push(MatchSeat { seat: seat.clone(), handle, driver: Box::new(driver), accepted, conduct });
        }
        Ok(MatchSession { seats, attachment: Value::Object(attachment) })
    }

    /// New sessions for a planned match: `{game, levelId, level, seed,
    /// participantId: first seat, sessionId?}` (a host private to the run
    /// names it [`MatchPlan::session_id`], so reruns give the same replays).
    pub async fn create(&self, plan: &MatchPlan) -> Result<MatchSession, FactoryError> {
        let (index, host) = self.host(plan);
        let session_id = host.names_sessions().then(|| plan.session_id());
        let mut request = Map::new();
        request.insert("game".into(), self.game.id.clone().into());
        request.insert("levelId".into(), plan.level_id.clone().into());
        request.insert("level".into(), self.level(plan));
        request.insert("seed".into(), plan.seed.into());
        request.insert("participantId".into(), self.game.seats[0].clone().into());
        if let Some(id) = &session_id {
            request.insert("sessionId".into(), id.clone().into());
        }
        let seats = self.keys.for_match(plan, &self.game.seats);
        add_signing(&mut request, &seats);
        let request = Value::Object(request);
        let open = create_seats(host, &request, &self.policy, &seats, session_id.as_deref(), "arena").await?;
        self.session(plan, index, open)
    }

    /// Attach the sessions of a match an earlier run started, at their
    /// durable head, with drivers moved past the moves they hold (or start
    /// it over when the host no longer has the session).
    pub async fn attach(&self, plan: &MatchPlan, attachment: &Value) -> Result<MatchSession, FactoryError> {
        let (session_id, tokens) = read_attachment(attachment)?;
        let index = attachment.get("host").and_then(Value::as_u64).unwrap_or(0) as usize;
        let host = self.hosts.get(index).ok_or_else(|| {
            FactoryError(format!("the match ran on host #{index}, and this run has {} host(s)", self.hosts.len()))
        })?;
        match host.transcript(&session_id).await {
            Ok(transcript) => {
                let seats = self.keys.for_match(plan, &self.game.seats);
                let open =
                    attach_seats(host.as_ref(), &session_id, &tokens, &transcript, &self.policy, &seats, "arena")
                        .await?;
                self.session(plan, index, open)
            }
            Err(e) if e.code() == Some(&ErrorCode::UnknownSession) => self.create(plan).await,
            Err(e) => Err(e.into()),
        }
    }
}

/// The session's controller: `gaos-arena:<id>`, of the kind every entrant
/// shares (`mixed` when they differ).
fn controller(manifest: &ArenaManifest) -> SessionControllerIdentity {
    let kind = session_controller_kind(manifest.entrants.iter().map(|e| &e.driver));
    SessionControllerIdentity::new(kind, format!("gaos-arena:{}", manifest.arena.id))
        .with_version(manifest.arena.version.clone())
}
