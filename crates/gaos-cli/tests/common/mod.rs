//! Shared helpers for the end-to-end tests that drive a real `gaos serve`
//! process over HTTP: a tiny blocking HTTP/1.1 client on `std::net`, an SSE
//! reader, session and submission builders, and replay verification through
//! `gaos replay verify`.
//!
//! Every request opens a fresh connection with `Connection: close`, so a
//! killed server shows up as an I/O error on exactly the request in flight.

#![allow(dead_code)] // each test binary uses a different subset

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

// ----- HTTP ------------------------------------------------------------------

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

fn request_head(base: &str, method: &str, path: &str, headers: &[(&str, &str)], body_len: Option<usize>) -> String {
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

fn connect(base: &str) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(host_port(base))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// Split a raw response into status, headers and the (de-chunked) body.
/// Lenient: a truncated chunked body yields the complete chunks.
fn parse_response(raw: &[u8]) -> io::Result<Response> {
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
}

// ----- SSE ---------------------------------------------------------------------

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// A `text/event-stream` read on a background thread until [`SseReader::stop`].
pub struct SseReader {
    stop: Arc<AtomicBool>,
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
        let raw = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (stop, raw) = (Arc::clone(&stop), Arc::clone(&raw));
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
            })
        };
        SseReader { stop, raw, thread: Some(thread) }
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

// ----- sessions ----------------------------------------------------------------

/// A created session and its credentials.
#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub seat_tokens: BTreeMap<String, String>,
    pub spectator: String,
    /// The create answer (the creator seat's envelope).
    pub created: Value,
}

impl Session {
    pub fn token(&self, seat: &str) -> &str {
        self.seat_tokens.get(seat).unwrap_or_else(|| panic!("no token for seat {seat}"))
    }

    pub fn path(&self, route: &str) -> String {
        format!("/v1/sessions/{}/{route}", self.id)
    }
}

/// A policy that asks for chained attach receipts and the replay in the result.
pub fn receipts_policy() -> Value {
    json!({
        "evaluation": {"kind": "none"},
        "durability": {"attachable": true},
        "evidence": {"kind": "verification", "attachReceipts": true},
        "publication": {"kind": "none"}
    })
}

/// `POST /v1/sessions` as the operator; asserts 201 and a well-formed answer.
pub fn create_session(base: &str, operator: &str, body: &Value) -> Session {
    let response = post(base, "/v1/sessions", Some(operator), body);
    assert_eq!(response.status, 201, "create answers 201: {}", response.text());
    let created = response.json();
    assert_eq!(created["kind"], json!("tick"), "create answers a resolved envelope: {created}");
    assert_eq!(created["revision"], json!(0));
    let id = created["sessionId"].as_str().expect("sessionId").to_owned();
    let credentials = &created["extensions"]["gaos.host.credentials"];
    let seat_tokens: BTreeMap<String, String> = credentials["seats"]
        .as_object()
        .expect("seat tokens")
        .iter()
        .map(|(seat, token)| (seat.clone(), token.as_str().expect("token").to_owned()))
        .collect();
    let spectator = credentials["spectator"].as_str().expect("spectator token").to_owned();
    let all: Vec<&String> = seat_tokens.values().chain([&spectator]).collect();
    for (i, token) in all.iter().enumerate() {
        assert!(!all[..i].contains(token), "every credential is distinct");
    }
    Session { id, seat_tokens, spectator, created }
}

/// A `CommandSubmission` addressed at the cursor of `envelope`.
pub fn submission(envelope: &Value, seat: &str, submission_id: &str, command: Value) -> Value {
    json!({
        "protocol": "gaos.ticks",
        "protocolVersion": "1.0",
        "sessionId": envelope["sessionId"],
        "tickId": envelope["tickId"],
        "revision": envelope["revision"],
        "participantId": seat,
        "submissionId": submission_id,
        "command": command,
    })
}

/// `GET /tick` for a seat (or the spectator); asserts 200.
pub fn tick(base: &str, session: &Session, token: &str) -> Value {
    let response = get(base, &session.path("tick"), Some(token));
    assert_eq!(response.status, 200, "GET /tick answers 200: {}", response.text());
    let envelope = response.json();
    assert_eq!(envelope["sessionId"], json!(session.id));
    envelope
}

/// `POST /actions` with `seat`'s token.
pub fn act(base: &str, session: &Session, seat: &str, body: &Value) -> Response {
    post(base, &session.path("actions"), Some(session.token(seat)), body)
}

/// The operator's transcript: header line, then one JSON event per line.
pub fn transcript(base: &str, operator: &str, session: &Session) -> (Value, Vec<Value>) {
    let response = get(base, &session.path("transcript"), Some(operator));
    assert_eq!(response.status, 200, "transcript: {}", response.text());
    let text = response.text();
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a header line")).expect("header JSON");
    let events = lines.map(|l| serde_json::from_str(l).expect("event JSON")).collect();
    (header, events)
}

