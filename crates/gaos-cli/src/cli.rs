//! The parsed `gaos` command line and its dispatch to the subcommands,
//! each given the process's one [`GameRegistry`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gaos_games::GameRegistry;

use crate::{
    bench_cmd, kernel_bench, loadgen, long_bench, mcp_cmd, modules, play_cmd, replay_cmd, serve_cmd, session_cmd,
};

#[derive(Parser)]
#[command(name = "gaos", version, about = "GAOS authoritative session stack: host, kernel tools, conformance")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run the durable authoritative host (embedded SQLite by default).
    Serve {
        /// Data directory for the embedded database and operator token.
        #[arg(long, default_value = "./gaos-data")]
        data: PathBuf,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8899")]
        listen: String,
        /// Shortest controller lease a create or attach may ask for (ms).
        #[arg(long, default_value_t = 1_000)]
        lease_min_ms: u64,
        /// Longest controller lease (ms); also the default, clamped to the bounds.
        #[arg(long, default_value_t = 300_000)]
        lease_max_ms: u64,
        /// Testing only: let the operator move the host clock forward
        /// (POST /v1/admin/clock). Never use in production.
        #[arg(long, hide = true)]
        test_clock: bool,
        #[command(flatten)]
        limits: serve_cmd::LimitArgs,
        /// Also serve the game module FILE.mjs (repeatable); a module with
        /// the id of a built-in game replaces it.
        #[arg(long = "game", value_name = "FILE")]
        game_modules: Vec<PathBuf>,
        /// Also serve every game module (*.mjs, *.js) directly in DIR (repeatable).
        #[arg(long = "games", value_name = "DIR")]
        game_dirs: Vec<PathBuf>,
        #[command(flatten)]
        module_limits: modules::ModuleLimitArgs,
        /// Serve the benchmark runs in DIR (output directories of `gaos
        /// bench run`) at /bench/: each run's report, its episodes opening
        /// in the replay viewer. Read-only, and open to anyone who reaches
        /// the host (page links carry no token).
        #[arg(long, value_name = "DIR")]
        bench_reports: Option<PathBuf>,
        /// Hold the benchmark manifest FILE (repeatable): an official
        /// evaluation whose policy names its digest is bound to it, also
        /// when the create request does not carry the manifest.
        #[arg(long = "manifest", value_name = "FILE")]
        manifests: Vec<PathBuf>,
    },
    /// Conformance-pack tools.
    Conformance {
        #[command(subcommand)]
        command: ConformanceCommand,
    },
    /// Benchmark the session kernel on the counter game.
    KernelBench {
        /// Committed transitions to run (rounded up to whole rounds of 3).
        #[arg(long, default_value_t = 300_000)]
        transitions: u64,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Run the game module FILE.mjs instead of the built-in counter (it
        /// must play like conformance/counter: seats a and b, `{"n": N}`
        /// commands, a `rounds` level).
        #[arg(long, value_name = "FILE")]
        game_module: Option<PathBuf>,
        #[command(flatten)]
        module_limits: modules::ModuleLimitArgs,
        /// Compact the kernel every N transitions (store its compacted
        /// checkpoint, drop history): memory stays flat; restart is timed
        /// from the latest checkpoint and finalize/verify are skipped.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        compact_every: Option<u64>,
    },
    /// gaos.replay tools: verify and inspect replay files.
    Replay {
        #[command(subcommand)]
        command: replay_cmd::ReplayCommand,
    },
    /// Load a running host with concurrent counter sessions; report actions/s and ack latency.
    Loadgen(loadgen::LoadgenArgs),
    /// Long-session benchmarks (issue 19): a 2-hour 20 Hz ticks session's RSS, restart time over a large database.
    LongBench {
        #[command(subcommand)]
        bench: long_bench::LongBench,
    },
    /// Play one match, one driver per seat (in process, or on --host).
    Play(play_cmd::PlayArgs),
    /// Benchmarks: run (or resume) a manifest, verify a bundle.
    Bench {
        #[command(subcommand)]
        command: bench_cmd::BenchCommand,
    },
    /// Serve one seat's tools to an MCP client (an LLM agent) over stdio.
    Mcp(mcp_cmd::McpArgs),
    /// A running host's sessions from a shell: new, act, observe, finalize.
    Session {
        #[command(subcommand)]
        command: session_cmd::SessionCommand,
    },
}

#[derive(Subcommand)]
pub(crate) enum ConformanceCommand {
    /// Run a gaos.conformance-script and write its output directory.
    Run {
        /// The script (JSON).
        script: PathBuf,
        /// Output directory (created if needed).
        #[arg(long)]
        out: PathBuf,
        /// Run the script's game from this game module (FILE.mjs) instead of
        /// the registered game of the same id (repeatable).
        #[arg(long = "game-module", value_name = "FILE")]
        game_modules: Vec<PathBuf>,
        #[command(flatten)]
        module_limits: modules::ModuleLimitArgs,
    },
}

/// Run one parsed command with the games of `registry`.
pub(crate) fn dispatch(command: Command, registry: &GameRegistry) -> ExitCode {
    match command {
        Command::Serve {
            data,
            listen,
            lease_min_ms,
            lease_max_ms,
            test_clock,
            limits,
            game_modules,
            game_dirs,
            module_limits,
            bench_reports,
            manifests,
        } => match modules::with_modules(registry, &game_modules, &game_dirs, &module_limits) {
            Ok(registry) => serve_cmd::run(
                &registry,
                serve_cmd::ServeSettings {
                    data,
                    listen,
                    lease_min_ms,
                    lease_max_ms,
                    test_clock,
                    limits,
                    manifests,
                    bench_reports,
                },
            ),
            Err(e) => {
                eprintln!("gaos serve: {e}");
                ExitCode::from(2)
            }
        },
        Command::Conformance { command: ConformanceCommand::Run { script, out, game_modules, module_limits } } => {
            let registry = match modules::with_modules(registry, &game_modules, &[], &module_limits) {
                Ok(registry) => registry,
                Err(e) => {
                    eprintln!("gaos conformance run: {e}");
                    return ExitCode::from(2);
                }
            };
            match gaos_conformance::run_script_file_with(&registry, &script, &out) {
                Ok(summary) => {
                    println!(
                        "{}: {} steps ({} reported errors, as scripted) -> {} ({} files)",
                        summary.name,
                        summary.steps,
                        summary.errors,
                        out.display(),
                        summary.files.len()
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("gaos conformance run: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::KernelBench { transitions, json, game_module, module_limits, compact_every } => {
            match kernel_bench::run_with(transitions, registry, game_module.as_deref(), &module_limits, compact_every) {
                Ok(report) => {
                    if json {
                        println!("{}", gaos_json::canonical_json(&report.to_json()));
                    } else {
                        print!("{}", report.table());
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("gaos kernel-bench: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Replay { command } => replay_cmd::run(command, registry),
        Command::Loadgen(args) => loadgen::run(args),
        Command::LongBench { bench } => long_bench::run(bench),
        Command::Play(args) => play_cmd::run(args, registry),
        Command::Bench { command } => bench_cmd::run(command, registry),
        Command::Mcp(args) => mcp_cmd::run(args),
        Command::Session { command } => session_cmd::run(command),
    }
}
