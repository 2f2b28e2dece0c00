//! The built-in drivers, and [`DriverSpec`]: the `--driver` syntax of the
//! CLI (`random`, `random:SEED`, `first-legal`, `scripted:FILE`, `human`,
//! `openai`, `openai:MODEL`, `process:COMMAND`).
//!
//! ```
//! use gaos_runner::drivers::{DriverSpec, DriverSettings};
//!
//! let spec: DriverSpec = "random:7".parse().expect("a valid spec");
//! assert_eq!(spec, DriverSpec::Random { seed: Some(7) });
//! let driver = spec.build(&DriverSettings::new(1, "alice")).expect("builds");
//! assert_eq!(driver.id(), "random");
//! ```

pub mod first_legal;
pub mod human;
pub mod human_view;
#[cfg(feature = "openai")]
pub mod openai;
pub mod process;
pub mod random;
pub mod scripted;

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub use first_legal::FirstLegalDriver;
pub use human::HumanDriver;
#[cfg(feature = "openai")]
pub use openai::{OpenAiConfig, OpenAiDriver};
pub use process::{ProcessConfig, ProcessDriver, ProcessStart};
pub use random::RandomDriver;
pub use scripted::ScriptedDriver;

use gaos_session::ControllerKind;

use crate::driver::AgentDriver;
use crate::error::DriverError;

/// A driver named on a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverSpec {
    /// `random` or `random:SEED`: uniform over the legal actions, seeded.
    Random {
        /// The seed; `None` derives one from the run seed and the seat.
        seed: Option<u32>,
    },
    /// `first-legal`: always the first legal action.
    FirstLegal,
    /// `scripted:FILE`: one JSON command per line of a JSONL file.
    Scripted {
        /// The file.
        path: PathBuf,
    },
    /// `human`: a terminal prompt on stdin/stdout.
    Human,
    /// `openai` or `openai:MODEL`: an OpenAI-compatible chat-completions endpoint.
    OpenAi {
        /// The model, overriding the settings' default.
        model: Option<String>,
    },
    /// `process:COMMAND`: a program speaking JSON lines on stdin/stdout
    /// (see [`process`]); COMMAND is split into words like a shell would.
    Process {
        /// The program and its arguments.
        command: Vec<String>,
    },
}

impl FromStr for DriverSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (name, argument) = match text.split_once(':') {
            Some((name, argument)) => (name, Some(argument)),
            None => (text, None),
        };
        match (name, argument) {
            ("random", None) => Ok(DriverSpec::Random { seed: None }),
            ("random", Some(seed)) => seed
                .parse::<u32>()
                .map(|seed| DriverSpec::Random { seed: Some(seed) })
                .map_err(|_| format!("random:{seed}: the seed must be an integer in 0..=4294967295")),
            ("first-legal", None) => Ok(DriverSpec::FirstLegal),
            ("scripted", Some(path)) if !path.is_empty() => Ok(DriverSpec::Scripted { path: path.into() }),
            ("scripted", _) => Err("scripted needs a file: scripted:PATH (one JSON command per line)".into()),
            ("human", None) => Ok(DriverSpec::Human),
            ("openai", None) => Ok(DriverSpec::OpenAi { model: None }),
            ("openai", Some(model)) if !model.is_empty() => Ok(DriverSpec::OpenAi { model: Some(model.into()) }),
            ("process", Some(command)) => process::split_command(command)
                .map(|command| DriverSpec::Process { command })
                .map_err(|e| format!("process:COMMAND: {e} (e.g. process:'python3 bot.py')")),
            ("process", None) => Err("process needs a command: process:'python3 bot.py'".into()),
            _ => Err(format!(
                "unknown driver {text:?}; use random, random:SEED, first-legal, scripted:FILE, human, openai, \
                 openai:MODEL or process:COMMAND"
            )),
        }
    }
}