/// `(participantId, submissionId)` of every intent-accepted event.
pub fn accepted_identities(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|e| e["kind"] == json!("intent-accepted"))
        .map(|e| {
            (
                e["participantId"].as_str().expect("participantId").to_owned(),
                e["submissionId"].as_str().expect("submissionId").to_owned(),
            )
        })
        .collect()
}

/// Play one simultaneous window: every seat observes, then submits its
/// command. Checks 202 pending for all but the last seat, then 200 at the
/// next revision, and that an exact retry of the first seat's submission
/// returns its original answer byte for byte. Returns the last answer.
pub fn play_simultaneous_window(base: &str, session: &Session, moves: &[(&str, Value)], tag: &str) -> Value {
    let before = tick(base, session, session.token(moves[0].0));
    let revision = before["revision"].as_u64().expect("revision");
    let mut first: Option<(Value, Response)> = None;
    let mut last = Value::Null;
    for (i, (seat, command)) in moves.iter().enumerate() {
        let envelope = tick(base, session, session.token(seat));
        assert_eq!(envelope["revision"].as_u64(), Some(revision), "no seat moves the cursor alone");
        let body = submission(&envelope, seat, &format!("{seat}:{tag}"), command.clone());
        let response = act(base, session, seat, &body);
        let answer = response.json();
        if i + 1 < moves.len() {
            assert_eq!(response.status, 202, "a partial window answers 202 pending: {answer}");
            assert_eq!(answer["kind"], json!("pending"));
            assert_eq!(answer["acceptedParticipantId"], json!(seat));
            assert_eq!(answer["revision"].as_u64(), Some(revision));
            let awaiting: Vec<&str> = moves[i + 1..].iter().map(|(s, _)| *s).collect();
            let mut expected = awaiting.clone();
            expected.sort_unstable();
            let mut got: Vec<&str> =
                answer["awaitingParticipants"].as_array().expect("awaiting").iter().filter_map(Value::as_str).collect();
            got.sort_unstable();
            assert_eq!(got, expected, "awaitingParticipants: {answer}");
        } else {
            assert_eq!(response.status, 200, "the completing submission answers 200 resolved: {answer}");
            assert_eq!(answer["kind"], json!("tick"));
            assert_eq!(answer["revision"].as_u64(), Some(revision + 1), "the window resolved: {answer}");
            assert_eq!(answer["tick"]["seat"].as_str().unwrap_or(seat), *seat);
            last = answer;
        }
        if first.is_none() {
            first = Some((body, response));
        }
    }
    let (body, original) = first.expect("at least one move");
    let seat = moves[0].0;
    let retry = act(base, session, seat, &body);
    assert_eq!(retry.status, original.status, "an exact retry keeps its status");
    assert_eq!(retry.body, original.body, "an exact retry returns the first answer byte for byte");
    last
}

// ----- attach receipts -----------------------------------------------------------

/// Recompute `receiptDigest`: SHA-256 of the canonical JSON of every other field.
pub fn check_receipt_digest(receipt: &Value) {
    let mut body = receipt.as_object().expect("a receipt object").clone();
    let digest = body.remove("receiptDigest").expect("receiptDigest");
    let canonical = gaos_json::canonical_json(&gaos_json::parse(&Value::Object(body).to_string()).expect("JSON"));
    assert_eq!(digest, json!(gaos_json::sha256_hex(canonical.as_bytes())), "receiptDigest verifies: {receipt}");
}

/// `POST /attach` for `seat` with `request_id`; asserts 200, a binding at the
/// current head and a receipt with the expected sequence and link; checks the
/// digest, that an exact retry returns identical bytes, and that attaching
/// changed nothing in the transcript. Returns the receipt.
pub fn attach_with_receipt(
    base: &str,
    operator: &str,
    session: &Session,
    seat: &str,
    request_id: &str,
    sequence: u64,
    previous: Option<&str>,
) -> Value {
    let head = tick(base, session, session.token(seat));
    let (_, events_before) = transcript(base, operator, session);
    let request = json!({"requestId": request_id, "participantId": seat});
    let response = post(base, &session.path("attach"), Some(session.token(seat)), &request);
    assert_eq!(response.status, 200, "attach: {}", response.text());
    let answer = response.json();
    assert_eq!(answer["sessionId"], json!(session.id));
    assert!(answer.get("tick").is_some_and(|t| !t.is_null()), "attach carries the tick: {answer}");
    let binding = &answer["binding"];
    assert_eq!(binding["participantId"], json!(seat));
    assert_eq!(binding["revision"], head["revision"], "attach binds to the durable head");
    assert_eq!(binding["tickId"], head["tickId"]);
    let receipt = answer["receipt"].clone();
    assert_eq!(receipt["schema"], json!("gaos.session-attach-receipt.v1"));
    assert_eq!(receipt["sessionId"], json!(session.id));
    assert_eq!(receipt["requestId"], json!(request_id));
    assert_eq!(receipt["sequence"].as_u64(), Some(sequence), "receipt sequence: {receipt}");
    assert_eq!(receipt["revision"], binding["revision"], "receipt revision equals the binding's");
    assert_eq!(receipt.get("previousReceiptDigest").and_then(Value::as_str), previous, "receipt link: {receipt}");
    for field in ["transcriptDigest", "stateDigest"] {
        assert!(receipt[field].as_str().is_some_and(|s| s.len() == 64), "{field}: {receipt}");
    }
    check_receipt_digest(&receipt);
    let ext = &answer["extensions"]["gaos.session.attach"];
    assert_eq!(ext["receiptDigest"], receipt["receiptDigest"]);
    assert_eq!(ext["sequence"].as_u64(), Some(sequence));
    let retry = post(base, &session.path("attach"), Some(session.token(seat)), &request);
    assert_eq!(retry.status, 200);
    assert_eq!(retry.body, response.body, "an attach retry at the same revision returns the identical receipt");
    let (_, events_after) = transcript(base, operator, session);
    assert_eq!(events_after, events_before, "attach never changes the transcript");
    receipt
}

