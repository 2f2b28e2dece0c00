//! The streamable-HTTP transport, mounted on a host at [`MCP_PATH`]: an
//! axum [`Router`] the host's binary merges into its own.
//!
//! Every request must carry a seat token (`Authorization: Bearer`); the
//! token names the session and seat ([`McpHttpOptions::resolve_seat`]).
//! The seat is attached on its first tool call and kept per token in a
//! bounded [`SeatRegistry`], shared by every MCP session (and by stateless
//! requests), so one token drives one claim however many MCP sessions use
//! it. Optional request headers shape that first attach: `Gaos-Lease` hands
//! over an existing claim's lease token (e.g. the creator's),
//! `Gaos-Lease-Ms` sets the lease duration of a new claim.
//!
//! The seat is driven through the host's own HTTP API over loopback (the
//! same [`RemoteSeat`](crate::remote::RemoteSeat) `gaos mcp` uses over stdio), so both transports run
//! one code path and every call passes the host's real authorization.
//!
//! MCP sessions are bounded per token and per host and closed when idle
//! ([`SessionLimits`], `sessions.rs`). A request from a browser page (one
//! with an `Origin` header) is served only from the host's own origin
//! ([`McpHttpOptions::allow_origin`]), as the streamable-HTTP transport
//! requires against DNS rebinding.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

pub use crate::registry::{McpCaller, SeatRegistry};
use crate::remote::LeaseMode;
use crate::server::{GaosMcpServer, SeatSource};
use crate::sessions::SessionBook;
pub use crate::sessions::SessionLimits;

/// Where the MCP endpoint is mounted.
pub const MCP_PATH: &str = "/mcp";
/// Header that hands over an existing claim's lease token at attach.
pub const LEASE_TOKEN_HEADER: &str = "gaos-lease";
/// Header that sets the lease duration (ms) of a new claim at attach.
pub const LEASE_MS_HEADER: &str = "gaos-lease-ms";
/// Default bound on the seats kept attached (least recently used go first).
pub const DEFAULT_MAX_SEATS: usize = 1024;
/// Largest MCP request body.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// Resolves a bearer token to the `(session id, seat)` it drives, or `None`
/// when it is not a seat token.
pub type ResolveSeat = Arc<dyn Fn(&str) -> Option<(String, String)> + Send + Sync>;

/// Whether a browser page of `origin` (the `Origin` header) may call
/// `/mcp` on a request whose `Host` header is `host`.
pub type AllowOrigin = Arc<dyn Fn(&str, Option<&str>) -> bool + Send + Sync>;

/// The default [`AllowOrigin`]: the host's own origin only (the origin's
/// host and port are the request's `Host`).
pub fn same_origin(origin: &str, host: Option<&str>) -> bool {
    let authority = origin.split_once("://").map_or("", |(_, rest)| rest);
    let default_port = if origin.starts_with("https://") { ":443" } else { ":80" };
    match host {
        Some(host) => {
            authority.eq_ignore_ascii_case(host)
                || format!("{authority}{default_port}").eq_ignore_ascii_case(host)
                || authority.eq_ignore_ascii_case(&format!("{host}{default_port}"))
        }
        None => false,
    }
}

/// Settings of the `/mcp` mount.
#[derive(Clone)]
pub struct McpHttpOptions {
    /// Base URL of the host's own HTTP API (loopback), e.g. `http://127.0.0.1:8899`.
    pub host_url: String,
    /// Which seat a bearer token drives (the host knows its tokens).
    pub resolve_seat: ResolveSeat,
    /// Lease duration of a new claim when the client sends no `Gaos-Lease-Ms`.
    pub default_lease_ms: u64,
    /// Most seats kept attached at once.
    pub max_seats: usize,
    /// How many MCP sessions are kept, and for how long without a request.
    pub sessions: SessionLimits,
    /// Which browser origins may call the endpoint ([`same_origin`] by default).
    pub allow_origin: AllowOrigin,
    /// Cancelled when the host shuts down: ends open MCP streams.
    pub cancel: CancellationToken,
}

impl std::fmt::Debug for McpHttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpOptions")
            .field("host_url", &self.host_url)
            .field("default_lease_ms", &self.default_lease_ms)
            .field("max_seats", &self.max_seats)
            .field("sessions", &self.sessions)
            .finish_non_exhaustive()
    }
}

impl McpHttpOptions {
    /// Options with the default lease ([`crate::remote::DEFAULT_LEASE_MS`]),
    /// seat bound and a fresh cancellation token.
    pub fn new(host_url: impl Into<String>, resolve_seat: ResolveSeat) -> Self {
        McpHttpOptions {
            host_url: host_url.into(),
            resolve_seat,
            default_lease_ms: crate::remote::DEFAULT_LEASE_MS,
            max_seats: DEFAULT_MAX_SEATS,
            sessions: SessionLimits::default(),
            allow_origin: Arc::new(same_origin),
            cancel: CancellationToken::new(),
        }
    }
}