/// What [`DriverSpec::build`] needs besides the spec.
#[derive(Debug, Clone)]
pub struct DriverSettings {
    /// The run seed (random drivers without their own seed use
    /// `seed XOR fnv1a32(seat)`, so seats differ but runs repeat).
    pub seed: u32,
    /// The seat the driver will play.
    pub seat: String,
    /// Settings of `openai` drivers.
    #[cfg(feature = "openai")]
    pub openai: OpenAiConfig,
    /// Settings of `process` drivers.
    pub process: ProcessSettings,
}

/// What a `process` driver is told and where it runs, besides its command.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProcessSettings {
    /// The `start` message (its `seat` is replaced by the settings' seat).
    pub start: ProcessStart,
    /// The working directory (default: this process's).
    pub cwd: Option<PathBuf>,
    /// How long each decision may take (default 10 s).
    pub deadline: Option<Duration>,
    /// Append the program's stderr here (default: this process's stderr).
    pub stderr_log: Option<PathBuf>,
}

impl DriverSettings {
    /// Settings for `seat` with run seed `seed` and default `openai` settings.
    pub fn new(seed: u32, seat: impl Into<String>) -> Self {
        DriverSettings {
            seed,
            seat: seat.into(),
            #[cfg(feature = "openai")]
            openai: OpenAiConfig::default(),
            process: ProcessSettings::default(),
        }
    }
}

impl DriverSpec {
    /// Build the driver.
    pub fn build(&self, settings: &DriverSettings) -> Result<Box<dyn AgentDriver>, DriverError> {
        Ok(match self {
            DriverSpec::Random { seed } => {
                let seed = seed.unwrap_or_else(|| settings.seed ^ gaos_json::fnv1a32(&settings.seat));
                Box::new(RandomDriver::new(seed))
            }
            DriverSpec::FirstLegal => Box::new(FirstLegalDriver::new()),
            DriverSpec::Scripted { path } => Box::new(ScriptedDriver::from_path(path)?),
            DriverSpec::Human => Box::new(HumanDriver::stdio()),
            #[cfg(feature = "openai")]
            DriverSpec::OpenAi { model } => {
                let mut config = settings.openai.clone();
                if let Some(model) = model {
                    config.model = model.clone();
                }
                Box::new(OpenAiDriver::new(config)?)
            }
            DriverSpec::Process { command } => {
                let process = &settings.process;
                let start = ProcessStart { seat: settings.seat.clone(), ..process.start.clone() };
                let config = ProcessConfig {
                    cwd: process.cwd.clone(),
                    deadline: process.deadline.unwrap_or(process::DEFAULT_DEADLINE),
                    stderr_log: process.stderr_log.clone(),
                    ..ProcessConfig::new(command.clone(), start)
                };
                Box::new(ProcessDriver::new(config)?)
            }
            #[cfg(not(feature = "openai"))]
            DriverSpec::OpenAi { .. } => {
                return Err(DriverError::Config("this build of gaos-runner has no `openai` feature".into()));
            }
        })
    }
}

impl DriverSpec {
    /// What sort of controller this driver is (`SessionControllerIdentity.kind`).
    pub fn controller_kind(&self) -> ControllerKind {
        match self {
            DriverSpec::Human => ControllerKind::Human,
            DriverSpec::OpenAi { .. } => ControllerKind::Provider,
            DriverSpec::Process { .. } => ControllerKind::Cli,
            DriverSpec::Random { .. } | DriverSpec::FirstLegal | DriverSpec::Scripted { .. } => {
                ControllerKind::LocalAgent
            }
        }
    }
}

/// The controller kind of a session whose seats `specs` play: theirs when
/// they all agree, `mixed` when they differ (or there are none).
pub fn session_controller_kind<'a>(specs: impl IntoIterator<Item = &'a DriverSpec>) -> ControllerKind {
    let mut kinds = specs.into_iter().map(DriverSpec::controller_kind);
    let Some(first) = kinds.next() else { return ControllerKind::Mixed };
    if kinds.all(|kind| kind == first) { first } else { ControllerKind::Mixed }
}