// ----- finalize and replays --------------------------------------------------------

/// `gaos replay verify --json FILE` on `replay`; asserts exit 0 and the
/// `accepted-unsigned` verdict with no problems.
pub fn verify_replay(binary: &str, dir: &Path, name: &str, replay: &str) {
    let file = dir.join(format!("{name}.gaos-replay.jsonl"));
    std::fs::write(&file, replay).unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    let output = Command::new(binary)
        .args(["replay", "verify", "--json"])
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {binary} replay verify: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(stdout.lines().next().unwrap_or("")).unwrap_or_else(|e| {
        panic!("replay verify printed no JSON ({e}): {stdout} {}", String::from_utf8_lossy(&output.stderr))
    });
    assert_eq!(report["verdict"], json!("accepted-unsigned"), "{name}: the replay verifies: {report}");
    assert_eq!(report["problems"], json!([]), "{name}: {report}");
    assert!(output.status.success(), "{name}: replay verify exits 0: {report}");
}

/// Finalize with `seat`'s token, check the result and its immutable retry,
/// download the replay (its digest matches the result's artifact) and verify
/// it with the real binary. Returns the result.
pub fn finalize_and_verify(binary: &str, base: &str, dir: &Path, session: &Session, seat: &str, name: &str) -> Value {
    let token = session.token(seat);
    let request = json!({"requestId": format!("finalize:{}", session.id), "metadata": {"by": seat}});
    let response = post(base, &session.path("finalize"), Some(token), &request);
    assert_eq!(response.status, 200, "finalize: {}", response.text());
    let result = response.json();
    assert_eq!(result["sessionId"], json!(session.id));
    assert_eq!(result["status"], json!("finalized"));
    assert!(result["outcome"].is_object(), "finalize carries an outcome: {result}");
    let retry = post(base, &session.path("finalize"), Some(token), &request);
    assert_eq!(retry.status, 200);
    assert_eq!(retry.body, response.body, "a finalize retry returns the identical result");
    let other = json!({"requestId": "another-request"});
    assert_error(&post(base, &session.path("finalize"), Some(token), &other), 409, "finalize_conflict");

    let observed = tick(base, session, token);
    let finalization = &observed["extensions"]["gaos.session.finalization"];
    assert_eq!(finalization["status"], json!("finalized"));
    assert_eq!(finalization["resultDigest"], json!(gaos_json::sha256_hex(&response.body)));

    let replay = get(base, &session.path("replay"), Some(token));
    assert_eq!(replay.status, 200, "replay download: {}", replay.text());
    let artifact = result["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["kind"] == json!("replay")))
        .unwrap_or_else(|| panic!("the result lists the replay artifact: {result}"));
    assert_eq!(artifact["digest"], json!(gaos_json::sha256_hex(&replay.body)), "artifact digest");
    if let Some(inline) = result.get("replay").and_then(Value::as_str) {
        assert_eq!(inline.as_bytes(), &replay.body[..], "the inline replay equals the download");
    }
    verify_replay(binary, dir, name, &replay.text());
    result
}

/// Poll until `done()` holds, panicking after `limit`.
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

// ----- games -----------------------------------------------------------------------

/// hilo's deal (GAMES.md): an LCG from `seed`, `hand_size` cards to alice,
/// then to bob, each `1 + next() mod max_card`.
pub fn hilo_deal(seed: u32, hand_size: usize, max_card: u32) -> (Vec<u64>, Vec<u64>) {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        s
    };
    let alice: Vec<u64> = (0..hand_size).map(|_| u64::from(1 + next() % max_card)).collect();
    let bob: Vec<u64> = (0..hand_size).map(|_| u64::from(1 + next() % max_card)).collect();
    (alice, bob)
}

/// A small deterministic PRNG (xorshift64*) for schedules; print the seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn from_time() -> (Rng, u64) {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        let seed = std::env::var("GAOS_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(seed);
        (Rng::new(seed), seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo).max(1)
    }
}
