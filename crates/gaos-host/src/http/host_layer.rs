//! The one layer in front of the host's routes (one layer, and a plain
//! tower service, keeps a request's path through axum short). In order:
//!
//! 1. a cluster's session routes go to their owner (`route_sessions.rs`);
//!    a request forwarded elsewhere is counted and answered there;
//! 2. a request served here is counted (`/metrics`);
//! 3. an error answered here without a JSON body gets one (`json_errors.rs`);
//! 4. every answer names the node that served it.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::response::Response;
use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Either, Then};
use tower::{Layer, Service, ServiceExt};

use super::json_errors::{Answered, Rewritten, as_json, rewrite};
use super::route_sessions::{named, node_header, route, session_of};
use crate::host::Host;

/// The layer. A plain service rather than `from_fn`, which boxes a clone of
/// the route and a future on every request: a request served here costs no
/// allocation of its own; only a cluster's routed request is boxed.
#[derive(Clone)]
pub(crate) struct HostLayer {
    host: Host,
}

impl HostLayer {
    pub(crate) fn new(host: &Host) -> HostLayer {
        HostLayer { host: host.clone() }
    }
}

impl<S> Layer<S> for HostLayer {
    type Service = HostService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HostService { node: node_header(self.host.node_id()), host: self.host.clone(), inner }
    }
}

/// [`HostLayer`] around one route.
#[derive(Clone)]
pub(crate) struct HostService<S> {
    host: Host,
    /// This node's `Gaos-Node` value, made once.
    node: Option<HeaderValue>,
    inner: S,
}

type ServedHere<F> = Then<F, Rewritten, fn(Answered) -> Rewritten>;

impl<S> Service<Request> for HostService<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<BoxFuture<'static, Answered>, Named<ServedHere<S::Future>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // Only a cluster reads the session out of the path (a percent-decoded
        // copy); a single host serves straight away.
        if let Some(id) = self.host.cluster().and_then(|_| session_of(request.uri().path())) {
            let (host, inner, node) = (self.host.clone(), self.inner.clone(), self.node.clone());
            return Either::Left(Box::pin(async move {
                let response = route(&host, &id, request, |request| serve_here(&host, inner.clone(), request)).await;
                Ok(named(response, node.as_ref()))
            }));
        }
        self.host.metrics().http_requests.fetch_add(1, Ordering::Relaxed);
        let served = self.inner.call(request).then(rewrite as fn(Answered) -> Rewritten);
        Either::Right(Named { served, node: self.node.clone() })
    }
}

/// Serve a routed request on this host: count it, run it, make its error JSON.
async fn serve_here<S>(host: &Host, inner: S, request: Request) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    host.metrics().http_requests.fetch_add(1, Ordering::Relaxed);
    let Ok(response) = inner.oneshot(request).await;
    as_json(response).await
}

pin_project_lite::pin_project! {
    /// A request served here: its answer, named after this node.
    pub(crate) struct Named<F> {
        #[pin]
        served: F,
        node: Option<HeaderValue>,
    }
}

impl<F: Future<Output = Answered>> Future for Named<F> {
    type Output = Answered;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answered> {
        let this = self.project();
        let Ok(response) = ready!(this.served.poll(cx));
        Poll::Ready(Ok(named(response, this.node.as_ref())))
    }
}
