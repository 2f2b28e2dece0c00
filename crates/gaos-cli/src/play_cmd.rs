//! `gaos play`: one match, one driver per seat, through the same
//! `SessionHandle` + `run_session` as every other kind of play.
//!
//! In process by default (a host over SQLite in a temporary directory,
//! removed afterwards), or against a running host with `--host URL`
//! (operator token from `--token` or `GAOS_OPERATOR_TOKEN`). Every seat runs
//! concurrently with `{unpaced, continuous, caller}` (`--watch`: paced, each
//! observation printed to stderr); the first seat's handle then finalizes.
//! The result (outcome, ranking, steps) goes to stdout and the replay to
//! `--out` (default `./<session>.gaos-replay.jsonl`). `--console SEAT` lets
//! the person at the terminal guide that seat's agent or take the seat over
//! ([`crate::play_console`]); `--pace-ms` slows play down to watch it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use gaos_client::SessionClient;
use gaos_client::handle::RemoteSessionHandle;
use gaos_games::GameRegistry;
use gaos_host::HostOptions;
use gaos_host::handle::{InProcessSessionHandle, open_local_host};
use gaos_json::{Map, Value, canonical_json};
use gaos_runner::drivers::{DriverSettings, DriverSpec};
use gaos_runner::{
    AgentDriver, AttachRequest, BoxFuture, CancellationToken, FinalizeMode, FinalizeRequest, Observation, Pacing,
    Presenter, RunError, RunOptions, RunOutcome, RunPolicy, SessionControllerIdentity, SessionHandle, SessionPolicy,
    SessionResult, run_session,
};

/// `gaos play` arguments.
#[derive(Debug, Args)]
pub struct PlayArgs {
    /// The game id (e.g. conformance/hilo, conformance/tictactoe), or a
    /// game module file (FILE.mjs) to load and play.
    #[arg(long)]
    game: String,
    #[command(flatten)]
    module_limits: crate::modules::ModuleLimitArgs,
    /// A seat to give a driver; pairs with the --driver at the same position
    /// (every --seat needs its --driver). Seats not named play `random`.
    /// Without --seat, --drivers go to the game's seats in order.
    #[arg(long = "seat")]
    seats: Vec<String>,
    /// random | random:SEED | first-legal | scripted:FILE | human | openai | openai:MODEL |
    /// process:COMMAND (a program speaking JSON lines; docs/process-agents.md)
    #[arg(long = "driver")]
    drivers: Vec<String>,
    /// Session seed (also seeds random drivers: seed XOR fnv1a(seat)); random when absent.
    #[arg(long)]
    seed: Option<u32>,
    /// A level the game ships (default: its first).
    #[arg(long)]
    level_id: Option<String>,
    /// Where to write the replay (default ./<session>.gaos-replay.jsonl).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Play on a running host (e.g. http://127.0.0.1:8899) instead of in process.
    #[arg(long)]
    host: Option<String>,
    /// Operator token for --host (default: $GAOS_OPERATOR_TOKEN).
    #[arg(long)]
    token: Option<String>,
    #[command(flatten)]
    openai: crate::openai_args::OpenAiArgs,
    /// Paced play: print every observation to stderr as it happens.
    #[arg(long)]
    watch: bool,
    /// Paced play: hold every observation MS ms before the seat goes on, to
    /// follow (and step into) a game at a person's speed.
    #[arg(long, value_name = "MS")]
    pace_ms: Option<u64>,
    /// Coach the agent of SEAT from this terminal while it plays: type
    /// `/guide TEXT` (guidance for its next decision), `/take` (play the seat
    /// yourself), `/back` (hand it back), `/interrupt [NOTE]`, `/help` on stdin.
    #[arg(long, value_name = "SEAT")]
    console: Option<String>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
    /// Signed play (RFC-010): SEAT signs its moves with the key FILE
    /// (`gaos keygen`); repeatable. The session's seatKeys list every seat:
    /// a seat without --seat-key signs with a key made for this match.
    #[arg(long = "seat-key", value_name = "SEAT=FILE")]
    seat_keys: Vec<String>,
}

