//! `gaos replay verify` and `gaos replay inspect`: check `gaos.replay` files
//! against the command's games, or with a verifier adapter (`--adapter`).
//!
//! Both run the session layer's verifier (`verify_session_replay`): the
//! kernel's re-simulation, then the attach receipts a header may carry.
//!
//! `verify` checks many files in parallel on a rayon pool of `--jobs`
//! threads and prints one result per file, in argument order. Exit status:
//! 0 all accepted, 1 any malformed or rejected, 2 usage or IO error, 3 some
//! only unverifiable (and none malformed or rejected).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Subcommand;
use gaos_games::GameRegistry;
use gaos_json::{Map, Value, canonical_json};
use gaos_kernel::replay::{
    GameResolver, LevelContext, RecordBody, ReplaySource, ReplayView, SignatureState, Verdict, VerifyOptions,
    VerifyReport, read_replay_bytes,
};
use gaos_kernel::{Game, GameRef};
use gaos_module::{ReplayAdapter, load_replay_adapter};
use gaos_runner::replay_receipts::verify_session_replay;
use rayon::prelude::*;

/// `gaos replay ...`.
#[derive(Subcommand)]
pub enum ReplayCommand {
    /// Verify replay files: structure, then re-simulation with the known games (built in, or --adapter modules).
    #[command(after_help = "Verdicts: accepted-signed (RFC-010 seat keys, every chain and signature valid), \
        accepted-unsigned, unverifiable (game unknown), rejected, malformed.\n\
        A replay declaring seatKeys is checked at stage signatures: each seat's chain from its genesis, every \
        signature, the signing tiers; a failure is rejected, naming the record and the seat.\n\
        Attach receipts in the header (extensions[\"gaos.session.attach\"]) must verify as the session's chain; \
        a replay without them is accepted too.\n\
        Exit status: 0 all accepted, 1 any malformed or rejected, 2 usage or IO error, 3 some only unverifiable.")]
    Verify {
        /// Replay files (`*.gaos-replay.jsonl`).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// One JSON object per file: {"file","verdict","stage","problems"}, plus for a
        /// replay declaring RFC-010 seat keys "signatures": {state, problems, seats:
        /// [{seat, submissions, validSignatures, chainReproduced, policySatisfied, chainHead}]}.
        #[arg(long)]
        json: bool,
        /// Also require canonical bytes, recompute checkpoint digests and check the kernel's window invariants.
        /// (With --adapter, checkpoint digests are always recomputed: a game module
        /// whose views differ on re-simulation is rejected.)
        #[arg(long)]
        strict: bool,
        /// Files verified in parallel (default: available cores).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        jobs: Option<u16>,
        /// Re-simulate with FILE.mjs (repeatable): a game module joins (or
        /// replaces) the games verify knows; a verifier adapter in the
        /// reference SDK's shape (`resolveReplayReducer(context)`, optional
        /// `semanticAdapterForLevel`) re-simulates every replay given (at most one).
        #[arg(long = "adapter", value_name = "FILE")]
        adapters: Vec<PathBuf>,
        #[command(flatten)]
        module_limits: crate::modules::ModuleLimitArgs,
    },
    /// Print a replay's header, levels, seats, outcome and a per-resolution summary.
    Inspect {
        /// The replay file.
        file: PathBuf,
    },
}

/// Run a `gaos replay` subcommand with the games of `registry`.
pub fn run(command: ReplayCommand, registry: &GameRegistry) -> ExitCode {
    match command {
        ReplayCommand::Verify { files, json, strict, jobs, adapters, module_limits } => {
            match verify_resolver(registry, &adapters, &module_limits) {
                Ok((registry, adapter)) => {
                    let resolver = match &adapter {
                        Some(adapter) => Resolver::Adapter(adapter),
                        None => Resolver::Registry(&registry),
                    };
                    // A module's views are only checked through the checkpoint
                    // digests; a module that keeps state between calls is caught there.
                    let options = VerifyOptions { strict, checkpoints: !adapters.is_empty() };
                    verify(&resolver, &files, json, options, jobs.map(usize::from))
                }
                Err(e) => {
                    eprintln!("gaos replay verify: {e}");
                    ExitCode::from(2)
                }
            }
        }
        ReplayCommand::Inspect { file } => inspect(registry, &file),
    }
}

