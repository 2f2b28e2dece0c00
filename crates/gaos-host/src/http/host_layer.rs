//! The one layer in front of the host's routes (a single `from_fn` keeps a
//! request's path through axum short: each layer boxes a clone of the
//! service it wraps and a future per request). In order:
//!
//! 1. a cluster's session routes go to their owner (`route_sessions.rs`);
//!    a request forwarded elsewhere is counted and answered there;
//! 2. a request served here is counted (`/metrics`);
//! 3. an error answered here without a JSON body gets one (`json_errors.rs`);
//! 4. every answer names the node that served it.

use std::sync::atomic::Ordering;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::json_errors::as_json;
use super::route_sessions::{named, route, session_of};
use crate::host::Host;

/// The layer (`axum::middleware::from_fn_with_state`).
pub(crate) async fn host_layer(State(host): State<Host>, request: Request, next: Next) -> Response {
    // Only a cluster reads the session out of the path (a percent-decoded
    // copy); a single host serves straight away.
    let session = host.cluster().and_then(|_| session_of(request.uri().path()));
    let response = match session {
        Some(id) => route(&host, &id, request, |request| serve_here(&host, request, next.clone())).await,
        None => serve_here(&host, request, next).await,
    };
    named(response, host.node_id())
}

/// Serve a request on this host: count it, run it, make its error JSON.
async fn serve_here(host: &Host, request: Request, next: Next) -> Response {
    host.metrics().http_requests.fetch_add(1, Ordering::Relaxed);
    as_json(next.run(request).await).await
}
