//! The client's HTTP behaviour against a scripted fake host (plain
//! `std::net`, one request per connection): headers, URL encoding, exact
//! resends after transport failures, no resend after HTTP errors, error
//! mapping, body rules, the response cap, timeouts and redirects.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use gaos_client::{ClientError, Cursor, SessionClient, SubmitOptions};
use gaos_json::Value;

/// What the fake host does with one connection.
enum Reply {
    /// Read the request, then close without answering.
    Close,
    /// Read the request, then hold the connection open this long (without
    /// answering) while the next connection is served.
    Hang(Duration),
    /// Read the request, then write this raw HTTP response and close.
    Raw(String),
}

fn respond(status: &str, body: &str) -> Reply {
    Reply::Raw(format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    ))
}

/// One recorded request: the request line, lower-cased headers, body.
#[derive(Debug, Clone)]
struct Recorded {
    line: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

struct FakeHost {
    base: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    thread: Option<JoinHandle<()>>,
}

fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(Recorded { line, headers, body: String::from_utf8_lossy(&body).into_owned() })
}

impl FakeHost {
    /// Serve `script` in order, one connection each, then stop listening.
    fn start(script: Vec<Reply>) -> FakeHost {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let thread = std::thread::spawn(move || {
            for reply in script {
                let Ok((mut stream, _)) = listener.accept() else { return };
                if let Some(request) = read_request(&mut stream) {
                    recorded.lock().expect("lock").push(request);
                }
                match reply {
                    Reply::Close => drop(stream),
                    // Hold the connection elsewhere, so the next one is accepted at once.
                    Reply::Hang(time) => drop(std::thread::spawn(move || {
                        std::thread::sleep(time);
                        drop(stream);
                    })),
                    Reply::Raw(text) => {
                        let _ = stream.write_all(text.as_bytes());
                        let _ = stream.flush();
                    }
                }
            }
        });
        FakeHost { base, requests, thread: Some(thread) }
    }

    /// Wait for the script to end and return what was received.
    fn finish(mut self) -> Vec<Recorded> {
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the fake host thread");
        }
        self.requests.lock().expect("lock").clone()
    }
}

fn builder(host: &FakeHost) -> gaos_client::SessionClientBuilder {
    SessionClient::builder(format!("{}/prefix//", host.base))
        .token("tok")
        .participant_id("a")
        .retry_backoff(Duration::from_millis(1))
}

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