/// The registry with the `--adapter` game modules added, and the one
/// verifier adapter (reference SDK shape) among the files, if any.
fn verify_resolver(
    registry: &GameRegistry,
    adapters: &[PathBuf],
    limits: &crate::modules::ModuleLimitArgs,
) -> Result<(GameRegistry, Option<ReplayAdapter>), String> {
    let mut games = Vec::new();
    let mut verifier: Option<(PathBuf, ReplayAdapter)> = None;
    if !adapters.is_empty() {
        let module_limits = limits.limits()?;
        for path in adapters {
            let adapter = load_replay_adapter(path, &module_limits).map_err(|e| e.to_string())?;
            if adapter.game().is_some() {
                games.push(path.clone());
            } else if let Some((first, _)) = &verifier {
                return Err(format!(
                    "{} and {} are both verifier adapters; give at most one (it re-simulates every replay)",
                    first.display(),
                    path.display()
                ));
            } else {
                verifier = Some((path.clone(), adapter));
            }
        }
    }
    let registry = crate::modules::with_modules(registry, &games, &[], limits)?;
    Ok((registry, verifier.map(|(_, adapter)| adapter)))
}

/// Where `verify` finds the reducers to re-simulate with.
enum Resolver<'a> {
    /// The replay's game among the registry's games, by adapter id first.
    Registry(&'a GameRegistry),
    /// A verifier adapter: it serves every replay, a reducer per level.
    Adapter(&'a ReplayAdapter),
}

impl GameResolver for Resolver<'_> {
    fn resolve(&self, game: &GameRef) -> Option<Arc<dyn Game>> {
        match self {
            Resolver::Registry(registry) => registry.by_adapter(&game.adapter.id).or_else(|| registry.get(&game.id)),
            Resolver::Adapter(adapter) => adapter.resolve(game),
        }
    }

    fn resolve_level(&self, game: &Arc<dyn Game>, context: &LevelContext<'_>) -> Option<Arc<dyn Game>> {
        match self {
            Resolver::Registry(_) => Some(Arc::clone(game)),
            Resolver::Adapter(adapter) => adapter.resolve_level(game, context),
        }
    }
}

enum FileOutcome {
    Io(String),
    Checked(VerifyReport),
}

fn verify(
    resolve: &Resolver<'_>,
    files: &[PathBuf],
    json: bool,
    options: VerifyOptions,
    jobs: Option<usize>,
) -> ExitCode {
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(jobs.unwrap_or(0)).build() {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("gaos replay verify: cannot start {} worker threads: {e}", jobs.unwrap_or(0));
            return ExitCode::from(2);
        }
    };
    let outcomes: Vec<FileOutcome> = pool.install(|| {
        files
            .par_iter()
            .map(|path| match std::fs::read(path) {
                Ok(bytes) => {
                    FileOutcome::Checked(verify_session_replay(ReplaySource::Bytes(&bytes), resolve, &options))
                }
                Err(e) => FileOutcome::Io(format!("cannot read {}: {e}", path.display())),
            })
            .collect()
    });
    let mut io_errors = 0;
    let mut counts = [0usize; 5];
    for (path, outcome) in files.iter().zip(&outcomes) {
        match outcome {
            FileOutcome::Io(message) => {
                io_errors += 1;
                if json {
                    let mut line = Map::new();
                    line.insert("file".into(), path.display().to_string().into());
                    line.insert("error".into(), message.clone().into());
                    println!("{}", canonical_json(&Value::Object(line)));
                } else {
                    eprintln!("{}: error: {message}", path.display());
                }
            }
            FileOutcome::Checked(report) => {
                counts[verdict_slot(report.verdict)] += 1;
                if json {
                    println!("{}", canonical_json(&report_json(path, report)));
                } else {
                    print!("{}", report_text(path, report));
                }
            }
        }
    }
    if !json && files.len() > 1 {
        println!(
            "{} files: {} accepted-signed, {} accepted-unsigned, {} unverifiable, {} rejected, {} malformed{}",
            files.len(),
            counts[verdict_slot(Verdict::AcceptedSigned)],
            counts[verdict_slot(Verdict::AcceptedUnsigned)],
            counts[verdict_slot(Verdict::Unverifiable)],
            counts[verdict_slot(Verdict::Rejected)],
            counts[verdict_slot(Verdict::Malformed)],
            if io_errors > 0 { format!(", {io_errors} unreadable") } else { String::new() }
        );
    }
    if io_errors > 0 {
        ExitCode::from(2)
    } else if counts[verdict_slot(Verdict::Malformed)] + counts[verdict_slot(Verdict::Rejected)] > 0 {
        ExitCode::from(1)
    } else if counts[verdict_slot(Verdict::Unverifiable)] > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

fn verdict_slot(verdict: Verdict) -> usize {
    match verdict {
        Verdict::AcceptedUnsigned => 0,
        Verdict::Unverifiable => 1,
        Verdict::Rejected => 2,
        Verdict::Malformed => 3,
        Verdict::AcceptedSigned => 4,
    }
}

