//! What `gaos bench run` checks before any session is created: the
//! manifest, its scoring plugin and game (a module beside the manifest, or a
//! built-in), the entrants (drivers, settings, seat keys) and the output
//! directory with its checkpoint.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_kernel::Game;
use gaos_runner::benchmark::{
    AgentIdentity, BenchmarkManifest, Checkpoint, DriverAssignment, EpisodeHost, GameInfo, HostedEpisodeFactory,
    SessionFactory, scoring_plugin,
};
use gaos_runner::drivers::{DriverSettings, DriverSpec};

use super::RunArgs;

/// Everything `run` needs, checked before any session is created.
pub(super) struct Setup {
    pub(super) manifest: BenchmarkManifest,
    pub(super) scorer: Arc<dyn gaos_runner::benchmark::ScoringPlugin>,
    pub(super) game: Arc<dyn Game>,
    pub(super) registry: GameRegistry,
    /// The SHA-256 of the game module `benchmark.adapter` names, if it names one.
    pub(super) module_sha256: Option<String>,
    pub(super) entrants: Entrants,
    pub(super) out: PathBuf,
    pub(super) checkpoint: PathBuf,
    pub(super) resume: Option<Checkpoint>,
}

pub(super) fn setup(args: &RunArgs, registry: &GameRegistry) -> Result<Setup, String> {
    let text = std::fs::read_to_string(&args.manifest)
        .map_err(|e| format!("cannot read the manifest {}: {e}", args.manifest.display()))?;
    let manifest = BenchmarkManifest::parse(&text).map_err(|e| format!("{}: {e}", args.manifest.display()))?;
    let scorer: Arc<dyn gaos_runner::benchmark::ScoringPlugin> =
        Arc::from(scoring_plugin(&manifest.scoring.plugin).map_err(|e| e.to_string())?);
    let mut registry = registry.clone();
    let (game_id, module_sha256) = if crate::modules::is_module_reference(&manifest.benchmark.adapter) {
        // A module path is relative to the manifest, so a benchmark directory moves as one.
        let path = args.manifest.parent().unwrap_or(Path::new("")).join(&manifest.benchmark.adapter);
        crate::modules::add_module_with_sha(&mut registry, &path, &args.module_limits.limits()?)?
    } else {
        (manifest.benchmark.adapter.clone(), None)
    };
    let game = registry.get(&game_id).ok_or_else(|| {
        let known: Vec<String> = registry.list().iter().map(|g| g.game_ref().id).collect();
        format!(
            "benchmark.adapter {:?} is not a game gaos knows (games: {})",
            manifest.benchmark.adapter,
            known.join(", ")
        )
    })?;
    let drivers = DriverAssignment::parse(&args.drivers)?;
    if args.jobs == 0 {
        return Err("--jobs must be at least 1".into());
    }
    let human = game.seats().iter().any(|seat| *drivers.spec_for(seat) == DriverSpec::Human);
    if human && args.jobs > 1 {
        return Err("a human driver plays one episode at a time; use --jobs 1".into());
    }
    let manifest_dir = args.manifest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let process = gaos_runner::drivers::ProcessSettings {
        cwd: Some(std::fs::canonicalize(manifest_dir).map_err(|e| format!("{}: {e}", manifest_dir.display()))?),
        ..Default::default()
    };
    let settings = DriverSettings { openai: args.openai.config(), process, ..DriverSettings::new(0, "player") };
    let out = match (&args.out, args.resume) {
        (Some(out), _) => out.clone(),
        (None, true) => return Err("--resume needs --out DIR (the directory of the run to continue)".into()),
        (None, false) => crate::run_support::default_run_dir(&manifest.benchmark.id),
    };
    let checkpoint = out.join("checkpoint.json");
    let resume = if args.resume {
        if !checkpoint.exists() {
            return Err(format!("{} holds no run to resume (no checkpoint.json)", out.display()));
        }
        Some(Checkpoint::load(&checkpoint).map_err(|e| e.to_string())?)
    } else {
        if checkpoint.exists() {
            return Err(format!(
                "{} already holds a run; pass --resume to continue it, or choose another --out",
                out.display()
            ));
        }
        std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        None
    };
    let seat_keys = crate::seat_key_args::read_seat_keys(&args.seat_keys, &game.seats())?;
    if manifest.submission.require_signed_seats && seat_keys.is_empty() {
        return Err(format!(
            "the manifest requires signed seats (submission.requireSignedSeats): pass --seat-key SEAT=FILE for the \
             benchmarked seat {} (make a key with gaos keygen --seat {0} --out FILE)",
            game.seats().first().map_or("", String::as_str)
        ));
    }
    let entrants = Entrants { drivers, settings, seat_keys };
    Ok(Setup { manifest, scorer, game, registry, module_sha256, entrants, out, checkpoint, resume })
}

/// Who plays each episode: the drivers, their settings and the seat keys
/// they sign with (`--seat-key`; none: unsigned episodes).
pub(super) struct Entrants {
    drivers: DriverAssignment,
    settings: DriverSettings,
    seat_keys: std::collections::BTreeMap<String, gaos_runner::signing::SeatSigningKey>,
}

impl Entrants {
    /// The run's episode factory on `host`, and the agent it plays as.
    pub(super) fn factory<H: EpisodeHost + 'static>(
        self,
        host: H,
        manifest: &BenchmarkManifest,
        game: &dyn Game,
    ) -> Result<(Arc<dyn SessionFactory>, AgentIdentity), String> {
        let factory = HostedEpisodeFactory::new(host, manifest, GameInfo::from_game(game), self.drivers, self.settings)
            .and_then(|factory| factory.signed_by(self.seat_keys))
            .map_err(|e| e.to_string())?;
        let agent = factory.agent();
        Ok((Arc::new(factory), agent))
    }
}
