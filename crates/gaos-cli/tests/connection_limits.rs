//! Connection floods against the real `gaos serve` binary (issue 15, item 2):
//! with `--max-connections 300 --header-timeout-ms 3000`, an idle flood and
//! a slow-header flood of more clients than the cap neither stop the host
//! from serving a connection already open (within a second) nor hold the
//! slow clients past the header timeout; the stream cap answers 503 JSON.
//! Loopback only; every loop is bounded in count and time.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const CAP: usize = 300;
/// More clients than the cap, within the test process's usual 1024 descriptors.
const FLOOD: usize = 600;
const SERVED_WITHIN: Duration = Duration::from_secs(1);

fn start(extra: &[&str]) -> TestServer {
    let mut args = vec!["--max-connections", "300", "--header-timeout-ms", "3000"];
    args.extend_from_slice(extra);
    TestServer::start_with(GAOS, &args)
}

fn address(server: &TestServer) -> SocketAddr {
    server.base_url().trim_start_matches("http://").parse().expect("the base url is http://ADDR")
}

/// One request on a kept-alive connection; the status and body, read by Content-Length.
fn request(stream: &mut TcpStream, path: &str, token: Option<&str>) -> (u16, Vec<u8>) {
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n").expect("write a request");
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_string();
            let status: u16 = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status line");
            let length: usize = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
                .expect("a Content-Length");
            while buffer.len() < end + 4 + length {
                let n = stream.read(&mut chunk).expect("read the body");
                assert!(n > 0, "the connection closed mid-body");
                buffer.extend_from_slice(&chunk[..n]);
            }
            return (status, buffer[end + 4..end + 4 + length].to_vec());
        }
        let n = stream.read(&mut chunk).expect("read the head");
        assert!(n > 0, "the connection closed before answering");
        buffer.extend_from_slice(&chunk[..n]);
    }
}

fn keep_alive(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(request(&mut stream, "/healthz", None).0, 200);
    stream
}

/// `/healthz` on an already-open connection answers 200 within a second.
fn assert_served(stream: &mut TcpStream, during: &str) {
    let started = Instant::now();
    let (status, _) = request(stream, "/healthz", None);
    let took = started.elapsed();
    assert_eq!(status, 200, "{during}: /healthz status");
    assert!(took < SERVED_WITHIN, "{during}: an open connection waited {took:?}");
}

/// Whether the server has closed `stream` (a read sees EOF or a reset).
fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 256];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => closed_by_server(stream),
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

/// Descriptors the idle-flood server may open: fewer than the flood, so
/// without the cap its `accept` would fail with "Too many open files".
const SERVER_FDS: usize = 450;

/// A `gaos` that runs with at most `fds` open files (a shell wrapper; the
/// workspace forbids the `unsafe` a `setrlimit` in the test would need).
fn gaos_with_fd_limit(dir: &TempDir, fds: usize) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.path().join("gaos-limited");
    std::fs::write(&path, format!("#!/bin/sh\nulimit -n {fds} || exit 3\nexec '{GAOS}' \"$@\"\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn an_idle_flood_does_not_stop_open_connections_being_served() {
    let wrapper_dir = TempDir::new("gaos-fd-limit");
    let server = TestServer::start_with(
        gaos_with_fd_limit(&wrapper_dir, SERVER_FDS),
        &["--max-connections", "300", "--header-timeout-ms", "3000"],
    );
    let addr = address(&server);
    let mut open = keep_alive(addr);
    let flood: Vec<TcpStream> = (0..FLOOD).map(|_| TcpStream::connect(addr).expect("connect a flood client")).collect();
    assert_served(&mut open, "idle flood");
    assert_served(&mut open, "idle flood, again");
    drop(flood);
    // The host still accepts new clients after the flood is gone, and
    // `accept` never failed.
    let mut fresh = keep_alive(addr);
    assert_served(&mut fresh, "after the idle flood");
    let log = server.stderr_tail();
    assert!(
        !log.contains("accept failed") && !log.contains("Too many open files"),
        "accept failed during the flood:\n{log}"
    );
}

#[test]
fn slow_header_clients_are_closed_and_do_not_stop_open_connections() {
    let server = start(&[]);
    let addr = address(&server);
    let mut open = keep_alive(addr);
    let started = Instant::now();
    let mut slow: Vec<TcpStream> = (0..CAP + 100)
        .map(|_| {
            let mut stream = TcpStream::connect(addr).expect("connect a slow client");
            let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\n");
            stream
        })
        .collect();
    // Keep trickling header bytes for two seconds (a header never
    // completes), while the open connection keeps being served.
    for round in 0..4 {
        std::thread::sleep(Duration::from_millis(500));
        for stream in &mut slow {
            let _ = stream.write_all(format!("X-Slow-{round}: 1\r\n").as_bytes());
        }
        assert_served(&mut open, "slow-header flood");
    }
    // Accepted clients are closed 3 s after they were accepted; those the
    // backlog held are accepted as the first ones close, so all are closed
    // within two header timeouts plus a margin.
    let deadline = started + Duration::from_secs(10);
    for stream in &mut slow {
        stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    }
    let mut still_open: Vec<usize> = (0..slow.len()).collect();
    while !still_open.is_empty() && Instant::now() < deadline {
        still_open.retain(|&i| !closed_by_server(&mut slow[i]));
        if !still_open.is_empty() {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    assert!(
        still_open.is_empty(),
        "{} slow-header clients were still open after {:?}",
        still_open.len(),
        started.elapsed()
    );
    assert!(started.elapsed() >= Duration::from_millis(2_500), "slow clients were closed before the header timeout");
    drop(slow);
    let mut fresh = keep_alive(addr);
    assert_served(&mut fresh, "after the slow-header flood");
}

#[test]
fn the_stream_cap_answers_503_json() {
    let server = start(&["--max-streams", "1"]);
    let base = server.base_url().to_owned();
    let session = create_session(&base, server.operator_token(), &json!({"game": "conformance/hilo"}));
    let first = SseReader::open(&base, &session.path("stream"), &session.spectator);
    // The first stream must hold the one permit before the second asks.
    first.wait_until_open(Duration::from_secs(10));
    let mut second = TcpStream::connect(address(&server)).expect("connect");
    second.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let (status, body) =
        request(&mut second, &format!("/{}", session.path("stream").trim_start_matches('/')), Some(&session.spectator));
    assert_eq!(status, 503);
    let body: Value = serde_json::from_slice(&body).expect("a JSON body");
    assert_eq!(body["code"], "too_many_streams");
    assert!(body["error"].is_string());
    // Ordinary requests are not streams: they are still served.
    assert_served(&mut second, "with the stream cap full");
}
