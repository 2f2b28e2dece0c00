//! `gaos bench run | verify`: benchmark orchestration on the command line.
//!
//! `run` plays a `gaos.benchmark-manifest.v1` with one driver per seat,
//! every episode an ordinary session (in process on a private host in
//! `OUT/host`, or on `--host URL`) driven by `run_session`; it checkpoints
//! to `OUT/checkpoint.json` (plus its journal), shows a progress bar (plain lines when stderr
//! is not a terminal), packs and verifies the bundle in `OUT/bundle`,
//! prints a per-task table and writes `OUT/scores.svg` and `OUT/report.html`. `--resume` continues
//! a stopped run without redoing completed episodes. `verify` checks a
//! bundle: exit 0 valid, 1 invalid, 2 usage or IO error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use gaos_games::GameRegistry;
use gaos_json::{Map, Value, canonical_json};
use gaos_kernel::{Game, GameRef};
use gaos_runner::benchmark::{
    BenchmarkError, BenchmarkManifest, BenchmarkObserver, BenchmarkOptions, BenchmarkRun, BenchmarkStatus,
    BundleReadError, CompletedEpisode, EpisodePlan, ReplayEpisodeVerifier, SessionFactory, Submission,
    pack_run_with_module, read_bundle_dir, run_benchmark, scoring_plugin, verify_bundle, write_bundle_dir,
};
use indicatif::ProgressBar;
use setup::{Setup, setup};

mod setup;

/// `gaos bench` subcommands.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Run (or --resume) a benchmark manifest; pack, verify and chart its bundle.
    Run(Box<RunArgs>),
    /// Verify a benchmark bundle (exit 0 valid, 1 invalid, 2 usage or IO error).
    Verify(VerifyArgs),
}

/// `gaos bench run` arguments.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The manifest (gaos.benchmark-manifest.v1 JSON).
    manifest: PathBuf,
    /// SPEC (every seat) or SEAT=SPEC; SPEC is random | random:SEED | first-legal |
    /// scripted:FILE | human | openai | openai:MODEL | process:COMMAND (started in the
    /// manifest's directory). Seats not named play random.
    #[arg(long = "driver")]
    drivers: Vec<String>,
    /// Signed episodes (RFC-010): SEAT signs its moves with the key FILE
    /// (`gaos keygen`); repeatable. Every seat then signs, a seat without a
    /// file with a key derived from the first given one and the episode.
    /// Required by a manifest with submission.requireSignedSeats.
    #[arg(long = "seat-key", value_name = "SEAT=FILE")]
    seat_keys: Vec<String>,
    /// Episodes run at once.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Output directory: checkpoint.json, host/ (in process), bundle/, scores.svg
    /// (default runs/<benchmark id>-<unix ms>; required with --resume).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue the run in --out: keep its completed episodes, attach the ones in progress.
    #[arg(long)]
    resume: bool,
    /// In process: the private host's data directory (default OUT/host). A tmpfs
    /// directory (e.g. /dev/shm/NAME) skips fsync costs; a resume after a reboot
    /// then starts its in-progress episodes over.
    #[arg(long, conflicts_with = "host")]
    host_data: Option<PathBuf>,
    /// Run the episodes on a running host (e.g. http://127.0.0.1:8899)
    /// instead of in process; several hosts of a cluster separated by
    /// commas spread the episodes over them.
    #[arg(long)]
    host: Option<String>,
    /// Operator token for --host (default: $GAOS_OPERATOR_TOKEN).
    #[arg(long)]
    token: Option<String>,
    /// Start at most this many episodes, then stop (status interrupted; --resume continues).
    #[arg(long)]
    max_episodes: Option<usize>,
    #[command(flatten)]
    openai: crate::openai_args::OpenAiArgs,
    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    module_limits: crate::modules::ModuleLimitArgs,
    /// Testing only: measure every episode's wallClockMs on a simulated
    /// clock on which each episode takes exactly MS ms, so runs repeat byte for byte.
    #[arg(long, hide = true, value_name = "MS")]
    test_clock_ms: Option<u64>,
}