/// A temporary directory removed on drop (the in-process host's store).
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> std::io::Result<Self> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!("gaos-play-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(ScratchDir(path))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Paced presentation of one seat: prints each observation to stderr
/// (`--watch`) and holds it `hold` (`--pace-ms`).
struct Printer {
    seat: String,
    print: bool,
    hold: std::time::Duration,
}

impl Presenter for Printer {
    fn present<'a>(&'a self, o: &'a Observation, cancel: &'a CancellationToken) -> BoxFuture<'a, Result<(), String>> {
        if self.print {
            let mut view = o.tick().clone();
            if let Some(map) = view.as_object_mut() {
                map.remove("legalActions");
            }
            let kind = if o.is_pending() { " (waiting)" } else { "" };
            eprintln!("[{} @{}{kind}] {}", self.seat, o.revision(), canonical_json(&view));
        }
        let hold = self.hold;
        Box::pin(async move {
            if !hold.is_zero() {
                tokio::select! {
                    () = tokio::time::sleep(hold) => {}
                    () = cancel.cancelled() => {}
                }
            }
            Ok(())
        })
    }
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("gaos play: {message}");
    ExitCode::from(2)
}

/// The signing key of every seat, in seat order, for `--seat-key SEAT=FILE`
/// (none given: an unsigned match); a seat without one gets a fresh key.
fn signing_keys(
    specs: &[String],
    seats: &[String],
) -> Result<Option<Vec<gaos_runner::signing::SeatSigningKey>>, String> {
    use gaos_runner::signing::SeatSigningKey;
    if specs.is_empty() {
        return Ok(None);
    }
    let mut given = crate::seat_key_args::read_seat_keys(specs, seats)?;
    Ok(Some(
        seats
            .iter()
            .map(|seat| given.remove(seat).unwrap_or_else(|| SeatSigningKey::from_seed(rand::random::<[u8; 32]>())))
            .collect(),
    ))
}

/// Pair seats with driver specs (see the `--seat` help).
fn assign(args: &PlayArgs, game_seats: &[String]) -> Result<Vec<(String, DriverSpec)>, String> {
    let specs: Vec<DriverSpec> = args.drivers.iter().map(|d| d.parse()).collect::<Result<_, _>>()?;
    let mut seats: Vec<String> = if args.seats.is_empty() { game_seats.to_vec() } else { args.seats.clone() };
    if seats.is_empty() {
        return Err(format!("the game {} is not known here; name its seats with --seat", args.game));
    }
    if specs.len() > seats.len() {
        return Err(format!("{} --driver for {} seats; pair each --driver with a --seat", specs.len(), seats.len()));
    }
    for (i, seat) in seats.iter().enumerate() {
        if seats[..i].contains(seat) {
            return Err(format!("seat {seat:?} is named twice"));
        }
        if !game_seats.is_empty() && !game_seats.contains(seat) {
            return Err(format!("{} has no seat {seat:?} (seats: {})", args.game, game_seats.join(", ")));
        }
    }
    // A named seat without a driver would silently play random: say so.
    if !args.seats.is_empty() && specs.len() < seats.len() {
        let missing = &seats[specs.len()];
        return Err(format!(
            "--seat {missing} has no --driver; pair each --seat with a --driver (e.g. --seat {missing} --driver human)"
        ));
    }
    for seat in game_seats {
        if !seats.contains(seat) {
            seats.push(seat.clone());
        }
    }
    Ok(seats
        .into_iter()
        .enumerate()
        .map(|(i, seat)| (seat, specs.get(i).cloned().unwrap_or(DriverSpec::Random { seed: None })))
        .collect())
}

