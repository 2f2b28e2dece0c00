//! The `gaos` command line as a library: a crate with games of its own gets
//! every subcommand (serve, games, play, bench, arena, mcp, replay, conformance,
//! kernel-bench, loadgen, session) serving the built-in games and its own.
//!
//! ```no_run
//! use std::process::ExitCode;
//! // Any type implementing `gaos_kernel::Game`; examples/duel is a complete one.
//! # use gaos_games::sealed::SealedGame as MyGame;
//!
//! fn main() -> ExitCode {
//!     gaos_cli::App::new().game(MyGame).run()
//! }
//! ```
//!
//! A binary built this way may also want the allocator `gaos` itself uses
//! (`#[global_allocator] static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;`):
//! the kernel allocates many small JSON values per transition.

mod app;
mod arena_cmd;
mod arena_progress;
mod arena_verify;
mod bench_cmd;
mod charts;
mod cli;
mod environment;
mod games_cmd;
mod kernel_bench;
mod kernel_bench_memory;
mod kernel_bench_signed;
mod keygen_cmd;
mod loadgen;
mod long_bench;
mod mcp_cmd;
mod modules;
mod openai_args;
mod play_cmd;
mod play_console;
mod replay_cmd;
mod run_support;
mod seat_key_args;
mod serve_cmd;
mod session_cmd;
mod store_args;

pub use app::App;
