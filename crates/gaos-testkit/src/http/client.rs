//! A tiny blocking HTTP/1.1 client on `std::net` for tests that drive a real
//! `gaos serve` process. Every request opens a fresh connection with
//! `Connection: close`, so a killed server shows up as an I/O error on exactly
//! the request in flight (the crash tests rely on that).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A complete HTTP response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON (panics with the status and body when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("status {} body is not JSON ({e}): {}", self.status, self.text()))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// `code` of an error body.
    pub fn code(&self) -> Option<String> {
        serde_json::from_slice::<Value>(&self.body).ok()?.get("code")?.as_str().map(str::to_owned)
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

fn host_port(base: &str) -> &str {
    base.strip_prefix("http://").unwrap_or(base).trim_end_matches('/')
}

pub(crate) fn request_head(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body_len: Option<usize>,
) -> String {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", host_port(base));
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(len) = body_len {
        head.push_str(&format!("Content-Length: {len}\r\n"));
    }
    head.push_str("\r\n");
    head
}

pub(crate) fn connect(base: &str) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(host_port(base))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// Split a raw response into status, headers and the (de-chunked) body.
/// Lenient: a truncated chunked body yields the complete chunks.
pub(crate) fn parse_response(raw: &[u8]) -> io::Result<Response> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| bad("no complete response head"))?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| bad("response head is not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or_else(|| bad("no status line"))?;
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| bad("malformed status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = &raw[end + 4..];
    let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else if let Some(len) = headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()) {
        rest[..rest.len().min(len)].to_vec()
    } else {
        rest.to_vec()
    };
    Ok(Response { status, headers, body })
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = data.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let Ok(size) = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16) else { break };
        if size == 0 {
            break;
        }
        let start = line_end + 2;
        if data.len() < start + size {
            break;
        }
        out.extend_from_slice(&data[start..start + size]);
        data = &data[(start + size + 2).min(data.len())..];
    }
    out
}

/// Send one request with arbitrary headers and body. I/O errors (a killed
/// server) are returned, never retried.
pub fn send(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> io::Result<Response> {
    let mut stream = connect(base)?;
    let head = request_head(base, method, path, headers, body.map(<[u8]>::len));
    let mut out = head.into_bytes();
    if let Some(body) = body {
        out.extend_from_slice(body);
    }
    // The host may answer (413) and close before it read everything; still
    // read whatever answer arrived.
    let write_result = stream.write_all(&out).and_then(|()| stream.flush());
    let mut raw = Vec::new();
    let read_result = stream.read_to_end(&mut raw);
    match (parse_response(&raw), write_result, read_result) {
        (Ok(response), _, _) => Ok(response),
        (Err(_), Err(e), _) | (Err(_), Ok(()), Err(e)) => Err(e),
        (Err(e), Ok(()), Ok(_)) => Err(e),
    }
}

/// Send `bytes` as they are (a whole request, head and body, of the
/// caller's making: a `Host` of its choosing, a malformed head) and read the
/// answer.
pub fn send_raw(base: &str, bytes: &[u8]) -> io::Result<Response> {
    let mut stream = connect(base)?;
    stream.write_all(bytes)?;
    stream.flush()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse_response(&raw)
}

fn auth_headers(token: Option<&str>) -> Vec<(&'static str, String)> {
    let mut headers = vec![("Accept", "application/json".to_owned())];
    if let Some(token) = token {
        headers.push(("Authorization", format!("Bearer {token}")));
    }
    headers
}

fn send_auth(base: &str, method: &str, path: &str, token: Option<&str>, body: Option<&[u8]>) -> io::Result<Response> {
    let mut headers = auth_headers(token);
    if body.is_some() {
        headers.push(("Content-Type", "application/json".to_owned()));
    }
    let borrowed: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    send(base, method, path, &borrowed, body)
}

/// `GET path`, panicking on I/O errors.
pub fn get(base: &str, path: &str, token: Option<&str>) -> Response {
    send_auth(base, "GET", path, token, None).unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// `POST path` with a JSON body, panicking on I/O errors.
pub fn post(base: &str, path: &str, token: Option<&str>, body: &Value) -> Response {
    post_bytes(base, path, token, body.to_string().as_bytes())
}

/// `POST path` with raw body bytes, panicking on I/O errors.
pub fn post_bytes(base: &str, path: &str, token: Option<&str>, body: &[u8]) -> Response {
    send_auth(base, "POST", path, token, Some(body)).unwrap_or_else(|e| panic!("POST {path}: {e}"))
}

/// `POST path` with raw body bytes, returning I/O errors (crash tests).
pub fn try_post_bytes(base: &str, path: &str, token: Option<&str>, body: &[u8]) -> io::Result<Response> {
    send_auth(base, "POST", path, token, Some(body))
}

/// `GET path`, returning I/O errors (crash tests).
pub fn try_get(base: &str, path: &str, token: Option<&str>) -> io::Result<Response> {
    send_auth(base, "GET", path, token, None)
}

/// Assert an error answer: status, `code`, and the `{"error", "code"}` shape.
#[track_caller]
pub fn assert_error(response: &Response, status: u16, code: &str) {
    assert_eq!(response.status, status, "expected {status} {code}, got: {}", response.text());
    let body = response.json();
    assert_eq!(body["code"], json!(code), "expected code {code}: {body}");
    assert!(body["error"].as_str().is_some_and(|m| !m.is_empty()), "error bodies carry a message: {body}");
    crate::words::assert_users_words(&format!("a {status} {code} answer"), body["error"].as_str().unwrap_or_default());
}

/// Poll until `done()` holds, panicking after `limit`.
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
