//! The cost of the engine boundary and of a JS game through the kernel.
//!
//! ```sh
//! cargo run --release -p gaos-module --example module_bench -- [TRANSITIONS] [COUNTER.mjs]
//! ```
//!
//! 1. Per-call overhead, host → JS → host: `commandToAction` of the counter
//!    (command and context in as JSON text, a SubmittedAction back, checked
//!    and parsed), and one `advance` with everything derived from the new
//!    state (view, replayMetrics, two viewFor) in the same call.
//! 2. Committed transitions/s through `SessionKernel` (rounds of ingest a,
//!    ingest b, advance — what `gaos kernel-bench` runs), per tenth, for the
//!    JS counter and the built-in Rust counter, then rehydration.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use gaos_json::Value;
use gaos_kernel::{
    CommandContext, CommandSubmission, DynReducer, Game, KernelError, KernelOptions, SeedPolicy, SessionKernel,
    SubmittedAction,
};
use gaos_module::{ModuleGame, ModuleLimits};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let transitions: u64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(300_000);
    let path = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/modules/counter.mjs"));
    let module = ModuleGame::load(&path, &ModuleLimits::default())?;
    println!("module {} ({}), sha256 {}", module.game_ref().id, path.display(), module.identity().sha256);

    boundary(&module)?;
    let js: Arc<dyn Game> = Arc::new(module);
    let rust: Arc<dyn Game> = Arc::new(gaos_games::counter::CounterGame);
    for (name, game) in [("JS module", js), ("built-in", rust)] {
        kernel_run(name, &game, transitions)?;
    }
    Ok(())
}

fn boundary(module: &ModuleGame) -> Result<(), Box<dyn std::error::Error>> {
    let command = gaos_json::parse(r#"{"n":1}"#)?;
    let ctx = CommandContext { session_id: "bench", participant_id: "a", submission_id: "a-1", cursor: 0, tick: 0 };
    let calls: u32 = std::env::var("BOUNDARY_CALLS").ok().and_then(|c| c.parse().ok()).unwrap_or(100_000);
    for _ in 0..1_000 {
        module.command_to_action(&command, &ctx)?;
    }
    let start = Instant::now();
    for _ in 0..calls {
        module.command_to_action(&command, &ctx)?;
    }
    let per_call = start.elapsed().as_secs_f64() / f64::from(calls) * 1e6;
    println!("boundary: commandToAction {per_call:.2} µs/call ({calls} calls)");

    let view = gaos_json::parse(r#"{"status":"playing"}"#)?;
    let start = Instant::now();
    for _ in 0..calls {
        module.legal_actions(&view, "a");
    }
    let per_call = start.elapsed().as_secs_f64() / f64::from(calls) * 1e6;
    println!("boundary: legalActions (two small commands back) {per_call:.2} µs/call ({calls} calls)");

    let reducer = module.reducer();
    let mut state = reducer.init(&gaos_json::parse(r#"{"rounds":1000000000}"#)?, 0)?;
    let inputs = [SubmittedAction::new("Action 1").with_index(1.0).with_seat("a")];
    let start = Instant::now();
    for _ in 0..calls {
        state = reducer.advance(state, &inputs)?;
    }
    let per_call = start.elapsed().as_secs_f64() / f64::from(calls) * 1e6;
    println!("boundary: advance + view + replayMetrics + 2 viewFor {per_call:.2} µs/call ({calls} calls)");
    Ok(())
}

fn kernel_run(name: &str, game: &Arc<dyn Game>, transitions: u64) -> Result<(), KernelError> {
    let rounds = transitions.div_ceil(3).max(1);
    let transitions = rounds * 3;
    let level = gaos_json::parse(&format!(r#"{{"rounds":{rounds}}}"#)).expect("a level");
    let options =
        Arc::new(KernelOptions::builder(game, "bench").level("bench", level).seed(1, SeedPolicy::Explicit).build());
    let mut kernel: SessionKernel<DynReducer> = SessionKernel::from_shared(Arc::clone(&options))?;
    let commands = [("a", gaos_json::parse(r#"{"n":1}"#).unwrap()), ("b", gaos_json::parse(r#"{"n":2}"#).unwrap())];
    let tenth = (rounds / 10).max(1);
    let mut tenths = Vec::new();
    let start = Instant::now();
    let mut mark = start;
    for round in 0..rounds {
        for (seat, command) in &commands {
            let id = format!("{seat}-{round}");
            let submission = CommandSubmission::new("bench", kernel.cursor(), seat, &id, Value::clone(command));
            let mut prepared = kernel.prepare_ingest(&submission)?;
            kernel.commit(&mut prepared)?;
        }
        let mut prepared = kernel.prepare_advance(None)?;
        kernel.commit(&mut prepared)?;
        if (round + 1) % tenth == 0 && tenths.len() < 10 {
            let now = Instant::now();
            tenths.push((tenth * 3) as f64 / (now - mark).as_secs_f64());
            mark = now;
        }
    }
    let total = start.elapsed().as_secs_f64();
    let transcript = kernel.live_transcript();
    let t = Instant::now();
    let rebuilt = SessionKernel::rehydrate(options, Some(&transcript.header), transcript.events)?;
    let rehydrate = t.elapsed().as_secs_f64();
    assert_eq!(rebuilt.digest(), kernel.digest());
    let first = tenths.first().copied().unwrap_or(0.0);
    let last = tenths.last().copied().unwrap_or(0.0);
    println!(
        "{name}: {transitions} transitions in {total:.2} s = {:.0}/s; first tenth {first:.0}/s, last tenth {last:.0}/s \
         (last/first {:.2}); rehydrate {rehydrate:.2} s",
        transitions as f64 / total,
        last / first
    );
    Ok(())
}