/// `gaos bench verify` arguments.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The bundle directory (or a run's output directory holding bundle/).
    dir: PathBuf,
    /// An independent copy of the manifest (default: the bundle's own, which proves less).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Print the verification result as one JSON object.
    #[arg(long)]
    json: bool,
    /// The game module of a benchmark whose `benchmark.adapter` names one
    /// (default: that path, beside --manifest). Every episode must have run
    /// a module with this file's SHA-256.
    #[arg(long, value_name = "FILE")]
    adapter: Option<PathBuf>,
    #[command(flatten)]
    module_limits: crate::modules::ModuleLimitArgs,
}

/// Run `gaos bench` with the games of `registry`.
pub fn run(command: BenchCommand, registry: &GameRegistry) -> ExitCode {
    match command {
        BenchCommand::Run(args) => run_command(*args, registry),
        BenchCommand::Verify(args) => verify_command(args, registry),
    }
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("gaos bench: {message}");
    ExitCode::from(2)
}

/// Resolve a replay's game among the registry's games, by adapter id first.
fn resolver(registry: &GameRegistry) -> impl Fn(&GameRef) -> Option<Arc<dyn Game>> + Sync + '_ {
    move |game: &GameRef| registry.by_adapter(&game.adapter.id).or_else(|| registry.get(&game.id))
}

// ------------------------------------------------------------------- run

fn run_command(args: RunArgs, registry: &GameRegistry) -> ExitCode {
    let setup = match setup(&args, registry) {
        Ok(setup) => setup,
        Err(e) => return usage(e),
    };
    crate::run_support::block_on(run_async(&args, setup), usage)
}

