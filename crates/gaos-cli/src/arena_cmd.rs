//! `gaos arena run | verify`: tournaments between agents on the command line.
//!
//! `run` plays a `gaos.arena-manifest.v1`, every match an ordinary session
//! (in process on a private host in `OUT/host`, or on `--host URL[,URL…]`,
//! matches spread over the hosts) driven by `run_session`. It journals to
//! `OUT/journal.jsonl` (replays in `OUT/replays/`, agent logs in
//! `OUT/logs/`), shows a progress bar with live standings, then computes
//! the standings and ratings, draws the chart, writes the report, packs
//! `OUT/bundle/` and verifies it from disk. `--resume` continues a stopped
//! run without replaying completed matches.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use gaos_games::GameRegistry;
use gaos_json::{Map, Value, canonical_json};
use gaos_runner::arena::{
    ArenaError, ArenaFactory, ArenaManifest, ArenaObserver, ArenaOptions, ArenaRun, ArenaStatus, GameIdentity,
    MatchPlan, Standings, pack_arena, plan_matches, read_arena_bundle, run_arena, standings, write_arena_bundle,
};
use gaos_runner::benchmark::EpisodeHost;
use gaos_runner::benchmark::GameInfo;
use gaos_runner::drivers::DriverSettings;

use crate::arena_progress::Progress;
use crate::arena_verify::{VerifyArgs, load_game, verify_bundle};

/// `gaos arena` subcommands.
#[derive(Debug, Subcommand)]
pub enum ArenaCommand {
    /// Play (or --resume) a tournament; rate the entrants, pack, verify and report the bundle.
    Run(RunArgs),
    /// Verify a tournament bundle (exit 0 valid, 1 invalid, 2 usage or IO error).
    Verify(VerifyArgs),
}

/// `gaos arena run` arguments.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The manifest (gaos.arena-manifest.v1 JSON; see docs/arena.md).
    manifest: PathBuf,
    /// Output directory: journal.jsonl, replays/, logs/, host/ (in process), bundle/
    /// (default runs/<arena id>-<unix ms>; required with --resume).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Matches played at once.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Continue the run in --out: keep its completed matches, attach the ones in progress.
    #[arg(long)]
    resume: bool,
    /// Play the matches on running hosts (e.g. http://127.0.0.1:8899, or several
    /// separated by commas: match i goes to host i mod N) instead of in process.
    #[arg(long, value_delimiter = ',')]
    host: Vec<String>,
    /// Operator token for --host (default: $GAOS_OPERATOR_TOKEN).
    #[arg(long)]
    token: Option<String>,
    /// Start at most this many matches, then stop (status interrupted; --resume continues).
    #[arg(long)]
    max_matches: Option<usize>,
    #[command(flatten)]
    openai: crate::openai_args::OpenAiArgs,
    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    module_limits: crate::modules::ModuleLimitArgs,
    /// Testing only: measure every match's wallClockMs on a simulated clock
    /// on which each match takes exactly MS ms, so runs repeat byte for byte.
    #[arg(long, hide = true, value_name = "MS")]
    test_clock_ms: Option<u64>,
}

/// Run `gaos arena` with the games of `registry`.
pub fn run(command: ArenaCommand, registry: &GameRegistry) -> ExitCode {
    match command {
        ArenaCommand::Run(args) => run_command(args, registry),
        ArenaCommand::Verify(args) => crate::arena_verify::run(args, registry),
    }
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("gaos arena run: {message}");
    ExitCode::from(2)
}

/// Everything a run needs, checked before any session is created.
struct Setup {
    manifest: Arc<ArenaManifest>,
    manifest_dir: PathBuf,
    registry: GameRegistry,
    game: GameIdentity,
    info: GameInfo,
    plan: Vec<MatchPlan>,
    out: PathBuf,
}

