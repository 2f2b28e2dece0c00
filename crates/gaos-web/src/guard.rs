//! What every response of `gaos serve` carries and whom it answers: the
//! layer the binary puts around the whole application (host routes, `/mcp`,
//! the pages).
//!
//! - **`Host` check.** A web page can make a browser send requests to
//!   `127.0.0.1` under a name of its own (DNS rebinding) and read the
//!   answers of routes that need no token (`/bench/`, `/metrics`). A host
//!   bound to a loopback address answers only loopback names (`localhost`,
//!   `*.localhost`, `127.x.y.z`, `[::1]`) and the names given with
//!   `--allowed-host`; another `Host` is `403 forbidden_host`. A host bound
//!   elsewhere answers any name unless `--allowed-host` names some (then
//!   those, IP literals and loopback names only).
//! - **Headers.** Every response says `X-Content-Type-Options: nosniff`
//!   (a browser never guesses a type: a replay or a JSON error is never
//!   read as HTML) and `X-Frame-Options: DENY` (no page of the host is shown
//!   in another site's frame; the pages' CSP says `frame-ancestors 'none'`).

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use futures_util::FutureExt;
use futures_util::future::{Either, Map};
use tower::{Layer, Service};

use crate::frames_route::error;

/// Which `Host` header values a host answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCheck {
    /// Names beside the loopback ones (lowercase, no port).
    allowed: Vec<String>,
    /// Answer any name (a host bound off loopback, no `--allowed-host`).
    any: bool,
}

impl HostCheck {
    /// The check for a host listening on `address`, with the names of
    /// `--allowed-host` (a name, optionally with a port, which is ignored).
    pub fn for_bind(address: SocketAddr, allowed: &[String]) -> HostCheck {
        let allowed: Vec<String> = allowed.iter().map(|name| host_name(name).to_ascii_lowercase()).collect();
        HostCheck { any: !address.ip().is_loopback() && allowed.is_empty(), allowed }
    }

    /// Whether a request with this `Host` header is answered.
    pub fn allows(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let name = host_name(host).to_ascii_lowercase();
        if self.allowed.contains(&name) || name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        let literal = name.trim_start_matches('[').trim_end_matches(']');
        match literal.parse::<IpAddr>() {
            Ok(ip) if ip.is_loopback() => true,
            // Off loopback, an IP literal cannot be a rebinding name.
            Ok(_) => !self.allowed.is_empty(),
            Err(_) => false,
        }
    }
}

/// The name part of a `Host` value (`[::1]:8899` → `[::1]`, `a.b:80` → `a.b`).
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// Why the guard refuses `request`: the `Host` it names, when it is not
/// answered (copied only then, for the message).
fn refused_host(check: &HostCheck, request: &Request) -> Option<String> {
    request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|host| !check.allows(host))
        .map(str::to_owned)
}

fn with_safety_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

type Answered = Result<Response, Infallible>;

fn answered_with_safety_headers(answered: Answered) -> Answered {
    answered.map(with_safety_headers)
}

/// The guard as a layer. A plain service rather than `from_fn`: it runs on
/// every request of the binary, and `from_fn` boxes a clone of the whole
/// application and a future each time.
#[derive(Debug, Clone)]
struct Guard {
    check: Arc<HostCheck>,
}

impl<S> Layer<S> for Guard {
    type Service = GuardService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GuardService { check: Arc::clone(&self.check), inner }
    }
}

#[derive(Debug, Clone)]
struct GuardService<S> {
    check: Arc<HostCheck>,
    inner: S,
}

impl<S> Service<Request> for GuardService<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Answered>, Map<S::Future, fn(Answered) -> Answered>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if let Some(host) = refused_host(&self.check, &request) {
            let refusal = error(
                StatusCode::FORBIDDEN,
                "forbidden_host",
                &format!(
                    "this host does not answer to the name {host:?} (a page elsewhere may be pointing its name at this machine); start gaos serve with --allowed-host NAME to serve another name"
                ),
            );
            return Either::Left(ready(Ok(with_safety_headers(refusal))));
        }
        Either::Right(self.inner.call(request).map(answered_with_safety_headers as fn(Answered) -> Answered))
    }
}

/// `app` behind the `Host` check, every response with the headers above.
pub fn guarded(app: Router, check: HostCheck) -> Router {
    app.layer(Guard { check: Arc::new(check) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(address: &str, allowed: &[&str]) -> HostCheck {
        let allowed: Vec<String> = allowed.iter().map(|a| (*a).to_owned()).collect();
        HostCheck::for_bind(address.parse().unwrap(), &allowed)
    }

    #[test]
    fn a_loopback_host_answers_loopback_names_and_the_allowed_ones_only() {
        let check = bound("127.0.0.1:8899", &[]);
        for host in ["127.0.0.1:8899", "localhost:8899", "LOCALHOST", "app.localhost:1", "[::1]:8899", "127.1.2.3"] {
            assert!(check.allows(host), "{host}");
        }
        for host in ["evil.example:8899", "evil.example", "192.168.1.5:8899", "localhost.evil.example", ""] {
            assert!(!check.allows(host), "{host}");
        }
        let widened = bound("127.0.0.1:8899", &["games.lan:8899"]);
        assert!(widened.allows("games.lan") && widened.allows("GAMES.lan:1234"));
        assert!(!widened.allows("evil.example"));
    }

    #[test]
    fn a_host_bound_elsewhere_answers_any_name_unless_told_otherwise() {
        assert!(bound("0.0.0.0:8899", &[]).allows("whatever.example"));
        let named = bound("0.0.0.0:8899", &["games.example"]);
        assert!(named.allows("games.example:8899") && named.allows("10.0.0.7:8899") && named.allows("localhost"));
        assert!(!named.allows("evil.example"));
    }

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(host_name("[::1]:8899"), "[::1]");
        assert_eq!(host_name("a.b:80"), "a.b");
        assert_eq!(host_name("a.b"), "a.b");
    }
}