async fn run_async(args: &RunArgs, setup: Setup) -> ExitCode {
    let Setup { manifest, scorer, game, registry, module_sha256, entrants, out, checkpoint, resume } = setup;
    let (factory, agent, where_): (Arc<dyn SessionFactory>, _, String) = match &args.host {
        None => {
            let data = args.host_data.clone().unwrap_or_else(|| out.join("host"));
            let host = match gaos_host::bench::open_bench_host(&data, registry.clone()).await {
                Ok(host) => host,
                Err(e) => return usage(format!("cannot open the run's host in {}: {e}", data.display())),
            };
            let episode_host = gaos_host::bench::InProcessEpisodeHost::new(&host);
            match entrants.factory(episode_host, &manifest, game.as_ref()) {
                Ok((factory, agent)) => (factory, agent, "in process".to_owned()),
                Err(e) => return usage(e),
            }
        }
        Some(url) => {
            let token = match crate::run_support::operator_token(args.token.as_ref()) {
                Ok(token) => token,
                Err(e) => return usage(e),
            };
            // `--host URL,URL,…`: the episodes spread over the hosts of a cluster.
            let urls: Vec<String> =
                url.split(',').map(str::trim).filter(|u| !u.is_empty()).map(str::to_owned).collect();
            let episode_host = match gaos_client::bench::RemoteEpisodeHost::spread(&urls, &token) {
                Ok(host) => host,
                Err(e) => return usage(e),
            };
            match entrants.factory(episode_host, &manifest, game.as_ref()) {
                Ok((factory, agent)) => (factory, agent, url.clone()),
                Err(e) => return usage(e),
            }
        }
    };
    let resumed = resume.as_ref().map(|c| (c.completed.len(), c.in_progress.len()));
    let cancel = crate::run_support::cancel_on_ctrl_c();
    let mut options = BenchmarkOptions::new(args.jobs, agent.clone());
    options.resume = resume;
    options.checkpoint_path = Some(checkpoint.clone());
    options.max_new_episodes = args.max_episodes;
    options.cancel = cancel;
    if let Some(ms) = args.test_clock_ms {
        eprintln!("gaos bench: --test-clock-ms is on: every episode's wallClockMs is {ms} (testing only)");
        options.clock = Arc::new(gaos_runner::SteppingClock::new(Duration::from_millis(ms)));
    }
    {
        eprintln!(
            "gaos bench: {} {} on {} ({where_}), agent {}:{}, {} job(s) -> {}",
            manifest.benchmark.id,
            manifest.benchmark.version,
            manifest.benchmark.adapter,
            agent.kind.as_str(),
            agent.id,
            args.jobs,
            out.display()
        );
    }
    let progress = Arc::new(Progress::new());
    options.observer = Some(Arc::clone(&progress) as Arc<dyn BenchmarkObserver>);
    let started = Instant::now();
    let result = run_benchmark(&manifest, Arc::clone(&scorer), factory, options).await;
    let elapsed = started.elapsed();
    progress.finish();
    let run = match result {
        Ok(run) => run,
        Err(BenchmarkError::Episode { episode, message }) => {
            eprintln!("gaos bench: episode {episode} failed: {message}");
            eprintln!(
                "gaos bench: completed episodes are kept in {}; fix the cause and continue with --resume --out {}",
                checkpoint.display(),
                out.display()
            );
            return ExitCode::FAILURE;
        }
        Err(BenchmarkError::Resume(message)) => return usage(format!("cannot resume {}: {message}", out.display())),
        Err(e) => return usage(e),
    };
    let new_episodes = progress.completed.load(Ordering::SeqCst);
    if run.status == BenchmarkStatus::Interrupted {
        eprintln!(
            "gaos bench: interrupted with {}/{} episodes complete; continue with --resume --out {}",
            run.checkpoint.completed.len(),
            run.checkpoint.plan.len(),
            out.display()
        );
        if args.json {
            let mut summary = Map::new();
            summary.insert("status".into(), "interrupted".into());
            summary.insert("out".into(), out.display().to_string().into());
            summary.insert("completed".into(), run.checkpoint.completed.len().into());
            summary.insert("planned".into(), run.checkpoint.plan.len().into());
            println!("{}", canonical_json(&Value::Object(summary)));
        }
        return ExitCode::FAILURE;
    }
    let module = (game.game_ref().id, module_sha256);
    match finish(&manifest, &registry, &module, &run, &out, &agent) {
        Ok(finished) => {
            report(args, &manifest, &run, &out, &finished, resumed, new_episodes, elapsed);
            if finished.valid { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        Err(e) => usage(e),
    }
}

/// What packing, verifying and charting produced.
struct Finished {
    bundle: PathBuf,
    content_digest: String,
    package_digest: String,
    valid: bool,
    reasons: Vec<String>,
    chart: PathBuf,
    report: PathBuf,
}

/// Pack the bundle into OUT/bundle (replacing an older one), verify it from
/// disk, write OUT/scores.svg.
fn finish(
    manifest: &BenchmarkManifest,
    registry: &GameRegistry,
    (game_id, module_sha256): &(String, Option<String>),
    run: &BenchmarkRun,
    out: &Path,
    agent: &gaos_runner::benchmark::AgentIdentity,
) -> Result<Finished, String> {
    let digest = manifest.digest();
    let submission = Submission::new(format!("submission-{}", &digest[..12]), agent.id.clone(), agent.kind);
    let packed =
        pack_run_with_module(manifest, run, submission, module_sha256.as_deref()).map_err(|e| e.to_string())?;
    let bundle = out.join("bundle");
    crate::run_support::replace_dir(&bundle, |dir| write_bundle_dir(dir, &packed.files).map_err(|e| e.to_string()))?;
    let read = read_bundle_dir(&bundle).map_err(|e| format!("the bundle just written does not read back: {e}"))?;
    let resolve = resolver(registry);
    let scorer = scoring_plugin(&manifest.scoring.plugin).map_err(|e| e.to_string())?;
    let verifier = ReplayEpisodeVerifier::new(manifest, &resolve, scorer.as_ref()).for_game(game_id);
    let verification = verify_bundle(&read, manifest, &verifier);
    let chart = out.join("scores.svg");
    let aggregate = run.aggregate.as_ref().ok_or("a complete run has an aggregate")?;
    let svg = crate::charts::task_scores_svg(manifest, aggregate)?;
    std::fs::write(&chart, svg.as_bytes()).map_err(|e| format!("cannot write {}: {e}", chart.display()))?;
    let report = out.join("report.html");
    let html = gaos_web::bench_report::report_html(
        manifest,
        aggregate,
        &packed.bundle.episodes,
        &svg,
        gaos_web::bench_report::ReplayLinks::BundleFiles,
    );
    std::fs::write(&report, html).map_err(|e| format!("cannot write {}: {e}", report.display()))?;
    Ok(Finished {
        bundle,
        content_digest: packed.bundle.content_digest,
        package_digest: packed.digest,
        valid: verification.valid,
        reasons: verification.facts.reasons,
        chart,
        report,
    })
}

#[allow(clippy::too_many_arguments)]
fn report(
    args: &RunArgs,
    manifest: &BenchmarkManifest,
    run: &BenchmarkRun,
    out: &Path,
    finished: &Finished,
    resumed: Option<(usize, usize)>,
    new_episodes: usize,
    elapsed: Duration,
) {
    let aggregate = run.aggregate.as_ref();
    let per_second = if elapsed.as_secs_f64() > 0.0 { new_episodes as f64 / elapsed.as_secs_f64() } else { 0.0 };
    if args.json {
        let mut summary = Map::new();
        summary.insert("status".into(), "complete".into());
        summary.insert("out".into(), out.display().to_string().into());
        summary.insert("bundle".into(), finished.bundle.display().to_string().into());
        summary.insert("chart".into(), finished.chart.display().to_string().into());
        summary.insert("report".into(), finished.report.display().to_string().into());
        summary.insert("contentDigest".into(), finished.content_digest.clone().into());
        summary.insert("packageDigest".into(), finished.package_digest.clone().into());
        summary.insert("verified".into(), finished.valid.into());
        summary.insert("episodes".into(), run.checkpoint.completed.len().into());
        summary.insert("episodesThisRun".into(), new_episodes.into());
        if let Some(aggregate) = aggregate {
            summary.insert("scores".into(), aggregate.to_value());
        }
        if let Some((completed, attached)) = resumed {
            let mut r = Map::new();
            r.insert("kept".into(), completed.into());
            r.insert("attached".into(), attached.into());
            summary.insert("resumed".into(), Value::Object(r));
        }
        summary.insert("seconds".into(), Value::number(elapsed.as_secs_f64()).unwrap_or(Value::Null));
        summary.insert("episodesPerSecond".into(), Value::number(per_second).unwrap_or(Value::Null));
        println!("{}", canonical_json(&Value::Object(summary)));
        return;
    }
    print!("{}", table(manifest, run));
    println!();
    println!("bundle:         {}", finished.bundle.display());
    println!("content digest: {}", finished.content_digest);
    println!("package digest: {}", finished.package_digest);
    println!("chart:          {}", finished.chart.display());
    println!("report:         {}", finished.report.display());
    if finished.valid {
        println!("verified:       yes (every replay re-simulated, every score recomputed)");
    } else {
        println!("verified:       NO");
        for reason in &finished.reasons {
            println!("  - {reason}");
        }
    }
    println!(
        "time:           {:.2} s for {new_episodes} episode(s) in this run ({per_second:.1} episodes/s)",
        elapsed.as_secs_f64()
    );
}

/// The summary table: per task, episodes, mean score and mean steps; then the aggregate.
fn table(manifest: &BenchmarkManifest, run: &BenchmarkRun) -> String {
    let label = format!("aggregate ({})", manifest.scoring.aggregation.as_str());
    let width = manifest.tasks.iter().map(|t| t.id.chars().count()).max().unwrap_or(4).max(label.chars().count());
    let mut out = format!(
        "{:<width$}  {:>8}  {:>10}  {:>10}  {:>10}\n",
        "task", "episodes", "mean score", "mean steps", "mean ms"
    );
    for (task, score) in run.aggregate.iter().flat_map(|a| a.task_scores.iter()) {
        let episodes: Vec<&CompletedEpisode> =
            run.checkpoint.completed.iter().filter(|c| &c.plan.task_id == task).collect();
        let count = episodes.len().max(1) as f64;
        let steps = episodes.iter().map(|c| c.observations.steps as f64).sum::<f64>() / count;
        let ms: Option<Vec<u64>> = episodes.iter().map(|c| c.observations.wall_clock_ms).collect();
        let ms = ms.map_or_else(|| "?".into(), |ms| format!("{:.1}", ms.iter().sum::<u64>() as f64 / count));
        out.push_str(&format!("{task:<width$}  {:>8}  {score:>10.4}  {steps:>10.1}  {ms:>10}\n", episodes.len()));
    }
    if let Some(aggregate) = &run.aggregate {
        out.push_str(&format!(
            "{label:<width$}  {:>8}  {:>10.4}\n",
            run.checkpoint.completed.len(),
            aggregate.aggregate_score
        ));
    }
    let costs: Vec<f64> = run.checkpoint.completed.iter().filter_map(|c| c.observations.cost).collect();
    if !costs.is_empty() {
        let total: f64 = costs.iter().sum();
        out.push_str(&format!("cost: {total} as the provider reported it ({} episode(s))\n", costs.len()));
    }
    out
}

/// `N ms` of an episode's recorded wall clock, `?` when it has none (an older run).
fn wall_clock_text(episode: &CompletedEpisode) -> String {
    episode.observations.wall_clock_ms.map_or_else(|| "?".to_owned(), |ms| ms.to_string())
}

/// Progress display on stderr: an indicatif bar on a terminal, one line per
/// event otherwise (`start ID`, `attach ID`, `done ID score S steps N ms M [cost C] [k/n]`).
struct Progress {
    bar: Option<ProgressBar>,
    total: AtomicUsize,
    done: AtomicUsize,
    completed: AtomicUsize,
    running: AtomicUsize,
    failed: AtomicUsize,
}

impl Progress {
    fn new() -> Self {
        Progress {
            bar: crate::run_support::progress_bar("episodes"),
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            completed: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            failed: AtomicUsize::new(0),
        }
    }

    fn message(&self) -> String {
        format!("{} running, {} failed", self.running.load(Ordering::SeqCst), self.failed.load(Ordering::SeqCst))
    }

    fn line(&self, text: String) {
        eprintln!("{text}");
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_with_message(self.message());
        }
    }
}

impl BenchmarkObserver for Progress {
    fn planned(&self, total: usize, completed: usize, in_progress: usize) {
        self.total.store(total, Ordering::SeqCst);
        self.done.store(completed, Ordering::SeqCst);
        match &self.bar {
            Some(bar) => {
                bar.set_length(total as u64);
                bar.set_position(completed as u64);
                bar.reset_eta();
                bar.set_message(self.message());
                bar.enable_steady_tick(Duration::from_millis(200));
            }
            None => self.line(format!(
                "planned {total} episodes: {completed} already complete, {in_progress} in progress to attach"
            )),
        }
    }

    fn episode_started(&self, plan: &EpisodePlan, attached: bool) {
        self.running.fetch_add(1, Ordering::SeqCst);
        match &self.bar {
            Some(bar) => bar.set_message(self.message()),
            None => self.line(format!("{} {}", if attached { "attach" } else { "start" }, plan.episode_id())),
        }
    }

    fn episode_completed(&self, episode: &CompletedEpisode) {
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.completed.fetch_add(1, Ordering::SeqCst);
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(self.message());
            }
            None => self.line(format!(
                "done {} score {} steps {} ms {}{} [{done}/{}]",
                episode.plan.episode_id(),
                episode.score,
                episode.observations.steps,
                wall_clock_text(episode),
                episode.observations.cost.map(|c| format!(" cost {c}")).unwrap_or_default(),
                self.total.load(Ordering::SeqCst)
            )),
        }
    }

    fn episode_failed(&self, plan: &EpisodePlan, error: &str) {
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.failed.fetch_add(1, Ordering::SeqCst);
        match &self.bar {
            Some(bar) => {
                bar.set_message(self.message());
                bar.println(format!("failed {}: {error}", plan.episode_id()));
            }
            None => self.line(format!("failed {}: {error}", plan.episode_id())),
        }
    }
}