fn setup(args: &RunArgs, registry: &GameRegistry) -> Result<Setup, String> {
    let text = std::fs::read_to_string(&args.manifest)
        .map_err(|e| format!("cannot read the manifest {}: {e}", args.manifest.display()))?;
    let manifest = ArenaManifest::parse(&text).map_err(|e| format!("{}: {e}", args.manifest.display()))?;
    let parent = args.manifest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let manifest_dir = std::fs::canonicalize(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let mut registry = registry.clone();
    let module = crate::modules::is_module_reference(&manifest.arena.adapter)
        .then(|| manifest_dir.join(&manifest.arena.adapter));
    let (game, loaded) = load_game(&manifest, module.as_deref(), &mut registry, &args.module_limits)?;
    let info = GameInfo::from_game(loaded.as_ref());
    let plan = plan_matches(&manifest, &game.id, &info.seats).map_err(|e| e.to_string())?;
    if args.jobs == 0 {
        return Err("--jobs must be at least 1".into());
    }
    let out = match (&args.out, args.resume) {
        (Some(out), _) => out.clone(),
        (None, true) => return Err("--resume needs --out DIR (the directory of the run to continue)".into()),
        (None, false) => crate::run_support::default_run_dir(&manifest.arena.id),
    };
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    Ok(Setup { manifest: Arc::new(manifest), manifest_dir, registry, game, info, plan, out })
}

fn run_command(args: RunArgs, registry: &GameRegistry) -> ExitCode {
    let setup = match setup(&args, registry) {
        Ok(setup) => setup,
        Err(e) => return usage(e),
    };
    crate::run_support::block_on(run_async(&args, setup), usage)
}

/// The hosts matches run on: a private in-process host, or `--host`s.
async fn hosts(args: &RunArgs, setup: &Setup) -> Result<(Vec<Arc<dyn EpisodeHost>>, String), String> {
    if args.host.is_empty() {
        let data = setup.out.join("host");
        let host = gaos_host::bench::open_bench_host(&data, setup.registry.clone())
            .await
            .map_err(|e| format!("cannot open the run's host in {}: {e}", data.display()))?;
        let host: Arc<dyn EpisodeHost> = Arc::new(gaos_host::bench::InProcessEpisodeHost::new(&host));
        return Ok((vec![host], "in process".into()));
    }
    let token = crate::run_support::operator_token(args.token.as_ref())?;
    let mut hosts: Vec<Arc<dyn EpisodeHost>> = Vec::new();
    for url in &args.host {
        hosts.push(Arc::new(
            gaos_client::bench::RemoteEpisodeHost::new(url, &token).map_err(|e| format!("--host {url}: {e}"))?,
        ));
    }
    Ok((hosts, args.host.join(", ")))
}

async fn run_async(args: &RunArgs, setup: Setup) -> ExitCode {
    let (hosts, where_) = match hosts(args, &setup).await {
        Ok(found) => found,
        Err(e) => return usage(e),
    };
    let settings = DriverSettings { openai: args.openai.config(), ..DriverSettings::new(0, "player") };
    let manifest = Arc::clone(&setup.manifest);
    let factory = match ArenaFactory::new(
        hosts,
        Arc::clone(&manifest),
        setup.info.clone(),
        settings,
        setup.manifest_dir.clone(),
        Some(setup.out.join("logs")),
    ) {
        Ok(factory) => Arc::new(factory),
        Err(e) => return usage(e),
    };
    let cancel = crate::run_support::cancel_on_ctrl_c();
    eprintln!(
        "gaos arena: {} {} on {} ({where_}): {} entrants, {} matches, {} job(s) -> {}",
        manifest.arena.id,
        manifest.arena.version,
        setup.game.id,
        manifest.entrants.len(),
        setup.plan.len(),
        args.jobs,
        setup.out.display()
    );
    let mut options = ArenaOptions::new(args.jobs, &setup.out);
    options.resume = args.resume;
    options.max_new_matches = args.max_matches;
    options.cancel = cancel;
    if let Some(ms) = args.test_clock_ms {
        eprintln!("gaos arena: --test-clock-ms is on: every match's wallClockMs is {ms} (testing only)");
        options.clock = Arc::new(gaos_runner::SteppingClock::new(Duration::from_millis(ms)));
    }
    let progress = Arc::new(Progress::new(Arc::clone(&manifest)));
    options.observer = Some(Arc::clone(&progress) as Arc<dyn ArenaObserver>);
    let started = Instant::now();
    let result = run_arena(&manifest, &setup.plan, factory, options).await;
    let elapsed = started.elapsed();
    progress.finish();
    let run = match result {
        Ok(run) => run,
        Err(ArenaError::Match { id, message }) => {
            eprintln!("gaos arena: match {id} failed: {message}");
            eprintln!(
                "gaos arena: completed matches are kept in {}; fix the cause and continue with --resume --out {}",
                setup.out.join("journal.jsonl").display(),
                setup.out.display()
            );
            return ExitCode::FAILURE;
        }
        Err(e) => return usage(e),
    };
    let new_matches = progress.completed.load(Ordering::SeqCst);
    if run.status == ArenaStatus::Interrupted {
        eprintln!(
            "gaos arena: interrupted with {}/{} matches complete; continue with --resume --out {}",
            run.records.len(),
            setup.plan.len(),
            setup.out.display()
        );
        if args.json {
            let mut summary = Map::new();
            summary.insert("status".into(), "interrupted".into());
            summary.insert("out".into(), setup.out.display().to_string().into());
            summary.insert("completed".into(), run.records.len().into());
            summary.insert("planned".into(), setup.plan.len().into());
            println!("{}", canonical_json(&Value::Object(summary)));
        }
        return ExitCode::FAILURE;
    }
    match finish(&setup, &run) {
        Ok(finished) => {
            report(args, &setup, &run, &finished, new_matches, elapsed);
            if finished.reasons.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        Err(e) => usage(e),
    }
}

/// What packing and verifying produced.
struct Finished {
    bundle: PathBuf,
    standings: Standings,
    content_digest: String,
    package_digest: String,
    reasons: Vec<String>,
}

/// The run's replays and logs, by their path in the bundle.
fn attachments(out: &Path, run: &ArenaRun) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut files = std::collections::BTreeMap::new();
    for record in &run.records {
        let path = out.join(&record.replay);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        files.insert(record.replay.clone(), text);
        let log = format!("logs/{}.log", record.id);
        if let Ok(bytes) = std::fs::read(out.join(&log))
            && !bytes.is_empty()
        {
            files.insert(log, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    Ok(files)
}

/// Compute the standings, draw the chart, write the report, pack the
/// bundle into OUT/bundle (replacing an older one) and verify it from disk.
fn finish(setup: &Setup, run: &ArenaRun) -> Result<Finished, String> {
    let manifest = setup.manifest.as_ref();
    let table = standings(manifest, &run.records);
    let standings_value = table.to_value();
    let title = format!("{} {}", manifest.arena.id, manifest.arena.version);
    let svg = crate::charts::ratings_svg(&title, &standings_value)?;
    let html = gaos_web::arena_report::arena_report_html(
        manifest,
        &standings_value,
        &run.records,
        &svg,
        gaos_web::bench_report::ReplayLinks::BundleFiles,
    );
    let mut files = attachments(&setup.out, run)?;
    files.insert("ratings.svg".into(), svg);
    files.insert("report.html".into(), html);
    let files = pack_arena(manifest, &setup.game, &run.records, &standings_value, files).map_err(|e| e.to_string())?;
    let bundle = setup.out.join("bundle");
    crate::run_support::replace_dir(&bundle, |dir| write_arena_bundle(dir, &files).map_err(|e| e.to_string()))?;
    let read = read_arena_bundle(&bundle).map_err(|e| format!("the bundle just written does not read back: {e}"))?;
    let verification = verify_bundle(&read, manifest, &setup.game, &setup.info.seats, &setup.registry);
    Ok(Finished {
        bundle,
        standings: table,
        content_digest: verification.content_digest,
        package_digest: verification.package_digest,
        reasons: verification.reasons,
    })
}

fn report(args: &RunArgs, setup: &Setup, run: &ArenaRun, finished: &Finished, new_matches: usize, elapsed: Duration) {
    let per_second = if elapsed.as_secs_f64() > 0.0 { new_matches as f64 / elapsed.as_secs_f64() } else { 0.0 };
    let valid = finished.reasons.is_empty();
    if args.json {
        let mut summary = Map::new();
        summary.insert("status".into(), "complete".into());
        summary.insert("out".into(), setup.out.display().to_string().into());
        summary.insert("bundle".into(), finished.bundle.display().to_string().into());
        summary.insert("contentDigest".into(), finished.content_digest.clone().into());
        summary.insert("packageDigest".into(), finished.package_digest.clone().into());
        summary.insert("verified".into(), valid.into());
        summary.insert("reasons".into(), Value::Array(finished.reasons.iter().map(Value::from).collect()));
        summary.insert("matches".into(), run.records.len().into());
        summary.insert("matchesThisRun".into(), new_matches.into());
        summary
            .insert("standings".into(), finished.standings.to_value().get("entrants").cloned().unwrap_or(Value::Null));
        if let Some((kept, attached)) = run.resumed {
            let mut r = Map::new();
            r.insert("kept".into(), kept.into());
            r.insert("attached".into(), attached.into());
            summary.insert("resumed".into(), Value::Object(r));
        }
        summary.insert("seconds".into(), Value::number(elapsed.as_secs_f64()).unwrap_or(Value::Null));
        summary.insert("matchesPerSecond".into(), Value::number(per_second).unwrap_or(Value::Null));
        println!("{}", canonical_json(&Value::Object(summary)));
        return;
    }
    let width = finished.standings.entrants.iter().map(|s| s.id.chars().count()).max().unwrap_or(7).max(7);
    println!(
        "{:>3}  {:<width$}  {:>7}  {:>17}  {:>7}  {:>5}  {:>5}  {:>5}  {:>7}",
        "#", "entrant", "rating", "95 % interval", "matches", "won", "drawn", "lost", "score"
    );
    for (i, s) in finished.standings.entrants.iter().enumerate() {
        let interval = format!("{:.1} – {:.1}", s.rating.low, s.rating.high);
        println!(
            "{:>3}  {:<width$}  {:>7.1}  {interval:>17}  {:>7}  {:>5}  {:>5}  {:>5}  {:>7}",
            i + 1,
            s.id,
            s.rating.rating,
            s.matches,
            s.wins,
            s.draws,
            s.losses,
            s.score
        );
    }
    println!();
    println!("bundle:         {}", finished.bundle.display());
    println!("report:         {}", finished.bundle.join("report.html").display());
    println!("content digest: {}", finished.content_digest);
    println!("package digest: {}", finished.package_digest);
    if valid {
        println!("verified:       yes (every replay re-simulated, every result and rating recomputed)");
    } else {
        println!("verified:       NO");
        for reason in &finished.reasons {
            println!("  - {reason}");
        }
    }
    println!(
        "time:           {:.2} s for {new_matches} match(es) in this run ({per_second:.1} matches/s)",
        elapsed.as_secs_f64()
    );
}