fn envelope(session: &str, revision: u64, kind: &str) -> String {
    let pending = if kind == "pending" { r#","submittedParticipants":["a"],"awaitingParticipants":["b"]"# } else { "" };
    format!(
        r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","kind":"{kind}","sessionId":"{session}","tickId":"{session}:{revision}","revision":{revision},"tick":{{}}{pending}}}"#
    )
}

#[tokio::test]
async fn requests_carry_the_reference_headers_and_encoded_ids() {
    let host = FakeHost::start(vec![respond("200 OK", &envelope("s 1/x", 0, "tick"))]);
    let client = builder(&host).build().expect("client").with_header("Gaos-Lease", "lease-1").expect("header");
    let tick = client.observe("s 1/x").await.expect("observe");
    assert_eq!(tick.status, 200);
    assert_eq!(client.binding("s 1/x").map(|b| b.participant_id), Some("a".to_owned()));
    let requests = host.finish();
    assert_eq!(requests.len(), 1);
    let get = &requests[0];
    assert_eq!(get.line, "GET /prefix/v1/sessions/s%201%2Fx/tick HTTP/1.1");
    assert_eq!(get.header("accept"), Some("application/json"));
    assert_eq!(get.header("authorization"), Some("Bearer tok"));
    assert_eq!(get.header("gaos-lease"), Some("lease-1"));
    assert_eq!(get.header("content-type"), None, "no body, no content-type");
}

#[tokio::test]
async fn acting_without_a_binding_reads_the_cursor_first() {
    let host = FakeHost::start(vec![
        respond("200 OK", &envelope("s-1", 4, "tick")),
        respond("202 Accepted", &envelope("s-1", 4, "pending")),
    ]);
    let client = builder(&host).build().expect("client");
    let answer = client.act("s-1", json(r#"{"n":1}"#)).await.expect("act");
    assert_eq!((answer.status, answer.is_pending()), (202, true));
    let requests = host.finish();
    assert_eq!(requests[0].line, "GET /prefix/v1/sessions/s-1/tick HTTP/1.1");
    assert_eq!(requests[1].line, "POST /prefix/v1/sessions/s-1/actions HTTP/1.1");
    assert_eq!(requests[1].header("content-type"), Some("application/json"));
    assert_eq!(
        requests[1].body,
        r#"{"command":{"n":1},"participantId":"a","protocol":"gaos.ticks","protocolVersion":"1.0","revision":4,"sessionId":"s-1","submissionId":"a:s-1:4:0","tickId":"s-1:4"}"#
    );
}

#[tokio::test]
async fn transport_failures_resend_the_identical_submission() {
    let host =
        FakeHost::start(vec![Reply::Close, Reply::Close, respond("202 Accepted", &envelope("s-1", 0, "pending"))]);
    let client = builder(&host).build().expect("client");
    let cursor = Cursor { tick_id: "s-1:0".into(), revision: 0 };
    let options = SubmitOptions { submission_id: None, cursor: Some(cursor) };
    let answer = client.submit_command("s-1", "a", json(r#"{"n":1}"#), options).await.expect("third try answers");
    assert_eq!(answer.status, 202);
    let requests = host.finish();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.body == requests[0].body), "every resend is byte-identical");
    assert!(requests[0].body.contains(r#""submissionId":"a:s-1:0:0""#));
}

#[tokio::test]
async fn resends_stop_at_the_limit_and_creates_are_never_resent() {
    let host = FakeHost::start(vec![Reply::Close, Reply::Close]);
    let client = builder(&host).retries(1).build().expect("client");
    let err = client.observe("s-1").await.expect_err("both tries fail");
    assert!(matches!(err, ClientError::Transport { .. }), "{err:?}");
    assert!(err.to_string().contains("/prefix/v1/sessions/s-1/tick"), "{err}");
    assert_eq!(host.finish().len(), 2);

    let host = FakeHost::start(vec![Reply::Close]);
    let client = builder(&host).build().expect("client");
    let err = client.create_session(&json(r#"{"game":"g"}"#)).await.expect_err("no answer");
    assert!(err.is_transport_failure());
    assert_eq!(host.finish().len(), 1, "a create is never resent: it could create two sessions");
}

#[tokio::test]
async fn http_errors_are_typed_and_never_resent() {
    let host = FakeHost::start(vec![
        respond("503 Service Unavailable", r#"{"error":"busy","code":"unavailable"}"#),
        respond("422 Unprocessable Entity", r#"{"error":"no such card","code":"illegal_command"}"#),
        Reply::Raw("HTTP/1.1 500 Internal Server Error\r\ncontent-length: 4\r\nconnection: close\r\n\r\noops".into()),
        Reply::Raw("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into()),
        Reply::Raw(
            "HTTP/1.1 302 Found\r\nlocation: /elsewhere\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
        ),
    ]);
    let client = builder(&host).build().expect("client");
    let cursor = Some(Cursor { tick_id: "s-1:0".into(), revision: 0 });
    let act = |options: SubmitOptions| client.submit_command("s-1", "a", json(r#"{"n":1}"#), options);
    let err = act(SubmitOptions { cursor: cursor.clone(), ..Default::default() }).await.expect_err("503");
    assert_eq!(err, ClientError::Api { status: 503, code: Some("unavailable".into()), message: "busy".into() });
    let err = act(SubmitOptions { cursor: cursor.clone(), ..Default::default() }).await.expect_err("422");
    assert_eq!(
        err,
        ClientError::IllegalActionRejected { message: "no such card".into(), code: Some("illegal_command".into()) }
    );
    let err = client.observe("s-1").await.expect_err("500");
    assert_eq!(err, ClientError::Api { status: 500, code: None, message: "oops".into() });
    let err = client.observe("s-1").await.expect_err("404");
    assert_eq!(err, ClientError::Api { status: 404, code: None, message: "Not Found".into() });
    let err = client.observe("s-1").await.expect_err("302");
    assert_eq!(err.status(), Some(302), "redirects are never followed");
    assert_eq!(host.finish().len(), 5, "one request per error: none was resent");
}

#[tokio::test]
async fn every_success_must_be_a_json_envelope_for_the_session() {
    let host = FakeHost::start(vec![
        Reply::Raw("HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n".into()),
        respond("200 OK", ""),
        respond("200 OK", "not json"),
        respond("200 OK", &envelope("s-other", 0, "tick")),
        respond("201 Created", &envelope("s-1", 0, "pending")),
    ]);
    let client = builder(&host).build().expect("client");
    for reason in ["empty", "empty", "not JSON", "not the requested"] {
        match client.observe("s-1").await {
            Err(ClientError::ProtocolMismatch { reason: got, .. }) => assert!(got.contains(reason), "{got:?}"),
            other => panic!("expected a protocol mismatch ({reason}), got {other:?}"),
        }
    }
    let created = client.create_session(&json(r#"{"game":"g"}"#)).await;
    assert!(matches!(created, Err(ClientError::ProtocolMismatch { .. })), "a create answer cannot be pending");
    host.finish();
}

#[tokio::test]
async fn answers_beyond_the_cap_are_refused_while_reading() {
    let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(200));
    let chunk = format!("{:x}\r\n{big}\r\n0\r\n\r\n", big.len());
    let host = FakeHost::start(vec![
        respond("200 OK", &big),
        Reply::Raw(format!("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{chunk}")),
    ]);
    let client = builder(&host).max_response_bytes(100).build().expect("client");
    for _ in 0..2 {
        let err = client.observe("s-1").await.expect_err("too large");
        assert!(matches!(err, ClientError::ResponseTooLarge { limit: 100, .. }), "{err:?}");
    }
    host.finish();
}

#[tokio::test]
async fn a_silent_host_times_out_and_is_resent() {
    let host =
        FakeHost::start(vec![Reply::Hang(Duration::from_millis(400)), respond("200 OK", &envelope("s-1", 0, "tick"))]);
    let client = builder(&host).timeout(Duration::from_millis(150)).build().expect("client");
    let tick = client.observe("s-1").await.expect("the resend answers");
    assert_eq!(tick.envelope.revision, 0);
    assert_eq!(host.finish().len(), 2);

    let host = FakeHost::start(vec![Reply::Hang(Duration::from_millis(400))]);
    let client = builder(&host).timeout(Duration::from_millis(100)).retries(0).build().expect("client");
    let err = client.observe("s-1").await.expect_err("timeout");
    assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
    host.finish();
}

#[tokio::test]
async fn bad_arguments_fail_before_anything_is_sent() {
    let invalid = |r: Result<SessionClient, ClientError>| matches!(r, Err(ClientError::InvalidArgument(_)));
    assert!(invalid(SessionClient::new("localhost:1", "t")));
    assert!(invalid(SessionClient::new("http://h", " ")));
    assert!(invalid(SessionClient::new("http://h", "a\nb")));
    assert!(invalid(SessionClient::builder("http://h").timeout(Duration::ZERO).build()));
    assert!(invalid(SessionClient::builder("http://h").max_response_bytes(0).build()));
    assert!(invalid(SessionClient::builder("http://h").participant_id("a b").build()));
    assert!(invalid(SessionClient::builder("http://h").header("Authorization", "x").build()));

    let client = SessionClient::new("http://127.0.0.1:9", "t").expect("client");
    assert!(matches!(client.set_header("bad name", "x"), Err(ClientError::InvalidArgument(_))));
    let options = SubmitOptions { submission_id: Some("id".into()), cursor: None };
    let err = client.submit_command("s-1", "a", Value::Null, options).await.expect_err("no cursor");
    assert!(err.to_string().contains("restore_binding"), "{err}");
    let err = client.submit_command("s-1", "a b", Value::Null, SubmitOptions::default()).await.expect_err("seat");
    assert!(matches!(err, ClientError::InvalidArgument(_)));
    let err = client.request_json(gaos_client::reqwest::Method::GET, "//evil/x", None).await.expect_err("path");
    assert!(matches!(err, ClientError::InvalidArgument(_)));
    let body = Value::Null;
    let err = client.request_json(gaos_client::reqwest::Method::GET, "/x", Some(&body)).await.expect_err("body");
    assert!(matches!(err, ClientError::InvalidArgument(_)));
}

/// Issue 18 item 7: the finalize result reaches the runner as the host
/// answered it, fields this client does not know included, through the
/// client and through the handle (whose cached retry repeats it too).
#[tokio::test]
async fn the_session_result_reaches_the_runner_verbatim_with_unknown_fields() {
    let attach = r#"{"sessionId":"s-1","tick":{},"binding":{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"s-1","tickId":"s-1:3","revision":3,"participantId":"a"}}"#;
    let result = r#"{"status":"finalized","sessionId":"s-1","outcome":{"status":"won","stars":2.5},"vendor.scoreCard":{"z":[1.5,"x",{"deep":null}],"a":true},"replay":"line\n","artifacts":[{"kind":"replay","digest":"abc","vendorNote":"kept"}],"extensions":{"gaos.session.request":"finalize:s-1","vendor.ext":{"n":1}}}"#;
    let host = FakeHost::start(vec![respond("200 OK", result), respond("200 OK", attach), respond("200 OK", result)]);
    let client = builder(&host).build().expect("client");

    let direct = client.finalize("s-1", &gaos_client::FinalizeRequest::default()).await.expect("finalize");
    assert_eq!(direct.to_value(), json(result), "the client keeps every field");
    assert_eq!(direct.canonical(), gaos_json::canonical_json(&json(result)));

    let policy = gaos_session::SessionPolicy::host_default();
    let handle = gaos_client::handle::RemoteSessionHandle::attach(
        client.clone(),
        "s-1",
        &gaos_session::AttachRequest::new("attach-1"),
        &policy,
    )
    .await
    .expect("attach");
    use gaos_session::SessionHandle;
    let through_handle = handle.finalize(gaos_session::FinalizeRequest::default()).await.expect("finalize");
    assert_eq!(through_handle.to_value(), json(result), "the handle hands the runner the host's result");
    assert_eq!(through_handle.to_value().get("vendor.scoreCard"), json(result).get("vendor.scoreCard"));
    let cached = handle.finalize(gaos_session::FinalizeRequest::default()).await.expect("cached retry");
    assert_eq!(cached.canonical(), through_handle.canonical());
    assert_eq!(host.finish().len(), 3, "the handle's exact retry sends nothing");
}