/// The `/mcp` router: streamable HTTP behind seat-token authentication.
/// Merge it into the host's router (it has no fallback of its own).
pub fn router(options: McpHttpOptions) -> Router {
    let registry = Arc::new(SeatRegistry::new(options.host_url.clone(), options.max_seats));
    // Host-header checks guard against DNS rebinding of ambient credentials;
    // every request here must present a bearer token instead.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_cancellation_token(options.cancel.clone())
        .with_max_request_body_bytes(MAX_REQUEST_BYTES);
    let factory = Arc::clone(&registry);
    let sessions = Arc::new(SessionBook::new(options.sessions));
    let service = StreamableHttpService::new(
        move || Ok(GaosMcpServer::new(SeatSource::Bearer(Arc::clone(&factory)))),
        sessions.manager(),
        config,
    );
    let auth = Arc::new(Mount { options, sessions });
    Router::new().route_service(MCP_PATH, service).layer(middleware::from_fn_with_state(auth, authenticate))
}

/// What the authentication layer holds.
struct Mount {
    options: McpHttpOptions,
    sessions: Arc<SessionBook>,
}

/// The `Mcp-Session-Id` header.
const SESSION_HEADER: &str = "mcp-session-id";

fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    let mut body = gaos_json::Map::new();
    body.insert("error".into(), message.into());
    body.insert("code".into(), code.into());
    let mut response = (
        status,
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        gaos_json::canonical_json(&gaos_json::Value::Object(body)),
    )
        .into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, String> {
    match headers.get(name) {
        None => Ok(None),
        Some(value) => {
            value.to_str().map(|v| Some(v.trim())).map_err(|_| format!("the {name} header must be visible ASCII"))
        }
    }
}

fn lease_mode(headers: &HeaderMap, default_ms: u64) -> Result<LeaseMode, String> {
    if let Some(token) = header_text(headers, LEASE_TOKEN_HEADER)?.filter(|t| !t.is_empty()) {
        return Ok(LeaseMode::Adopt { lease_token: token.to_owned() });
    }
    let duration_ms = match header_text(headers, LEASE_MS_HEADER)? {
        None => default_ms,
        Some(text) => text
            .parse::<u64>()
            .map_err(|_| format!("the {LEASE_MS_HEADER} header must be a whole number of milliseconds"))?,
    };
    Ok(LeaseMode::Claim { duration_ms })
}

async fn authenticate(State(mount): State<Arc<Mount>>, mut request: Request, next: Next) -> Response {
    let options = &mount.options;
    let headers = request.headers();
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        if !origin.to_str().is_ok_and(|origin| (options.allow_origin)(origin, host)) {
            return refuse(
                StatusCode::FORBIDDEN,
                "forbidden_origin",
                "the /mcp endpoint serves no web page of another origin (Origin must be this host's own)",
            );
        }
    }
    let Some(token) = bearer(headers) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the /mcp endpoint drives one seat: send that seat's token as Authorization: Bearer <seat token>",
        );
    };
    let Some((session_id, seat)) = (options.resolve_seat)(token) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the bearer token is not a seat token of this host (operator and spectator tokens drive no seat)",
        );
    };
    let lease = match lease_mode(headers, options.default_lease_ms) {
        Ok(lease) => lease,
        Err(message) => return refuse(StatusCode::BAD_REQUEST, "invalid_request", &message),
    };
    let token_hash = gaos_json::sha256_hex(token.as_bytes());
    let caller = McpCaller::new(session_id, seat, token.to_owned(), lease);
    request.extensions_mut().insert(caller);
    let terminate = request.method() == Method::DELETE;
    let presented = request.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let mut response = next.run(request).await;
    // rmcp acknowledges a session DELETE with an empty 202; MCP clients
    // (the Python SDK) expect 200 or 204 and log a failure otherwise.
    if terminate && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    match presented {
        Some(id) if terminate && response.status().is_success() => mount.sessions.closed(&id.into()),
        Some(_) => {}
        None => {
            if let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
                mount.sessions.opened(token_hash, id.into()).await;
            }
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_choose_the_lease() {
        let mut headers = HeaderMap::new();
        assert_eq!(lease_mode(&headers, 5000), Ok(LeaseMode::Claim { duration_ms: 5000 }));
        headers.insert(LEASE_MS_HEADER, HeaderValue::from_static("60000"));
        assert_eq!(lease_mode(&headers, 5000), Ok(LeaseMode::Claim { duration_ms: 60_000 }));
        headers.insert(LEASE_MS_HEADER, HeaderValue::from_static("soon"));
        assert!(lease_mode(&headers, 5000).is_err());
        headers.insert(LEASE_TOKEN_HEADER, HeaderValue::from_static("gaos_lease_x"));
        assert_eq!(lease_mode(&headers, 5000), Ok(LeaseMode::Adopt { lease_token: "gaos_lease_x".into() }));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer  tok "));
        assert_eq!(bearer(&headers), Some("tok"));
    }
}
