//! The `gaos` command line as a library: a crate with games of its own gets
//! every subcommand (serve, play, bench, mcp, replay, conformance,
//! kernel-bench, loadgen, session) serving the built-in games and its own.
//!
//! ```no_run
//! use std::process::ExitCode;
//! # struct MyGame;
//! # impl gaos_kernel::Game for MyGame {
//! #     fn game_ref(&self) -> gaos_kernel::GameRef { gaos_kernel::GameRef::conventional("my/game") }
//! #     fn description(&self) -> &str { "" }
//! #     fn seats(&self) -> Vec<String> { vec![] }
//! #     fn levels(&self) -> Vec<gaos_kernel::LevelSpec> { vec![] }
//! #     fn reducer(&self) -> gaos_kernel::DynReducer { unimplemented!() }
//! #     fn command_to_action(&self, _: &gaos_json::Value, _: &gaos_kernel::CommandContext<'_>)
//! #         -> Result<gaos_kernel::SubmittedAction, gaos_kernel::GameError> { unimplemented!() }
//! #     fn legal_actions(&self, _: &gaos_json::Value, _: &str) -> Vec<gaos_json::Value> { vec![] }
//! # }
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
mod bench_cmd;
mod bench_report;
mod cli;
mod kernel_bench;
mod loadgen;
mod mcp_cmd;
mod modules;
mod openai_args;
mod play_cmd;
mod replay_cmd;
mod serve_cmd;
mod session_cmd;

pub use app::App;
