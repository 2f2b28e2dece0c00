//! The accept loop: bounded connections, so no flood of clients (idle,
//! slow-header or slow-body) can exhaust the host's file descriptors or
//! hold its connections forever.
//!
//! * A connection cap, a semaphore acquired *before* `accept`: when it is
//!   full the host stops accepting and new clients wait in the kernel's
//!   backlog (backpressure), so `accept` never fails with `EMFILE` and the
//!   connections already open keep being served.
//! * A request-head timeout (from accept, and from the first byte of each
//!   later head), a body timeout
//!   (a deadline on reading each request body) and an idle keep-alive
//!   timeout (no request in flight for that long closes the connection).
//! * Long-lived streams (the SSE `/v1/sessions/{id}/stream` and `GET /mcp`)
//!   count toward the connection cap, are never idle while they stream, and
//!   have their own cap: when it is full they answer
//!   `503 {"error","code":"too_many_streams"}`.

use gaos_session::ErrorCode;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{Method, Request, Response};
use axum::response::IntoResponse;
use http_body_util::BodyExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::error::HostError;

/// File descriptors kept back from the connection cap for the database,
/// its WAL, logs and the runtime.
const FD_HEADROOM: usize = 256;
/// The smallest default connection cap, whatever the descriptor limit.
const MIN_DEFAULT_CONNECTIONS: usize = 32;
/// How long to wait after a failed `accept` before trying again (instead
/// of spinning on a persistent error).
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// The bounds on client connections (`gaos serve --max-connections` etc.).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Open client connections at most (streams included).
    pub max_connections: usize,
    /// Open long-lived streams (SSE, MCP) at most.
    pub max_streams: usize,
    /// A request head must arrive completely within this.
    pub header_timeout: Duration,
    /// A request body must arrive completely within this (from when the
    /// head arrived).
    pub body_timeout: Duration,
    /// A keep-alive connection with no request in flight is closed after this.
    pub idle_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        let max_connections = default_max_connections();
        ConnectionLimits {
            max_connections,
            max_streams: default_max_streams(max_connections),
            header_timeout: Duration::from_millis(10_000),
            body_timeout: Duration::from_millis(30_000),
            idle_timeout: Duration::from_millis(60_000),
        }
    }
}

/// The default connection cap: half of what the soft `RLIMIT_NOFILE` leaves
/// after [`FD_HEADROOM`], because every MCP call loops back through the
/// host's own API (one client descriptor plus one accepted connection).
pub fn default_max_connections() -> usize {
    let limit = open_files_soft_limit().unwrap_or(1024);
    (limit.saturating_sub(FD_HEADROOM) / 2).max(MIN_DEFAULT_CONNECTIONS)
}

/// The default stream cap: half the connection cap, so streams can never
/// take every connection.
pub fn default_max_streams(max_connections: usize) -> usize {
    (max_connections / 2).max(1)
}

/// The soft open-files limit, from `/proc/self/limits` (the workspace
/// forbids the `unsafe` a direct `getrlimit` needs).
fn open_files_soft_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Serve `router` on `listener` within `limits` until `shutdown` resolves,
/// then stop accepting, ask every open connection to finish, and wait for them.
pub(crate) async fn serve_bounded(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    let streams = Arc::new(Semaphore::new(limits.max_streams));
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        // The permit comes first: at the cap the host does not accept, and
        // the kernel backlog holds the new clients.
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => permit.map_err(|e| e.to_string())?,
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed; retrying");
                    drop(permit);
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let connection = Connection { router: router.clone(), streams: Arc::clone(&streams), limits };
        tokio::spawn(connection.run(stream, permit, stop_rx.clone()));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Every connection holds a permit until it ends: all of them back means
    // every connection has finished.
    let _all = connections.acquire_many(limits.max_connections as u32).await;
    Ok(())
}

/// One accepted client connection.
struct Connection {
    router: Router,
    streams: Arc<Semaphore>,
    limits: ConnectionLimits,
}