/// `{"file","verdict","stage","problems"}` (stage null when accepted), and
/// `signatures` for a replay that declares a signing roster.
fn report_json(path: &Path, report: &VerifyReport) -> Value {
    let mut line = Map::new();
    line.insert("file".into(), path.display().to_string().into());
    line.insert("verdict".into(), report.verdict.as_str().into());
    line.insert("stage".into(), report.stage.map(|s| s.as_str()).into());
    line.insert("problems".into(), Value::Array(report.problems.to_strings().into_iter().map(Value::from).collect()));
    if let Some(signatures) = report.signatures.as_ref().filter(|s| s.state != SignatureState::Unsigned) {
        line.insert("signatures".into(), signatures.to_value());
    }
    Value::Object(line)
}

fn report_text(path: &Path, report: &VerifyReport) -> String {
    let mut out = match report.stage {
        None => format!("{}: {} ({} resolutions re-simulated)\n", path.display(), report.verdict, report.resolutions),
        Some(stage) => format!("{}: {} (stage {stage})\n", path.display(), report.verdict),
    };
    for problem in report.problems.to_strings() {
        out.push_str(&format!("  {problem}\n"));
    }
    for note in &report.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
    out
}

fn inspect(registry: &GameRegistry, path: &Path) -> ExitCode {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("gaos replay inspect: cannot read {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let view = match read_replay_bytes(&bytes) {
        Ok(view) => view,
        Err(e) => {
            eprintln!("{}: malformed (stage parse)", path.display());
            for problem in e.problems.to_strings() {
                eprintln!("  {problem}");
            }
            return ExitCode::from(1);
        }
    };
    let report =
        verify_session_replay(ReplaySource::Bytes(&bytes), &Resolver::Registry(registry), &VerifyOptions::default());
    print!("{}", inspect_text(path, &view, registry.by_adapter(&view.game.adapter.id).as_deref(), &report));
    ExitCode::SUCCESS
}

