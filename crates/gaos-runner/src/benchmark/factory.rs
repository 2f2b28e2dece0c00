//! [`SessionFactory`]: how benchmark orchestration obtains each episode's
//! sessions, and the pieces every factory shares (episode requests, the
//! evaluation policy, driver assignment, counting a seat's accepted
//! commands).
//!
//! A factory returns ordinary [`SessionHandle`]s (`Box<dyn SessionHandle>`)
//! with their drivers; the orchestrator runs each with [`crate::run_session`].
//! There is no benchmark-specific handle or runner (RFC-018 §9, §12.12):
//! gaos-host implements the factory over its in-process handle, gaos-client
//! over its HTTP handle.

use gaos_json::{Value, fnv1a32, obj};

use crate::benchmark::checkpoint::{AgentIdentity, AgentKind, InProgressEpisode};
use crate::benchmark::manifest::BenchmarkManifest;
use crate::benchmark::plan::EpisodePlan;
use crate::driver::AgentDriver;
use crate::drivers::{DriverSettings, DriverSpec, RandomDriver};
use crate::error::DriverError;
use crate::error::FactoryError;
use gaos_session::{BoxFuture, SessionHandle};
use gaos_session::{ControllerKind, EvaluationPolicy, SessionControllerIdentity, SessionPolicy};

/// One seat of an episode: its handle, its driver, and how many of its
/// decisions the session already holds (0 for a new session; on attach,
/// the driver has already been moved past them with
/// [`AgentDriver::resume_after`]).
pub struct EpisodeSeat {
    /// The seat's handle (create or attach; the same type either way).
    pub handle: Box<dyn SessionHandle>,
    /// The seat's driver.
    pub driver: Box<dyn AgentDriver>,
    /// Commands of this seat the session held before this run.
    pub accepted: u64,
}

impl std::fmt::Debug for EpisodeSeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpisodeSeat")
            .field("session", &self.handle.session_id())
            .field("seat", &self.handle.seat())
            .field("driver", &self.driver.id())
            .field("accepted", &self.accepted)
            .finish()
    }
}

/// An episode's sessions, ready to run.
#[derive(Debug)]
pub struct EpisodeSession {
    /// Every seat to drive; the first is the scored seat (its run finalizes
    /// the session and its decisions are the episode's steps).
    pub seats: Vec<EpisodeSeat>,
    /// What [`SessionFactory::attach_episode`] needs to attach these
    /// sessions again (recorded in the checkpoint before any action).
    pub attachment: Value,
    /// The attach receipt's digest, when an attach produced one.
    pub attach_receipt_digest: Option<String>,
}

/// Creates (or attaches) the sessions of one planned episode.
pub trait SessionFactory: Send + Sync {
    /// `createEpisode(plan)`: new sessions for a planned episode.
    fn create_episode<'a>(&'a self, plan: &'a EpisodePlan) -> BoxFuture<'a, Result<EpisodeSession, FactoryError>>;

    /// `attachEpisode(inProgress)`: attach the sessions of an episode that
    /// started in an earlier run, at their durable head, with drivers moved
    /// past the decisions the sessions already hold.
    fn attach_episode<'a>(
        &'a self,
        in_progress: &'a InProgressEpisode,
    ) -> BoxFuture<'a, Result<EpisodeSession, FactoryError>>;
}

/// The level an episode plays: the game's level named by the task id, with
/// its `maxSteps` (when the level has one) set to the task's `maxSteps`, so
/// the game itself ends the episode within the budget.
pub fn episode_level(level: &Value, plan: &EpisodePlan) -> Value {
    let mut level = level.clone();
    if let Some(map) = level.as_object_mut()
        && map.contains_key("maxSteps")
    {
        map.insert("maxSteps".into(), plan.max_steps.into());
    }
    level
}

/// The create request of an episode: `{game: game_id, levelId: task id,
/// level?, seed: plan.seed, participantId: scored seat, sessionId?}`
/// (`game_id` is `benchmark.adapter`, or the id of the game module it names). `level` is the game's level when the factory knows it
/// (see [`episode_level`]); `session_id` asks the host for a fixed id.
pub fn episode_request(
    game_id: &str,
    plan: &EpisodePlan,
    scored_seat: &str,
    level: Option<&Value>,
    session_id: Option<&str>,
) -> Value {
    let mut map = obj! {
        "game" => game_id,
        "levelId" => plan.task_id.clone(),
        "seed" => plan.seed,
        "participantId" => scored_seat,
    };
    if let Some(level) = level {
        map.insert("level".into(), episode_level(level, plan));
    }
    if let Some(id) = session_id {
        map.insert("sessionId".into(), id.into());
    }
    Value::Object(map)
}

/// A deterministic session id for an episode, for hosts that accept one
/// (`bench-<index>-<episode id>`, characters outside `[A-Za-z0-9_.:@-]`
/// replaced by `_`, at most 128 characters). Replays name their session,
/// so fixed ids make a rerun's bundle byte-identical.
pub fn episode_session_id(plan: &EpisodePlan) -> String {
    let raw = format!("bench-{}-{}", plan.index, plan.episode_id());
    raw.chars().map(|c| if c.is_ascii_alphanumeric() || "_.:@-".contains(c) { c } else { '_' }).take(128).collect()
}

