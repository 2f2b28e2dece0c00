//! Strict queries: every route's query is checked against its documented
//! parameters before anything happens, and a mismatch is
//! `400 {"error","code":"invalid_request"}` with no side effect (issue 15,
//! item 5). Bodies are the typed requests' (`crate::requests`).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::{Ready, ready};
use std::task::{Context, Poll};

use axum::extract::{MatchedPath, Request};
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use tower::{Layer, Service};

use crate::error::HostError;

/// The routes that read a query (each checks its own parameters).
const ROUTES_WITH_QUERY: [&str; 3] = ["/v1/sessions", "/v1/sessions/{id}/snapshot", "/v1/sessions/{id}/stream"];

/// Whether `request` carries a query its route does not take.
fn has_stray_query(request: &Request) -> bool {
    let has_query = request.uri().query().is_some_and(|q| !q.is_empty());
    let route = request.extensions().get::<MatchedPath>().map(MatchedPath::as_str);
    has_query && route.is_some_and(|r| !ROUTES_WITH_QUERY.contains(&r))
}

/// Route layer: a query on a route that takes none is refused, not ignored.
/// A plain service rather than `from_fn`: it runs on every request, and
/// `from_fn` boxes a clone of the route and a future each time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoStrayQuery;

impl<S> Layer<S> for NoStrayQuery {
    type Service = NoStrayQueryService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        NoStrayQueryService { inner }
    }
}

/// [`NoStrayQuery`] around one route.
#[derive(Debug, Clone)]
pub(crate) struct NoStrayQueryService<S> {
    inner: S,
}

impl<S> Service<Request> for NoStrayQueryService<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if has_stray_query(&request) {
            let refused = HostError::invalid_request("this route takes no query parameters").into_response();
            return Either::Left(ready(Ok(refused)));
        }
        Either::Right(self.inner.call(request))
    }
}

/// The query parameters of a route: each at most once, all in `allowed`.
pub(crate) fn query(raw: Option<&str>, allowed: &[&str]) -> Result<BTreeMap<String, String>, HostError> {
    let mut params = BTreeMap::new();
    for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (key, value) = (percent_decode(key)?, percent_decode(value)?);
        if !allowed.contains(&key.as_str()) {
            let known = if allowed.is_empty() { "none".to_owned() } else { allowed.join(", ") };
            return Err(HostError::invalid_request(format!("unknown query parameter {key:?} (known: {known})")));
        }
        if params.insert(key.clone(), value).is_some() {
            return Err(HostError::invalid_request(format!("query parameter {key:?} is given more than once")));
        }
    }
    Ok(params)
}

/// `application/x-www-form-urlencoded` decoding (`+` is a space), UTF-8 only.
fn percent_decode(text: &str) -> Result<String, HostError> {
    let bad = || HostError::invalid_request("the query is not valid percent-encoded UTF-8");
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = text.get(i + 1..i + 3).ok_or_else(bad)?;
                out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_known_single_and_utf8() {
        let q = query(Some("after=3"), &["after"]).expect("ok");
        assert_eq!(q.get("after").map(String::as_str), Some("3"));
        assert!(query(Some("after=1&after=2"), &["after"]).is_err(), "duplicate");
        assert!(query(Some("bogus=1"), &["after"]).is_err(), "unknown");
        assert!(query(Some("after=%FF"), &["after"]).is_err(), "not UTF-8");
        assert!(query(Some("after=%4"), &["after"]).is_err(), "truncated escape");
        assert_eq!(query(Some("status=a%20b+c"), &["status"]).expect("ok")["status"], "a b c");
        assert!(query(None, &[]).expect("empty").is_empty());
    }
}