fn inspect_text(path: &Path, view: &ReplayView, game: Option<&dyn Game>, report: &VerifyReport) -> String {
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!("{}", path.display()));
    line("header".into());
    line(format!(
        "  format       gaos.replay {} ({} body)",
        view.version.as_str(),
        if view.grouped { "grouped records" } else { "action lines" }
    ));
    line(format!("  session      {}", view.session_id));
    line(format!(
        "  game         {}@{} (adapter {}@{})",
        view.game.id, view.game.version, view.game.adapter.id, view.game.adapter.version
    ));
    line(format!("  seed         {} ({})", view.seed, view.seed_policy.as_str()));
    line(format!("  perm         {:?}", view.perm));
    line(format!("  visibility   {}", view.visibility.as_deref().unwrap_or("full (default)")));
    if let Some(extensions) = &view.extensions {
        line(format!("  extensions   {}", canonical_json(&Value::Object(extensions.clone()))));
    }
    if let Some(window) = view.timeout_window_ticks {
        line(format!("  timeouts     tick-bounded, windowTicks {window}"));
    }
    if view.signed {
        match &report.signatures {
            Some(signatures) => {
                line(format!("  signatures   RFC-010, {}", signatures.state.as_str()));
                for seat in &signatures.seats {
                    line(format!(
                        "    {:<10} {} submissions, {} valid signatures, chain {}, policy {}",
                        seat.seat,
                        seat.submissions,
                        seat.valid_signatures,
                        if seat.chain_reproduced { "reproduced" } else { "broken" },
                        if seat.policy_satisfied { "satisfied" } else { "not satisfied" }
                    ));
                }
            }
            None => line("  signatures   RFC-010 seat keys declared".into()),
        }
    }
    line(format!("levels ({})", view.levels.len()));
    for level in &view.levels {
        let version = level.version.as_ref().map(|v| format!(" version {v}")).unwrap_or_default();
        line(format!("  [{}] {}{version}  seed {}  level {}", level.index, level.id, level.seed, level.level));
        let r = &level.result;
        line(format!(
            "      recorded  {}  stars {}  actionsUsed {}",
            r.status.as_str(),
            r.stars.map_or("null".into(), |s| Value::Number(s).to_string()),
            r.actions_used
        ));
        if let Some(replayed) = report.levels.get(level.index).filter(|l| l.status.is_some()) {
            line(format!(
                "      replayed  {}  stars {}  actionsUsed {}",
                replayed.status.as_deref().unwrap_or("?"),
                replayed.stars.map_or("null".into(), |s| Value::Number(s).to_string()),
                replayed.actions_used.map_or("?".into(), |a| a.to_string())
            ));
            if let Some(outcome) = &replayed.outcome {
                line(format!("      outcome   {outcome}"));
            }
        }
    }
    line(format!(
        "totals  stars {}  actionsUsed {}",
        Value::Number(view.totals.total_stars),
        view.totals.total_actions_used
    ));
    let mut seats: Vec<&str> = Vec::new();
    for record in &view.records {
        let named: Vec<&str> = match &record.body {
            RecordBody::Resolution(res) | RecordBody::Action(res) => {
                res.inputs.iter().filter_map(|i| i.seat()).collect()
            }
            RecordBody::Timeout(t) => t.participant_id.as_deref().into_iter().collect(),
            RecordBody::CommitMismatch(m) => vec![m.participant_id.as_str()],
            RecordBody::Interaction(i) => vec![i.participant_id.as_str()],
            RecordBody::SeatSignature { participant_id, .. } | RecordBody::Interest { participant_id, .. } => {
                vec![participant_id.as_str()]
            }
            RecordBody::Extension { .. } | RecordBody::Checkpoint { .. } => Vec::new(),
        };
        for seat in named {
            if !seats.contains(&seat) {
                seats.push(seat);
            }
        }
    }
    seats.sort_unstable();
    let declared = game.map(|g| g.seats().join(", ")).unwrap_or_else(|| "unknown game".into());
    line(format!("seats   {} (the game declares: {declared})", seats.join(", ")));
    line(format!("outcome {}{}", report.verdict, report.stage.map(|s| format!(" (stage {s})")).unwrap_or_default()));
    for problem in report.problems.to_strings() {
        line(format!("  {problem}"));
    }
    for note in &report.notes {
        line(format!("  note: {note}"));
    }
    let checkpoints = view.records.iter().filter(|r| matches!(r.body, RecordBody::Checkpoint { .. })).count();
    line(format!("records ({} lines, {checkpoints} checkpoints not listed)", view.records.len()));
    for record in &view.records {
        let prefix = format!("  line {:>5}  level {}  ", record.line, record.level_index);
        match &record.body {
            RecordBody::Resolution(res) | RecordBody::Action(res) => {
                let cause = match res.cause {
                    gaos_kernel::ResolutionCause::Complete => "complete",
                    gaos_kernel::ResolutionCause::Timeout => "timeout",
                    gaos_kernel::ResolutionCause::Tick => "tick",
                };
                let tick = res.tick.map_or("-".into(), |t| t.to_string());
                let inputs: Vec<String> = res
                    .inputs
                    .iter()
                    .enumerate()
                    .map(|(j, input)| {
                        let action = input.action();
                        let mut fields = action.to_map();
                        fields.remove("id");
                        fields.remove("seat");
                        if let Some(verified) = input.verified_payload() {
                            fields.insert("verifiedPayload".into(), verified.clone());
                        }
                        let wire = if input.wire_id() == input.canonical_id() {
                            String::new()
                        } else {
                            format!(" (wire Action {})", input.wire_id())
                        };
                        let system = if res.system_input == Some(j) { " [system]" } else { "" };
                        let submission = input.submission_id().map(|s| format!(" [{s}]")).unwrap_or_default();
                        let extra = if fields.is_empty() {
                            String::new()
                        } else {
                            format!(" {}", canonical_json(&Value::Object(fields)))
                        };
                        format!(
                            "{} {}{wire}{extra}{submission}{system}",
                            action.seat.as_deref().unwrap_or("-"),
                            action.id
                        )
                    })
                    .collect();
                let inputs = if inputs.is_empty() { "no inputs".to_owned() } else { inputs.join("; ") };
                line(format!("{prefix}{} tick {tick} {cause}: {inputs}", record.body.kind()));
            }
            RecordBody::Timeout(t) => line(format!(
                "{prefix}timeout {} at tick {} for {} ({}), window {}",
                t.timeout_id,
                t.tick,
                t.participant_id.as_deref().unwrap_or("the whole window"),
                t.reason,
                t.window_ref
            )),
            RecordBody::CommitMismatch(m) => line(format!(
                "{prefix}commit-mismatch at tick {}: {} [{}] commitment {}",
                m.tick, m.participant_id, m.submission_id, m.commitment_id
            )),
            RecordBody::Extension { lane, record: body } => {
                line(format!("{prefix}extension {lane}: {}", canonical_json(&Value::Object(body.clone()))))
            }
            RecordBody::Interaction(i) => line(format!(
                "{prefix}interaction at tick {}: {} [{}] {}",
                i.tick, i.participant_id, i.submission_id, i.command
            )),
            RecordBody::SeatSignature { tick, participant_id, .. } => {
                line(format!("{prefix}seat-signature at tick {tick}: {participant_id}"))
            }
            RecordBody::Interest { tick, participant_id, .. } => {
                line(format!("{prefix}interest at tick {tick}: {participant_id}"))
            }
            RecordBody::Checkpoint { .. } => {}
        }
    }
    out
}
