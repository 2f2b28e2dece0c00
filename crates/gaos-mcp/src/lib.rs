//! An MCP server that lets any LLM agent drive one seat of a GAOS session
//! through tools, under the controller-lease rules of `spec/lease.md`.
//!
//! Tools: `observe` (the seat's view, whose move, status, legal actions),
//! `act` (`{"action": {…}}`, `{"command": …}` or `{"index": n}`), `pause`,
//! `resume`, `status` (lease, epoch, pause reasons, cursor), `finalize`,
//! `replay`, and the agent-CLI recipe tools `reset` and `transcript`
//! ([`recipe`], `spec/lifecycle.md` §6). Each answers
//! text a model reads (`Your hand: 4 4 5 · round: 1` / `Legal: card 0|1|2`)
//! plus structured JSON; failures are MCP tool errors (`isError: true`)
//! carrying the host's code and message.
//!
//! Two transports run the same tools over the same [`SeatSession`]
//! implementation ([`RemoteSeat`], the host's HTTP API through
//! `gaos-client`):
//!
//! - stdio ([`stdio::serve_stdio`], `gaos mcp --host URL --session ID --seat S`),
//! - streamable HTTP mounted on the host at `/mcp` ([`http::router`]), the
//!   seat taken from the bearer token.
//!
//! The seat is attached once, lease-aware, so this server holds the lease
//! token: when the agent thinks longer than its lease, the next `act`
//! renews the same claim and resends the same submission once (rule 8),
//! and the lapse and renewal stay visible as `gaos.lease` events.
//!
//! ```no_run
//! # async fn run() -> Result<(), String> {
//! use gaos_mcp::remote::{LeaseMode, SeatOptions};
//!
//! let options = SeatOptions {
//!     host_url: "http://127.0.0.1:8899".into(),
//!     session_id: "s-0123456789abcdef".into(),
//!     seat: "bob".into(),
//!     seat_token: std::env::var("GAOS_SEAT_TOKEN").map_err(|e| e.to_string())?,
//!     lease: LeaseMode::Claim { duration_ms: gaos_mcp::remote::DEFAULT_LEASE_MS },
//!     keep_alive: false,
//!     signing_key: None,
//! };
//! gaos_mcp::stdio::serve_stdio(options).await
//! # }
//! ```
//!
//! The tool logic is plain async code over [`SeatSession`], testable
//! without MCP:
//!
//! ```no_run
//! # async fn run(seat: &dyn gaos_mcp::SeatSession) {
//! let output = gaos_mcp::tools::call_tool(seat, "observe", None).await;
//! println!("{}", output.text);
//! # }
//! ```

pub mod error;
pub mod http;
pub mod recipe;
pub mod registry;
pub mod remote;
pub mod render;
pub mod seat;
pub mod seat_log;
pub mod server;
mod sessions;
pub mod stdio;
pub mod tool_output;
pub mod tools;

pub use error::ToolError;
pub use remote::{LeaseMode, RemoteSeat, SeatOptions};
pub use seat::{Attachment, SeatSession};
pub use server::GaosMcpServer;
pub use tools::{ToolOutput, call_tool, tool_specs};