/// The session policy of every benchmark episode: official evaluation bound
/// to the manifest digest, attachable (resume), replay evidence (the
/// bundle needs it), no publication, and the agent as controller.
pub fn episode_policy(manifest: &BenchmarkManifest, agent: &AgentIdentity) -> SessionPolicy {
    let kind = match agent.kind {
        AgentKind::Local => ControllerKind::LocalAgent,
        AgentKind::Provider => ControllerKind::Provider,
        AgentKind::Cli => ControllerKind::Cli,
    };
    let controller = SessionControllerIdentity::new(kind, agent.id.clone());
    let value: Value = obj! {
        "evaluation" => EvaluationPolicy::official(&manifest.benchmark.id, &manifest.benchmark.version, &manifest.digest()).to_value(),
        "durability" => obj! { "attachable" => true },
        "evidence" => obj! { "kind" => "replay" },
        "publication" => obj! { "kind" => "none" },
        "controller" => controller.to_value(),
    }
    .into();
    SessionPolicy::from_value(&value).expect("the benchmark policy is a valid session policy")
}

/// Which driver plays which seat: `--driver SPEC` (every seat) and
/// `--driver SEAT=SPEC` (one seat). Unassigned seats play `random`.
///
/// Every episode gets its own drivers, seeded from the plan entry alone
/// ([`EpisodePlan::driver_seed`], XOR `fnv1a32(seat)`; `random:SEED` mixes
/// SEED in), so scores never depend on scheduling.
///
/// ```
/// use gaos_runner::benchmark::DriverAssignment;
///
/// let drivers = DriverAssignment::parse(&["random".into(), "b=first-legal".into()]).expect("valid");
/// assert_eq!(drivers.agent("a").id, "random,b=first-legal");
/// assert!(DriverAssignment::parse(&["random".into(), "first-legal".into()]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DriverAssignment {
    default: (String, DriverSpec),
    seats: Vec<(String, String, DriverSpec)>,
}

impl DriverAssignment {
    /// Read `--driver` values (`SPEC` at most once, `SEAT=SPEC` at most once per seat).
    pub fn parse(arguments: &[String]) -> Result<Self, String> {
        let mut default: Option<(String, DriverSpec)> = None;
        let mut seats: Vec<(String, String, DriverSpec)> = Vec::new();
        for argument in arguments {
            let seat_part = argument.split_once('=').filter(|(seat, _)| {
                !seat.is_empty()
                    && !seat.contains(':')
                    && seat.chars().all(|c| c.is_ascii_alphanumeric() || "_.:@-".contains(c))
            });
            match seat_part {
                Some((seat, spec_text)) => {
                    let spec: DriverSpec = spec_text.parse().map_err(|e| format!("--driver {argument}: {e}"))?;
                    if seats.iter().any(|(s, _, _)| s == seat) {
                        return Err(format!("--driver names seat {seat:?} twice"));
                    }
                    seats.push((seat.to_owned(), spec_text.to_owned(), spec));
                }
                None => {
                    let spec: DriverSpec = argument.parse().map_err(|e| format!("--driver {argument}: {e}"))?;
                    if default.is_some() {
                        return Err(format!(
                            "--driver {argument}: only one --driver may omit SEAT= (it plays every other seat)"
                        ));
                    }
                    default = Some((argument.clone(), spec));
                }
            }
        }
        seats.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(DriverAssignment {
            default: default.unwrap_or_else(|| ("random".into(), DriverSpec::Random { seed: None })),
            seats,
        })
    }

    /// The spec that plays `seat`.
    pub fn spec_for(&self, seat: &str) -> &DriverSpec {
        self.seats.iter().find(|(s, _, _)| s == seat).map_or(&self.default.1, |(_, _, spec)| spec)
    }

    /// Seats named with `SEAT=SPEC`.
    pub fn named_seats(&self) -> impl Iterator<Item = &str> {
        self.seats.iter().map(|(seat, _, _)| seat.as_str())
    }

    /// The agent identity: kind from the scored seat's driver (`openai` is a
    /// provider, `process` a CLI, the rest run locally), id from the whole
    /// assignment.
    pub fn agent(&self, scored_seat: &str) -> AgentIdentity {
        let kind = match self.spec_for(scored_seat) {
            DriverSpec::OpenAi { .. } => AgentKind::Provider,
            DriverSpec::Process { .. } => AgentKind::Cli,
            _ => AgentKind::Local,
        };
        let mut id = self.default.0.clone();
        for (seat, text, _) in &self.seats {
            id.push_str(&format!(",{seat}={text}"));
        }
        AgentIdentity { kind, id }
    }

    /// A fresh driver for `seat` in episode `plan`. `settings` supplies the
    /// model settings; its seed and seat are replaced.
    pub fn build(
        &self,
        seat: &str,
        plan: &EpisodePlan,
        settings: &DriverSettings,
    ) -> Result<Box<dyn AgentDriver>, DriverError> {
        let episode_seed = plan.driver_seed();
        match self.spec_for(seat) {
            DriverSpec::Random { seed } => {
                Ok(Box::new(RandomDriver::new(seed.unwrap_or(0) ^ episode_seed ^ fnv1a32(seat))))
            }
            spec => {
                let mut settings = settings.clone();
                settings.seed = episode_seed;
                settings.seat = seat.to_owned();
                spec.build(&settings)
            }
        }
    }
}

/// Commands of `seat` accepted in a session, counted in its transcript
/// (JSONL: a header line, then one event per line; `intent-accepted`
/// events of the seat). Factories use it to move a resumed driver past the
/// decisions the session already holds.
pub fn accepted_commands(transcript: &str, seat: &str) -> Result<u64, String> {
    crate::host_seats::accepted_submissions(transcript, seat).map(|ids| ids.len() as u64)
}
