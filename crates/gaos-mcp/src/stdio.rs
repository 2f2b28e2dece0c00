//! The stdio transport: `gaos mcp --host URL --session ID --seat S`, one
//! seat attached once at startup.

use gaos_session::ErrorCode;
use std::sync::Arc;

use gaos_session::SessionError;
use rmcp::ServiceExt;

use crate::remote::{RemoteSeat, SeatOptions};
use crate::seat::{Attachment, SeatSession};
use crate::server::{GaosMcpServer, SeatSource};

/// Whether an attach failure at startup will not heal by itself (bad token,
/// unknown, finalized or stopped session, unreachable host): then the
/// server does not start. The others (another controller's live claim,
/// which lapses unless renewed; a busy host) are retried on the next tool
/// call.
pub fn is_permanent_attach_failure(error: &SessionError) -> bool {
    let transient = error.code() == Some(&ErrorCode::WriterConflict) || matches!(error.status(), Some(429 | 500..=599));
    !transient
}

/// The seat's attachment for `options`, attached now. A permanent failure
/// is returned; a passing one (e.g. `writer_conflict`) is logged to stderr
/// and retried on the next tool call.
pub async fn attach_at_startup(options: SeatOptions) -> Result<Arc<Attachment>, SessionError> {
    let attachment = Arc::new(Attachment::new(Box::new(move || {
        let options = options.clone();
        Box::pin(async move {
            let seat = RemoteSeat::attach(options).await?;
            Ok(Arc::new(seat) as Arc<dyn SeatSession>)
        })
    })));
    match attachment.seat().await {
        Ok(seat) => {
            let binding = seat.handle().binding();
            tracing::info!(session = %binding.session_id, seat = %binding.participant_id, revision = binding.revision, "seat attached");
        }
        Err(e) if is_permanent_attach_failure(&e) => return Err(e),
        Err(e) => tracing::warn!(error = %e, "the seat could not be attached yet; every tool call tries again"),
    }
    Ok(attachment)
}

/// Serve the seat tools on stdin/stdout until the client disconnects. Only
/// MCP messages go to stdout; logs go wherever `tracing` writes (stderr in
/// `gaos mcp`).
pub async fn serve_stdio(options: SeatOptions) -> Result<(), String> {
    let attachment = attach_at_startup(options).await.map_err(|e| format!("cannot attach the seat: {e}"))?;
    let server = GaosMcpServer::new(SeatSource::Fixed(Arc::clone(&attachment)));
    let running =
        server.serve(rmcp::transport::stdio()).await.map_err(|e| format!("the MCP client did not initialize: {e}"))?;
    let ended = running.waiting().await;
    attachment.close().await;
    ended.map(|_| ()).map_err(|e| format!("the MCP session failed: {e}"))
}