// ---------------------------------------------------------------- verify

fn verify_command(args: VerifyArgs, registry: &GameRegistry) -> ExitCode {
    let dir = if !args.dir.join("manifest.json").exists() && args.dir.join("bundle").join("manifest.json").exists() {
        args.dir.join("bundle")
    } else {
        args.dir.clone()
    };
    let bundle = match read_bundle_dir(&dir) {
        Ok(bundle) => bundle,
        Err(BundleReadError::Io(message)) => return usage(message),
        Err(malformed @ BundleReadError::Malformed(_)) => {
            if args.json {
                let mut out = Map::new();
                out.insert("valid".into(), false.into());
                out.insert("reasons".into(), Value::Array(vec![malformed.to_string().into()]));
                println!("{}", canonical_json(&Value::Object(out)));
            } else {
                println!("invalid: {}", dir.display());
                println!("  - {malformed}");
            }
            return ExitCode::FAILURE;
        }
    };
    let (manifest, independent) = match &args.manifest {
        Some(path) => {
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) => return usage(format!("cannot read the manifest {}: {e}", path.display())),
            };
            match BenchmarkManifest::parse(&text) {
                Ok(manifest) => (manifest, true),
                Err(e) => return usage(format!("{}: {e}", path.display())),
            }
        }
        None => match BenchmarkManifest::from_value(&bundle.manifest) {
            Ok(manifest) => (manifest, false),
            Err(e) => {
                println!("invalid: {}", dir.display());
                println!("  - the bundle's manifest.json: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let scorer = match scoring_plugin(&manifest.scoring.plugin) {
        Ok(scorer) => scorer,
        Err(e) => return usage(format!("cannot recompute scores: {e}")),
    };
    let mut registry = registry.clone();
    let adapter = &manifest.benchmark.adapter;
    let module = match crate::modules::verifier_module(
        adapter,
        args.adapter.as_deref(),
        args.manifest.as_deref(),
        "benchmark",
    ) {
        Ok(module) => module,
        Err(e) => return usage(e),
    };
    let (game_id, module_sha256) = match module {
        Some(path) => match args
            .module_limits
            .limits()
            .and_then(|limits| crate::modules::add_module_with_sha(&mut registry, &path, &limits))
        {
            Ok(loaded) => loaded,
            Err(e) => return usage(e),
        },
        None => (adapter.clone(), None),
    };
    let resolve = resolver(&registry);
    let verifier = ReplayEpisodeVerifier::new(&manifest, &resolve, scorer.as_ref()).for_game(&game_id);
    let mut verification = verify_bundle(&bundle, &manifest, &verifier);
    if let Some(expected) = &module_sha256 {
        let before = verification.facts.reasons.len();
        for episode in &bundle.episodes {
            match &episode.adapter_sha256 {
                Some(sha256) if sha256 == expected => {}
                Some(sha256) => verification.facts.reasons.push(format!(
                    "episode {} ran a game module with sha256 {sha256}, not the given module's {expected}",
                    episode.id
                )),
                None => verification.facts.reasons.push(format!(
                    "episode {} records no game module sha256 (adapterSha256); the given module's is {expected}",
                    episode.id
                )),
            }
        }
        if verification.facts.reasons.len() > before {
            verification.valid = false;
        }
    }
    if args.json {
        println!("{}", canonical_json(&verification.to_value()));
    } else {
        println!("{}: {}", if verification.valid { "valid" } else { "invalid" }, dir.display());
        println!("  episodes:       {}", verification.episodes.len());
        if let Some(aggregate) = &verification.aggregate {
            println!("  aggregate:      {} ({})", aggregate.aggregate_score, manifest.scoring.aggregation.as_str());
        }
        println!("  content digest: {}", verification.content_digest);
        println!("  package digest: {}", verification.bundle_digest);
        if !independent {
            println!("  manifest:       the bundle's own (pass --manifest FILE to check against an independent copy)");
        }
        for reason in verification.facts.reasons.iter().take(50) {
            println!("  - {reason}");
        }
        if verification.facts.reasons.len() > 50 {
            println!("  ... and {} more", verification.facts.reasons.len() - 50);
        }
    }
    if verification.valid { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