/// `--console SEAT` names an agent's seat, and no seat is played by
/// `--driver human` (the console owns the terminal's input).
fn check_console(args: &PlayArgs, assignments: Vec<(String, DriverSpec)>) -> Result<Vec<(String, DriverSpec)>, String> {
    let Some(console) = &args.console else { return Ok(assignments) };
    let seats: Vec<&str> = assignments.iter().map(|(s, _)| s.as_str()).collect();
    match assignments.iter().find(|(seat, _)| seat == console) {
        None => Err(format!("--console {console}: no such seat (seats: {})", seats.join(", "))),
        Some((_, DriverSpec::Human)) => {
            Err(format!("--console {console}: a person already plays it; the console is for a seat an agent plays"))
        }
        Some(_) => match assignments.iter().find(|(_, spec)| *spec == DriverSpec::Human) {
            Some((seat, _)) => Err(format!(
                "--console reads the terminal, so seat {seat} cannot be --driver human too; /take plays {console} yourself"
            )),
            None => Ok(assignments),
        },
    }
}

/// The controller identity of the whole session, from its drivers.
fn controller(specs: &[(String, DriverSpec)]) -> SessionControllerIdentity {
    let kind = gaos_runner::drivers::session_controller_kind(specs.iter().map(|(_, spec)| spec));
    SessionControllerIdentity::new(kind, "gaos-play").with_version(env!("CARGO_PKG_VERSION"))
}

/// Run `gaos play` with the games of `registry` (in-process play serves them).
pub fn run(mut args: PlayArgs, registry: &GameRegistry) -> ExitCode {
    let mut registry = registry.clone();
    if crate::modules::is_module_path(&args.game) {
        let loaded = args
            .module_limits
            .limits()
            .and_then(|limits| crate::modules::add_module(&mut registry, Path::new(&args.game), &limits));
        match loaded {
            Ok(id) => args.game = id,
            Err(e) => return usage(e),
        }
    }
    let registry = &registry;
    let game_seats = registry.get(&args.game).map(|g| g.seats()).unwrap_or_default();
    if args.host.is_none() && game_seats.is_empty() {
        let known: Vec<String> = registry.list().iter().map(|g| g.game_ref().id).collect();
        return usage(format!("unknown game {:?}; in-process play knows {}", args.game, known.join(", ")));
    }
    let assignments = match assign(&args, &game_seats).and_then(|a| check_console(&args, a)) {
        Ok(a) => a,
        Err(e) => return usage(e),
    };
    let seed = args.seed.unwrap_or_else(|| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        nanos ^ std::process::id().rotate_left(16)
    });
    let openai = args.openai.config();
    // What a `process` driver's start message says: the game, the level played and the seed.
    let levels = registry.get(&args.game).map(|g| g.levels()).unwrap_or_default();
    let level = match &args.level_id {
        Some(id) => levels.into_iter().find(|l| &l.id == id),
        None => levels.into_iter().next(),
    };
    let mut drivers: Vec<Box<dyn AgentDriver>> = Vec::new();
    for ((seat, spec), text) in
        assignments.iter().zip(args.drivers.iter().map(String::as_str).chain(std::iter::repeat("random")))
    {
        let start = gaos_runner::drivers::ProcessStart {
            game: args.game.clone(),
            seat: seat.clone(),
            level_id: level.as_ref().map(|l| l.id.clone()).or_else(|| args.level_id.clone()).unwrap_or_default(),
            level: level.as_ref().map_or(Value::Null, |l| l.level.clone()),
            seed,
            entrant: text.to_owned(),
        };
        let process = gaos_runner::drivers::ProcessSettings { start, ..Default::default() };
        let settings = DriverSettings { openai: openai.clone(), process, ..DriverSettings::new(seed, seat.clone()) };
        match spec.build(&settings) {
            Ok(driver) => drivers.push(driver),
            Err(e) => return usage(format!("seat {seat}: {e}")),
        }
    }
    let played = async {
        match play(&args, registry, &assignments, drivers, seed).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("gaos play: {e}");
                ExitCode::FAILURE
            }
        }
    };
    crate::run_support::block_on(played, usage)
}

