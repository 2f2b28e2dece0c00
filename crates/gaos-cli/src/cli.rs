//! The parsed `gaos` command line and its dispatch to the subcommands,
//! each given the process's one [`GameRegistry`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gaos_games::GameRegistry;

use crate::{
    arena_cmd, bench_cmd, games_cmd, kernel_bench, keygen_cmd, loadgen, long_bench, mcp_cmd, modules, play_cmd,
    replay_cmd, serve_cmd, session_cmd,
};

/// `gaos --version`: the crate version and the git commit it was built from
/// (recorded by build.rs; "unknown" for a build outside a git checkout).
pub(crate) const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("GAOS_VERSION_NOTE"), ")");

#[derive(Parser)]
#[command(name = "gaos", version = VERSION, about = "GAOS authoritative session stack: host, kernel tools, conformance")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run the durable authoritative host (embedded SQLite by default).
    Serve(serve_cmd::ServeArgs),
    /// List the games this binary serves: seats, levels, cadence, origin.
    Games(games_cmd::GamesArgs),
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
        /// RFC-010 signed ingest: every submission carries a chain link and an
        /// Ed25519 signature the kernel checks (signed before the clock starts).
        #[arg(long)]
        signed: bool,
    },
    /// gaos.replay tools: verify and inspect replay files.
    Replay {
        #[command(subcommand)]
        command: replay_cmd::ReplayCommand,
    },
    /// Load a running host with concurrent counter sessions; report actions/s and ack latency.
    Loadgen(loadgen::LoadgenArgs),
    /// Long-session benchmarks: a 2-hour 20 Hz ticks session's RSS, restart time over a large database.
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
    /// Tournaments between agents: run (or resume) an arena manifest, verify a bundle.
    Arena {
        #[command(subcommand)]
        command: arena_cmd::ArenaCommand,
    },
    /// Serve one seat's tools to an MCP client (an LLM agent) over stdio.
    Mcp(mcp_cmd::McpArgs),
    /// Write a seat's Ed25519 key pair for signed play (FILE and FILE.pub, the roster entry).
    Keygen(keygen_cmd::KeygenArgs),
    /// A running host's sessions from a shell: new, act, observe, finalize, reset.
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
        Command::Serve(args) => serve_cmd::run(registry, args),
        Command::Games(args) => games_cmd::run(args, registry),
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
        Command::KernelBench { transitions, json, game_module, module_limits, compact_every, signed } => {
            match kernel_bench::run_with(
                transitions,
                registry,
                game_module.as_deref(),
                &module_limits,
                compact_every,
                signed,
            ) {
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
        Command::Arena { command } => arena_cmd::run(command, registry),
        Command::Mcp(args) => mcp_cmd::run(args),
        Command::Keygen(args) => keygen_cmd::run(args),
        Command::Session { command } => session_cmd::run(command),
    }
}
