//! Any host answers any session: the routing of a cluster
//! (`crate::cluster`) in front of the session routes, run by the host's
//! layer (`host_layer.rs`). A request for a session another live host owns is forwarded to
//! that host as it came (method, path, query, headers, body) and its answer
//! streamed back as it comes (so SSE streams pass through too); not a
//! redirect, since the Rust client and the web pages do not follow those. A
//! request for a session nobody live owns makes this host claim it.
//! Every answer names the node that served it (`Gaos-Node`).

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use gaos_session::ErrorCode;

use crate::cluster::{HOPS_HEADER, Route};
use crate::error::HostError;
use crate::host::Host;
use crate::http::BODY_LIMIT;

/// The header naming the node that served an answer.
pub const NODE_HEADER: &str = "gaos-node";
/// Most forwards of one request (a move during a forward costs one more).
const MAX_HOPS: u32 = 2;
/// Most routing decisions for one request on this host (a fenced answer
/// makes it route again).
const MAX_ROUTES: usize = 3;

/// Marks a response answered `fenced` by this host's own handler: the
/// session moved meanwhile, and the request is routed again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FencedHere;

/// The session id of a session route (`/v1/sessions/{id}/...`), decoded.
pub(super) fn session_of(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/v1/sessions/")?;
    let (id, _) = rest.split_once('/')?;
    let decoded = percent_decode(id)?;
    (!decoded.is_empty()).then_some(decoded)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn hops(headers: &axum::http::HeaderMap) -> u32 {
    headers.get(HOPS_HEADER).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// This node's name as a `Gaos-Node` value (`None` if it cannot be one).
pub(super) fn node_header(node: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(node).ok()
}

/// `response` naming this node, unless another host already named itself.
pub(super) fn named(mut response: Response, node: Option<&HeaderValue>) -> Response {
    if let Some(value) = node
        && !response.headers().contains_key(NODE_HEADER)
    {
        response.headers_mut().insert(HeaderName::from_static(NODE_HEADER), value.clone());
    }
    response
}

/// Serve a request for session `id` of a cluster: with `serve_here` when
/// this host owns it (or claims it), else forwarded to its owner.
pub(super) async fn route<F, Served>(host: &Host, id: &str, request: Request, serve_here: F) -> Response
where
    F: Fn(Request) -> Served,
    Served: Future<Output = Response>,
{
    let cluster = host.cluster().expect("routing runs in cluster mode");
    let (parts, body) = request.into_parts();
    let body = match to_bytes(body, BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return HostError::new(
                ErrorCode::PayloadTooLarge,
                format!("request bodies are limited to {BODY_LIMIT} bytes"),
            )
            .into_response();
        }
    };
    let hops_so_far = hops(&parts.headers);
    for _ in 0..MAX_ROUTES {
        match cluster.route(host, id).await {
            Err(error) => return error.into_response(),
            Ok(Route::Remote { node_id, url }) => {
                if hops_so_far >= MAX_HOPS {
                    return HostError::unavailable(format!(
                        "session {id} is moving between hosts (last seen at {node_id}); retry"
                    ))
                    .into_response();
                }
                host.metrics().add_proxy_hop();
                return cluster.forward(&url, &parts, body, hops_so_far + 1).await;
            }
            Ok(Route::Local { .. } | Route::Unknown) => {
                let response = serve_here(Request::from_parts(clone_parts(&parts), Body::from(body.clone()))).await;
                if response.extensions().get::<FencedHere>().is_some() {
                    // The session moved under this request; nothing of it
                    // was stored here. Ask the store again.
                    continue;
                }
                return response;
            }
        }
    }
    HostError::unavailable(format!("session {id} is moving between hosts; retry")).into_response()
}

fn clone_parts(parts: &axum::http::request::Parts) -> axum::http::request::Parts {
    let mut request = Request::builder().method(parts.method.clone()).uri(parts.uri.clone()).version(parts.version);
    if let Some(headers) = request.headers_mut() {
        *headers = parts.headers.clone();
    }
    let (mut cloned, ()) = request.body(()).expect("a request built from a request's parts").into_parts();
    cloned.extensions = parts.extensions.clone();
    cloned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_routes_are_recognised_and_decoded() {
        assert_eq!(session_of("/v1/sessions/s-1/tick").as_deref(), Some("s-1"));
        assert_eq!(session_of("/v1/sessions/a%2Fb/actions").as_deref(), Some("a/b"));
        assert_eq!(session_of("/v1/sessions/s-1/seats/a/token").as_deref(), Some("s-1"));
        assert_eq!(session_of("/v1/sessions"), None);
        assert_eq!(session_of("/v1/sessions/s-1"), None);
        assert_eq!(session_of("/v1/games"), None);
        assert_eq!(session_of("/v1/sessions/%ZZ/tick"), None);
    }
}
