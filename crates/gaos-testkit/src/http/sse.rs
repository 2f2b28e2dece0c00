//! A `text/event-stream` reader on a background thread (the host's SSE routes).

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::client::{connect, parse_response, request_head};

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// A `text/event-stream` read on a background thread until [`SseReader::stop`].
pub struct SseReader {
    stop: Arc<AtomicBool>,
    /// Set when the server closed the stream (or the connection failed).
    closed: Arc<AtomicBool>,
    raw: Arc<Mutex<Vec<u8>>>,
    thread: Option<JoinHandle<()>>,
}

impl SseReader {
    /// Open `GET path` and start collecting bytes.
    pub fn open(base: &str, path: &str, token: &str) -> SseReader {
        let mut stream = connect(base).unwrap_or_else(|e| panic!("stream {path}: {e}"));
        stream.set_read_timeout(Some(Duration::from_millis(50))).expect("set a read timeout");
        let auth = format!("Bearer {token}");
        let head = request_head(base, "GET", path, &[("Accept", "text/event-stream"), ("Authorization", &auth)], None);
        stream.write_all(head.as_bytes()).unwrap_or_else(|e| panic!("stream {path}: {e}"));
        let stop = Arc::new(AtomicBool::new(false));
        let closed = Arc::new(AtomicBool::new(false));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (stop, closed, raw) = (Arc::clone(&stop), Arc::clone(&closed), Arc::clone(&raw));
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while !stop.load(Ordering::Relaxed) {
                    match stream.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => raw.lock().expect("sse buffer").extend_from_slice(&buf[..n]),
                        Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                        Err(_) => break,
                    }
                }
                if !stop.load(Ordering::Relaxed) {
                    closed.store(true, Ordering::Relaxed);
                }
            })
        };
        SseReader { stop, closed, raw, thread: Some(thread) }
    }

    /// True once the server has closed the stream.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Wait until the host has answered the stream's request (its response
    /// head arrived), so the stream is open on the host's side: a test that
    /// counts open streams must not race the host's handling of this one.
    /// Panics after `timeout`.
    pub fn wait_until_open(&self, timeout: Duration) {
        let deadline = std::time::Instant::now() + timeout;
        while !self.raw.lock().expect("sse buffer").windows(4).any(|w| w == b"\r\n\r\n") {
            assert!(std::time::Instant::now() < deadline, "the stream was not answered within {timeout:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Every complete event received so far (the reader keeps going).
    pub fn events(&self) -> Vec<SseEvent> {
        let raw = self.raw.lock().expect("sse buffer").clone();
        parse_response(&raw).map(|r| parse_sse(&String::from_utf8_lossy(&r.body))).unwrap_or_default()
    }

    /// Stop reading; the response status and every complete event so far.
    pub fn stop(mut self) -> (u16, Vec<SseEvent>) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the SSE reader thread does not panic");
        }
        let raw = self.raw.lock().expect("sse buffer").clone();
        let response = parse_response(&raw).unwrap_or_else(|e| panic!("stream response: {e}"));
        (response.status, parse_sse(&String::from_utf8_lossy(&response.body)))
    }
}

impl Drop for SseReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn parse_sse(text: &str) -> Vec<SseEvent> {
    let mut events = Vec::new();
    // Only blocks terminated by a blank line are complete.
    let complete = match text.rfind("\n\n") {
        Some(end) => &text[..end],
        None => return events,
    };
    for block in complete.split("\n\n") {
        let mut event = String::from("message");
        let mut data: Vec<&str> = Vec::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                event = v.trim_start().to_owned();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if !data.is_empty() {
            events.push(SseEvent { event, data: data.join("\n") });
        }
    }
    events
}