/// What the timers of one connection watch.
struct Activity {
    in_flight: AtomicUsize,
    /// When the head of the next request started to arrive: set at accept
    /// and by the first byte read while no request is in flight, cleared
    /// when a whole head has arrived.
    head_started: std::sync::Mutex<Option<Instant>>,
    /// When the last request finished (or the connection was accepted).
    last_done: std::sync::Mutex<Instant>,
}

/// Where one connection is between requests, for its timers.
#[derive(Debug, PartialEq, Eq)]
enum Waiting {
    /// A request is in flight (or a stream streams): no timer runs.
    Busy,
    /// A request head is arriving, since this long.
    Head(Duration),
    /// Nothing arrives, since this long.
    Idle(Duration),
}

impl Activity {
    fn new() -> Self {
        let now = Instant::now();
        Activity {
            in_flight: AtomicUsize::new(0),
            head_started: std::sync::Mutex::new(Some(now)),
            last_done: std::sync::Mutex::new(now),
        }
    }

    fn bytes_read(&self) {
        if self.in_flight.load(Ordering::SeqCst) == 0
            && let Ok(mut started) = self.head_started.lock()
        {
            started.get_or_insert_with(Instant::now);
        }
    }

    fn request_arrived(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut started) = self.head_started.lock() {
            *started = None;
        }
    }

    fn waiting(&self) -> Waiting {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return Waiting::Busy;
        }
        if let Some(started) = self.head_started.lock().ok().and_then(|s| *s) {
            return Waiting::Head(started.elapsed());
        }
        self.last_done.lock().map(|last| Waiting::Idle(last.elapsed())).unwrap_or(Waiting::Busy)
    }
}

/// A client socket that tells its [`Activity`] when bytes arrive (the
/// request-head timer starts at the first byte of a head), and gives the
/// errors hyper answers by itself a JSON body ([`json_error_head`]).
struct Watched {
    inner: tokio::net::TcpStream,
    activity: Arc<Activity>,
    /// Bytes accepted from hyper and not yet on the socket (a rewritten
    /// error response).
    pending: Vec<u8>,
}