async fn play(
    args: &PlayArgs,
    registry: &GameRegistry,
    assignments: &[(String, DriverSpec)],
    drivers: Vec<Box<dyn AgentDriver>>,
    seed: u32,
) -> Result<(), String> {
    let seats: Vec<String> = assignments.iter().map(|(s, _)| s.clone()).collect();
    let policy = SessionPolicy::host_default().with_controller(&controller(assignments));
    let mut request = Map::new();
    request.insert("game".into(), args.game.clone().into());
    request.insert("seed".into(), seed.into());
    request.insert("participantId".into(), seats[0].clone().into());
    if let Some(level) = &args.level_id {
        request.insert("levelId".into(), level.clone().into());
    }
    let keys = signing_keys(&args.seat_keys, &seats)?;
    if let Some(keys) = &keys {
        let roster = seats.iter().zip(keys).map(|(seat, key)| key.seat_key(seat, 1)).collect();
        request.insert("seatKeys".into(), Value::Array(roster));
        request.insert("signaturePolicy".into(), gaos_kernel::signing::signature_policy_value());
    }
    let key_of = |i: usize| keys.as_ref().map(|k| k[i].clone());
    let request = Value::Object(request);
    let mut _scratch = None;
    let (handles, where_): (Vec<Box<dyn SessionHandle>>, String) = match &args.host {
        None => {
            let scratch = ScratchDir::new().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
            let host =
                open_local_host(&scratch.0, HostOptions::new(registry.clone())).await.map_err(|e| e.to_string())?;
            _scratch = Some(scratch);
            let created =
                InProcessSessionHandle::create(&host, &request, &policy).await.map_err(|e| format!("create: {e}"))?;
            let mut handles: Vec<Box<dyn SessionHandle>> = Vec::new();
            for (i, seat) in seats.iter().enumerate().skip(1) {
                let token = created.seat_token(seat).ok_or_else(|| format!("the session has no seat {seat:?}"))?;
                let attach = AttachRequest::new(format!("gaos-play:{seat}"));
                let handle = InProcessSessionHandle::attach(&host, token, &created.session_id, &attach, &policy)
                    .await
                    .map_err(|e| format!("attach {seat}: {e}"))?;
                handles.push(Box::new(handle.with_signing_key(key_of(i))));
            }
            handles.insert(0, Box::new(created.handle.with_signing_key(key_of(0))));
            (handles, "in process".to_owned())
        }
        Some(url) => {
            let token = crate::run_support::operator_token(args.token.as_ref())?;
            let operator = SessionClient::new(url, token).map_err(|e| e.to_string())?;
            let created =
                RemoteSessionHandle::create(&operator, &request, &policy).await.map_err(|e| format!("create: {e}"))?;
            let mut handles: Vec<Box<dyn SessionHandle>> = Vec::new();
            for (i, seat) in seats.iter().enumerate().skip(1) {
                let client = created.seat_client(seat).map_err(|e| e.to_string())?;
                let attach = AttachRequest::new(format!("gaos-play:{seat}"));
                let handle = RemoteSessionHandle::attach(client, &created.session_id, &attach, &policy)
                    .await
                    .map_err(|e| format!("attach {seat}: {e}"))?;
                handles.push(Box::new(handle.with_signing_key(key_of(i))));
            }
            handles.insert(0, Box::new(created.handle.with_signing_key(key_of(0))));
            (handles, operator.base_url().to_owned())
        }
    };
    let session_id = handles[0].session_id().to_owned();
    if !args.json {
        println!("gaos play: {} session {session_id} ({where_}), seed {seed}", args.game);
    }
    let hold = std::time::Duration::from_millis(args.pace_ms.unwrap_or(0));
    let paced = args.watch || !hold.is_zero();
    let run_policy = RunPolicy {
        pacing: if paced { Pacing::Paced } else { Pacing::Unpaced },
        finalize: FinalizeMode::Caller,
        ..RunPolicy::default()
    };
    let handles: Vec<Arc<dyn SessionHandle>> = handles.into_iter().map(Arc::from).collect();
    // One seat failing (or Ctrl-C) stops every seat: the others would wait
    // for it forever. The session itself stays as it is.
    let cancel = crate::run_support::cancel_on_ctrl_c();
    let mut tasks = Vec::new();
    for (handle, mut driver) in handles.iter().cloned().zip(drivers) {
        let seat = handle.seat().to_owned();
        let watch =
            paced.then(|| Arc::new(Printer { seat: seat.clone(), print: args.watch, hold }) as Arc<dyn Presenter>);
        let cancel = cancel.clone();
        let console = (args.console.as_deref() == Some(seat.as_str())).then(|| {
            let (control, inputs) = gaos_runner::run_control();
            crate::play_console::start(&seat, driver.id(), control);
            inputs
        });
        tasks.push(tokio::spawn(async move {
            let mut options = RunOptions::new(run_policy).cancel(cancel.clone());
            if let Some(presenter) = watch {
                options = options.presenter(presenter);
            }
            let mut log = crate::play_console::ConsoleLog { seat, person: false };
            if let Some(inputs) = console {
                options = options.inputs(inputs).events(&mut log);
            }
            let outcome = run_session(handle.as_ref(), driver.as_mut(), options).await;
            if outcome.is_err() {
                cancel.cancel();
            }
            outcome
        }));
    }
    let mut outcomes: Vec<RunOutcome> = Vec::new();
    let mut failures: Vec<(String, RunError)> = Vec::new();
    for (task, seat) in tasks.into_iter().zip(&seats) {
        match task.await.map_err(|e| format!("seat {seat}: the run task failed: {e}"))? {
            Ok(outcome) => outcomes.push(outcome),
            Err(e) => failures.push((seat.clone(), e)),
        }
    }
    // Report the cause, not the seats cancelled because of it.
    if let Some((seat, error)) = failures.iter().find(|(_, e)| *e != RunError::Cancelled).or_else(|| failures.first()) {
        let hint = if *error == RunError::Cancelled { " (interrupted; the session is left as it is)" } else { "" };
        return Err(format!("seat {seat}: {error}{hint}"));
    }
    let result = handles[0].finalize(FinalizeRequest::default()).await.map_err(|e| format!("finalize: {e}"))?;
    for handle in &handles {
        handle.close();
    }
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from(format!("./{session_id}.gaos-replay.jsonl")));
    let replay = match result.replay_text() {
        Some(text) => {
            std::fs::write(&out, text).map_err(|e| format!("cannot write the replay to {}: {e}", out.display()))?;
            Some(out)
        }
        None => None,
    };
    if !args.json {
        announce_endings(assignments, &outcomes);
    }
    report(args, &session_id, &seats, &outcomes, &result, replay.as_ref());
    Ok(())
}