impl Watched {
    /// Write what is pending; `Ready(Ok)` once nothing is.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        use tokio::io::AsyncWrite as _;
        while !self.pending.is_empty() {
            match Pin::new(&mut self.inner).poll_write(cx, &self.pending) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => drop(self.pending.drain(..n)),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// hyper answers a request it cannot parse (a URI over its limit: 414, a
/// head too large: 431, a malformed head: 400) by itself, before the
/// router, with an empty body. Such a response is the only one the host
/// sends without a content type (every answer of the router carries one),
/// so it is recognized by its head and given the host's JSON error body.
fn json_error_head(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let status: u16 = text.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()?;
    let lower = text.to_ascii_lowercase();
    if status < 400 || !lower.ends_with("\r\n\r\n") || !lower.contains("\r\ncontent-length: 0\r\n") {
        return None;
    }
    if lower.contains("\r\ncontent-type:") {
        return None;
    }
    let status = axum::http::StatusCode::from_u16(status).ok()?;
    let message = format!("{} (refused before routing)", status.canonical_reason().unwrap_or("error"));
    let body = crate::error::HostError::new(crate::http::error_code_for(status), message).with_status(status).body();
    let body = gaos_json::canonical_json(&body);
    let at = lower.find("\r\ncontent-length: 0\r\n")?;
    let end = at + "\r\ncontent-length: 0\r\n".len();
    let mut out = text.as_bytes()[..at].to_vec();
    out.extend_from_slice(
        format!(
            "\r\ncontent-type: application/json\r\nx-content-type-options: nosniff\r\nx-frame-options: DENY\r\ncontent-length: {}\r\n",
            body.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(&text.as_bytes()[end..]);
    out.extend_from_slice(body.as_bytes());
    Some(out)
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.bytes_read();
        }
        polled
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        std::task::ready!(self.drain(cx))?;
        if let Some(rewritten) = json_error_head(buf) {
            self.pending = rewritten;
            // Accepted: the bytes go out on this drain or the next flush.
            if let Poll::Ready(Err(e)) = self.drain(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        std::task::ready!(self.drain(cx))?;
        // A lone head is looked at like a plain write (hyper's own errors
        // have no body).
        let mut non_empty = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (non_empty.next(), non_empty.next())
            && json_error_head(only).is_some()
        {
            let only: &[u8] = only;
            return self.poll_write(cx, only);
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Marks one request (or stream) in flight until dropped with its response body.
struct InFlight {
    activity: Arc<Activity>,
    _stream: Option<OwnedSemaphorePermit>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut last) = self.activity.last_done.lock() {
            *last = Instant::now();
        }
        self.activity.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Connection {
    async fn run(self, stream: tokio::net::TcpStream, _permit: OwnedSemaphorePermit, mut stop: watch::Receiver<bool>) {
        let activity = Arc::new(Activity::new());
        let limits = self.limits;
        let service_activity = Arc::clone(&activity);
        let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
            let router = self.router.clone();
            let streams = Arc::clone(&self.streams);
            let activity = Arc::clone(&service_activity);
            async move { Ok::<_, Infallible>(handle(router, streams, activity, limits, request).await) }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        // hyper's own header read timeout also runs while a kept-alive
        // connection waits for its next request, which would make the idle
        // timeout the header timeout; the timers below tell the two apart.
        builder.timer(TokioTimer::new()).header_read_timeout(None).keep_alive(true);
        let io = TokioIo::new(Watched { inner: stream, activity: Arc::clone(&activity), pending: Vec::new() });
        let connection = builder.serve_connection(io, service).with_upgrades();
        tokio::pin!(connection);
        let mut closing = false;
        let check_every = (limits.header_timeout.min(limits.idle_timeout) / 4)
            .clamp(Duration::from_millis(10), Duration::from_secs(1));
        loop {
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                    return;
                }
                changed = stop.changed(), if !closing => {
                    let _ = changed;
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
                () = tokio::time::sleep(check_every) => match activity.waiting() {
                    // A head that does not arrive in time: close at once
                    // (there is no request to answer).
                    Waiting::Head(waited) if waited >= limits.header_timeout => return,
                    Waiting::Idle(waited) if waited >= limits.idle_timeout && !closing => {
                        closing = true;
                        connection.as_mut().graceful_shutdown();
                    }
                    _ => {}
                },
            }
        }
    }
}

/// Whether `request` opens a long-lived stream.
fn is_stream(request: &Request<hyper::body::Incoming>) -> bool {
    let path = request.uri().path();
    request.method() == Method::GET
        && (path == "/mcp" || (path.starts_with("/v1/sessions/") && path.ends_with("/stream")))
}

async fn handle(
    router: Router,
    streams: Arc<Semaphore>,
    activity: Arc<Activity>,
    limits: ConnectionLimits,
    request: Request<hyper::body::Incoming>,
) -> Response<Body> {
    let stream_permit = if is_stream(&request) {
        match streams.try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) => {
                return HostError::new(
                    ErrorCode::TooManyStreams,
                    format!("this host serves at most {} streams at once; retry later", limits.max_streams),
                )
                .into_response();
            }
        }
    } else {
        None
    };
    activity.request_arrived();
    let in_flight = InFlight { activity, _stream: stream_permit };
    let request = request.map(|body| Body::new(TimedBody::new(body, limits.body_timeout)));
    let response = match tower::ServiceExt::oneshot(router, request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    // The request stays in flight (and a stream keeps its permit) until the
    // response body is dropped, so a streaming response is never idle.
    response.map(|body| {
        Body::new(body.map_frame(move |frame| {
            let _ = &in_flight;
            frame
        }))
    })
}

/// A request body that fails once its deadline passes (a slow-body client
/// cannot hold a handler forever).
struct TimedBody {
    inner: hyper::body::Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    timeout: Duration,
}

impl TimedBody {
    fn new(inner: hyper::body::Incoming, timeout: Duration) -> Self {
        TimedBody { inner, deadline: Box::pin(tokio::time::sleep(timeout)), timeout }
    }
}

/// Why a request body read failed after its deadline.
#[derive(Debug)]
struct BodyTimedOut(Duration);

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the request body did not arrive within {} ms", self.0.as_millis())
    }
}

impl std::error::Error for BodyTimedOut {}

impl HttpBody for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(BodyTimedOut(self.timeout)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