/// A person's driver is not asked again once the game is over, so the
/// last round's result (what changed in the seat's view since its last
/// move) is told here, on stderr beside the prompts.
fn announce_endings(assignments: &[(String, DriverSpec)], outcomes: &[RunOutcome]) {
    for ((seat, spec), outcome) in assignments.iter().zip(outcomes) {
        if *spec != DriverSpec::Human {
            continue;
        }
        let Some(last) = outcome.final_observation() else { continue };
        let view = |o: &Observation| {
            let mut view = o.tick().clone();
            if let Some(map) = view.as_object_mut() {
                map.remove("legalActions");
            }
            view
        };
        let end = view(last);
        let Some(before) = outcome.observations.iter().rev().map(view).find(|v| *v != end) else { continue };
        let changes = gaos_runner::drivers::human_view::describe_changes(&before, &end, seat);
        if !changes.is_empty() {
            eprintln!("\n[seat {seat} · game over]\nSince your last move:");
            for change in changes {
                eprintln!("  * {change}");
            }
        }
    }
}

fn report(
    args: &PlayArgs,
    session_id: &str,
    seats: &[String],
    outcomes: &[RunOutcome],
    result: &SessionResult,
    replay: Option<&PathBuf>,
) {
    let steps: Vec<(String, usize)> = seats.iter().cloned().zip(outcomes.iter().map(|o| o.decisions.len())).collect();
    let tokens = outcomes
        .iter()
        .flat_map(|o| &o.decisions)
        .filter_map(|d| d.usage)
        .fold(None, |sum: Option<gaos_runner::Usage>, u| Some(sum.unwrap_or_default() + u));
    let ranking = result.outcome.get("outcome").and_then(|o| o.get("ranking")).and_then(Value::as_array);
    if args.json {
        let mut out = Map::new();
        out.insert("sessionId".into(), session_id.into());
        out.insert("game".into(), args.game.clone().into());
        out.insert("outcome".into(), result.outcome.clone());
        let mut by_seat = Map::new();
        for (seat, n) in &steps {
            by_seat.insert(seat.clone(), (*n as u64).into());
        }
        out.insert("steps".into(), Value::Object(by_seat));
        let mut by_person = Map::new();
        for (seat, outcome) in seats.iter().zip(outcomes) {
            if !outcome.person_decisions.is_empty() {
                let decisions = outcome.person_decisions.iter().map(|&i| Value::from(i)).collect();
                by_person.insert(seat.clone(), Value::Array(decisions));
            }
        }
        if !by_person.is_empty() {
            out.insert("personDecisions".into(), Value::Object(by_person));
        }
        if let Some(usage) = tokens {
            let mut t = Map::new();
            t.insert("inputTokens".into(), usage.input_tokens.into());
            t.insert("outputTokens".into(), usage.output_tokens.into());
            out.insert("tokens".into(), Value::Object(t));
            if let Some(cost) = usage.cost {
                out.insert("cost".into(), Value::Number(cost));
            }
        }
        if let Some(path) = replay {
            out.insert("replay".into(), path.display().to_string().into());
        }
        println!("{}", canonical_json(&Value::Object(out)));
        return;
    }
    let status = result.outcome.get("status").and_then(Value::as_str).unwrap_or("?");
    let stars = result.outcome.get("stars").map(canonical_json).unwrap_or_else(|| "null".into());
    println!("outcome: {status} (stars {stars})");
    if let Some(ranking) = ranking {
        let line: Vec<String> = ranking
            .iter()
            .map(|r| {
                let field = |k: &str| r.get(k).map(canonical_json).unwrap_or_default();
                let score = r.get("score").map(|s| format!(" score {}", canonical_json(s))).unwrap_or_default();
                format!("#{} {}{score}", field("rank"), field("seat").trim_matches('"'))
            })
            .collect();
        println!("ranking: {}", line.join(", "));
    }
    let total: usize = steps.iter().map(|(_, n)| n).sum();
    let per_seat: Vec<String> = steps.iter().map(|(s, n)| format!("{s} {n}")).collect();
    println!("steps: {} ({total} total)", per_seat.join(", "));
    for (seat, outcome) in seats.iter().zip(outcomes).filter(|(_, o)| !o.person_decisions.is_empty()) {
        let numbers: Vec<String> = outcome.person_decisions.iter().map(|i| (i + 1).to_string()).collect();
        println!("you played seat {seat} at its decision(s) {}", numbers.join(", "));
    }
    if let Some(usage) = tokens {
        let cost = usage.cost.map(|c| format!(", cost {c} as the provider reported it")).unwrap_or_default();
        println!("tokens: {} in, {} out{cost}", usage.input_tokens, usage.output_tokens);
    }
    match replay {
        Some(path) => println!("replay: {}", path.display()),
        None => println!("replay: not included by the session policy"),
    }
}
