//! Bad input against the real `gaos serve` binary: every refusal has its
//! documented 4xx status and `code` (never a 5xx), and changes nothing — the
//! transcript and every seat's and the spectator's `/tick` bodies are
//! byte-identical before and after each bad request. A second test checks
//! that no token (nor its SHA-256) ever reaches the server's logs.

use std::cell::Cell;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
/// The host's request body limit (1 MiB).
const BODY_LIMIT: usize = 1024 * 1024;

/// Everything a bad request must leave untouched.
#[derive(Debug, PartialEq)]
struct Observed {
    transcript: Vec<u8>,
    views: Vec<Vec<u8>>,
}

struct Matrix<'a> {
    base: &'a str,
    operator: &'a str,
    session: &'a Session,
    checked: Cell<usize>,
}

impl Matrix<'_> {
    fn observe(&self) -> Observed {
        let transcript = get(self.base, &self.session.path("transcript"), Some(self.operator));
        assert_eq!(transcript.status, 200);
        let mut tokens: Vec<&str> = self.session.seat_tokens.values().map(String::as_str).collect();
        tokens.push(&self.session.spectator);
        let views = tokens
            .iter()
            .map(|token| {
                let response = get(self.base, &self.session.path("tick"), Some(token));
                assert_eq!(response.status, 200);
                response.body
            })
            .collect();
        Observed { transcript: transcript.body, views }
    }

    /// Send a bad request; assert its status and code, and that nothing changed.
    #[track_caller]
    fn refuse(&self, case: &str, status: u16, code: &str, send: impl FnOnce() -> Response) {
        let before = self.observe();
        let response = send();
        assert_eq!(response.status, status, "{case}: expected {status} {code}, got {}", response.text());
        let body = response.json();
        assert_eq!(body["code"], json!(code), "{case}: {body}");
        assert!(body["error"].as_str().is_some_and(|m| !m.is_empty()), "{case}: errors carry a message: {body}");
        gaos_testkit::words::assert_users_words(case, body["error"].as_str().unwrap_or_default());
        assert_eq!(response.header("content-type"), Some("application/json"), "{case}");
        let after = self.observe();
        assert!(before == after, "{case}: a refused request changed the session");
        self.checked.set(self.checked.get() + 1);
    }

    /// A raw request; `route` is a session route, or a full path when it starts with `/`.
    fn send(&self, method: &str, route: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> Response {
        let path = if route.starts_with('/') { route.to_owned() } else { self.session.path(route) };
        send(self.base, method, &path, headers, body).unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// `token` as a bearer plus a JSON content type.
fn json_headers(token: &str) -> Vec<(&'static str, String)> {
    vec![("Authorization", bearer(token)), ("Content-Type", "application/json".into())]
}

fn pairs<'a>(headers: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    headers.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A JSON object padded with trailing spaces to exactly `len` bytes.
fn padded(value: &Value, len: usize) -> Vec<u8> {
    let mut bytes = value.to_string().into_bytes();
    assert!(bytes.len() <= len);
    bytes.resize(len, b' ');
    bytes
}

#[test]
fn every_bad_input_gets_its_documented_4xx_and_changes_nothing() {
    let server = TestServer::start(GAOS);
    let (base, op) = (server.base_url.as_str(), server.operator_token.as_str());
    let s = create_session(base, op, &json!({"game": "conformance/hilo", "seed": 11}));
    let other = create_session(base, op, &json!({"game": "conformance/counter"}));
    let (alice, bob) = (s.token("alice"), s.token("bob"));

    // Round 0 resolved; in round 1 alice has submitted and bob is awaited.
    let round0 = tick(base, &s, alice);
    play_simultaneous_window(base, &s, &[("alice", json!({"card": 0})), ("bob", json!({"card": 0}))], "r0");
    let round1 = tick(base, &s, alice);
    let alice_pending = submission(&round1, "alice", "alice:r1", json!({"card": 1}));
    assert_eq!(act(base, &s, "alice", &alice_pending).status, 202);
    let bob_next = |id: &str, command: Value| submission(&round1, "bob", id, command);

    let m = Matrix { base, operator: op, session: &s, checked: Cell::new(0) };
    let valid_bob = bob_next("bob:r1", json!({"card": 0})).to_string().into_bytes();
    let bob_headers = json_headers(bob);
    let bob_headers = pairs(&bob_headers);
    let op_headers = json_headers(op);
    let op_headers = pairs(&op_headers);

    // ----- credentials: 401 --------------------------------------------------
    m.refuse("act without a token", 401, "unauthorized", || {
        m.send("POST", "actions", &[("Content-Type", "application/json")], Some(&valid_bob))
    });
    m.refuse("act with an unknown token", 401, "unauthorized", || {
        let fake = json_headers(&format!("gaos_seat_{}", "0".repeat(64)));
        m.send("POST", "actions", &pairs(&fake), Some(&valid_bob))
    });
    m.refuse("act with a Basic credential", 401, "unauthorized", || {
        m.send("POST", "actions", &[("Authorization", "Basic Ym9iOmJvYg==")], Some(&valid_bob))
    });
    m.refuse("act with an empty bearer", 401, "unauthorized", || {
        m.send("POST", "actions", &[("Authorization", "Bearer ")], Some(&valid_bob))
    });
    m.refuse("observe without a token", 401, "unauthorized", || m.send("GET", "tick", &[], None));
    m.refuse("transcript with an unknown token", 401, "unauthorized", || {
        m.send("GET", "transcript", &[("Authorization", "Bearer nope")], None)
    });

    // ----- someone else's credential: 403 ------------------------------------
    m.refuse("bob's token acting for alice", 403, "forbidden", || {
        act(base, &s, "bob", &submission(&round1, "alice", "alice:r1:other", json!({"card": 0})))
    });
    m.refuse("alice's token acting for bob", 403, "forbidden", || {
        post_bytes(base, &s.path("actions"), Some(alice), &valid_bob)
    });
    m.refuse("the spectator acting", 403, "forbidden", || {
        post_bytes(base, &s.path("actions"), Some(&s.spectator), &valid_bob)
    });
    m.refuse("the operator acting", 403, "forbidden", || post_bytes(base, &s.path("actions"), Some(op), &valid_bob));
    m.refuse("another session's seat acting", 403, "forbidden", || {
        post_bytes(base, &s.path("actions"), Some(other.token("a")), &valid_bob)
    });
    m.refuse("the spectator attaching", 403, "forbidden", || {
        post(base, &s.path("attach"), Some(&s.spectator), &json!({"requestId": "spy"}))
    });
    m.refuse("alice attaching as bob", 403, "forbidden", || {
        post(base, &s.path("attach"), Some(alice), &json!({"requestId": "as-bob", "participantId": "bob"}))
    });
    m.refuse("the spectator finalizing", 403, "forbidden", || {
        post(base, &s.path("finalize"), Some(&s.spectator), &json!({"requestId": "f"}))
    });
    m.refuse("another session's seat finalizing", 403, "forbidden", || {
        post(base, &s.path("finalize"), Some(other.token("b")), &json!({"requestId": "f"}))
    });
    m.refuse("another session's seat observing", 403, "forbidden", || {
        get(base, &s.path("tick"), Some(other.token("a")))
    });
    m.refuse("the spectator taking a seat snapshot", 403, "forbidden", || {
        get(base, &s.path("snapshot"), Some(&s.spectator))
    });
    m.refuse("a seat reading the operator transcript", 403, "forbidden", || {
        get(base, &s.path("transcript"), Some(alice))
    });
    m.refuse("a seat creating a session", 403, "forbidden", || {
        post(base, "/v1/sessions", Some(alice), &json!({"game": "conformance/hilo"}))
    });
    m.refuse("a seat listing sessions", 403, "forbidden", || get(base, "/v1/sessions", Some(bob)));
    // A seat token is bound to its session: authorization fails before the
    // lookup, so a seat cannot probe which session ids exist.
    m.refuse("a seat token on an unknown session", 403, "forbidden", || {
        get(base, "/v1/sessions/s-0000000000000000/tick", Some(alice))
    });

    // ----- unknown session or route: 404 / 405 -------------------------------
    m.refuse("operator transcript of an unknown session", 404, "unknown_session", || {
        get(base, "/v1/sessions/s-0000000000000000/transcript", Some(op))
    });
    m.refuse("operator finalize of an unknown session", 404, "unknown_session", || {
        post(base, "/v1/sessions/s-0000000000000000/finalize", Some(op), &json!({"requestId": "f"}))
    });
    m.refuse("operator replay of an unknown session", 404, "unknown_session", || {
        get(base, "/v1/sessions/no%20such%20session/replay", Some(op))
    });
    m.refuse("an unknown route", 404, "not_found", || get(base, "/v1/nothing-here", Some(op)));
    m.refuse("a wrong method", 405, "method_not_allowed", || {
        m.send("DELETE", "tick", &[("Authorization", &bearer(bob))], None)
    });

    // ----- malformed bodies: 400 ---------------------------------------------
    for (case, body) in [
        ("act with broken JSON", &b"{\"protocol\": "[..]),
        ("act with an empty body", &b""[..]),
        ("act with a JSON array", &b"[1, 2]"[..]),
        ("act with invalid UTF-8", &b"{\"command\": \"\xff\xfe\"}"[..]),
        ("act with trailing garbage", &b"{} {}"[..]),
    ] {
        m.refuse(case, 400, "invalid_submission", || m.send("POST", "actions", &bob_headers, Some(body)));
    }
    let mut no_id = bob_next("x", json!({"card": 0}));
    no_id.as_object_mut().expect("object").remove("submissionId");
    m.refuse("act without a submissionId", 400, "invalid_submission", || act(base, &s, "bob", &no_id));
    let blank_id = bob_next("   ", json!({"card": 0}));
    m.refuse("act with a blank submissionId", 400, "invalid_submission", || act(base, &s, "bob", &blank_id));
    let mut numeric_id = bob_next("x", json!({"card": 0}));
    numeric_id["submissionId"] = json!(5);
    m.refuse("act with a numeric submissionId", 400, "invalid_submission", || act(base, &s, "bob", &numeric_id));
    let mut no_command = bob_next("bob:no-command", json!(null));
    no_command.as_object_mut().expect("object").remove("command");
    m.refuse("act without a command", 400, "invalid_submission", || act(base, &s, "bob", &no_command));
    let mut no_participant = bob_next("bob:anon", json!({"card": 0}));
    no_participant.as_object_mut().expect("object").remove("participantId");
    m.refuse("act without a participantId", 400, "invalid_submission", || act(base, &s, "bob", &no_participant));
    let mut numeric_seat = bob_next("bob:n", json!({"card": 0}));
    numeric_seat["participantId"] = json!(1);
    m.refuse("act with a numeric participantId", 400, "invalid_submission", || act(base, &s, "bob", &numeric_seat));
    let mut wrong_protocol = bob_next("bob:proto", json!({"card": 0}));
    wrong_protocol["protocolVersion"] = json!("2.0");
    m.refuse("act with another protocol version", 400, "invalid_protocol", || act(base, &s, "bob", &wrong_protocol));
    let mut wrong_session = bob_next("bob:elsewhere", json!({"card": 0}));
    wrong_session["sessionId"] = json!(other.id);
    m.refuse("act naming another session", 400, "wrong_session", || act(base, &s, "bob", &wrong_session));
    let mut bad_extensions = bob_next("bob:ext", json!({"card": 0}));
    bad_extensions["extensions"] = json!([1]);
    m.refuse("act with non-object extensions", 400, "invalid_submission", || act(base, &s, "bob", &bad_extensions));
    let deep = format!("{{\"command\": {}{}}}", "[".repeat(5000), "]".repeat(5000)).into_bytes();
    m.refuse("act nested 5000 deep", 400, "invalid_submission", || {
        m.send("POST", "actions", &bob_headers, Some(&deep))
    });
    let surrogate = br#"{"participantId": "bob", "submissionId": "\ud800"}"#;
    m.refuse("act with a lone surrogate", 400, "invalid_submission", || {
        m.send("POST", "actions", &bob_headers, Some(surrogate))
    });
    let unsafe_number = br#"{"participantId": "bob", "revision": 9007199254740993}"#;
    m.refuse("act with an unsafe integer", 400, "invalid_submission", || {
        m.send("POST", "actions", &bob_headers, Some(unsafe_number))
    });
    m.refuse("attach with broken JSON", 400, "invalid_request", || {
        m.send("POST", "attach", &bob_headers, Some(b"{\"requestId\""))
    });
    m.refuse("attach without a requestId", 400, "invalid_request", || {
        post(base, &s.path("attach"), Some(bob), &json!({"participantId": "bob"}))
    });
    m.refuse("attach with a numeric requestId", 400, "invalid_request", || {
        post(base, &s.path("attach"), Some(bob), &json!({"requestId": 7}))
    });
    m.refuse("attach with an unknown field", 400, "invalid_request", || {
        post(base, &s.path("attach"), Some(bob), &json!({"requestId": "r", "revision": 0}))
    });
    m.refuse("attach with a malformed controller", 400, "invalid_request", || {
        post(base, &s.path("attach"), Some(bob), &json!({"requestId": "r", "controller": {"kind": "robot"}}))
    });
    m.refuse("finalize with broken JSON", 400, "invalid_request", || {
        m.send("POST", "finalize", &bob_headers, Some(b"nope"))
    });
    m.refuse("finalize without a requestId", 400, "invalid_request", || {
        post(base, &s.path("finalize"), Some(bob), &json!({"metadata": {}}))
    });
    m.refuse("create with broken JSON", 400, "invalid_request", || {
        m.send("POST", "/v1/sessions", &op_headers, Some(b"{\"game\":"))
    });
    m.refuse("create with an unknown game", 400, "unknown_game", || {
        post(base, "/v1/sessions", Some(op), &json!({"game": "conformance/chess"}))
    });
    m.refuse("create with an unknown field", 400, "invalid_request", || {
        post(base, "/v1/sessions", Some(op), &json!({"game": "conformance/hilo", "colour": "red"}))
    });
    m.refuse("snapshot with a bad after", 400, "invalid_request", || {
        get(base, &format!("{}?after=-1", s.path("snapshot")), Some(bob))
    });

    // ----- oversized bodies: 413 ---------------------------------------------
    // One byte over the limit: the host has read the whole body when it
    // refuses it, so the answer is never lost to a reset of a half-sent request.
    let huge = padded(&bob_next("bob:huge", json!({"card": 0})), BODY_LIMIT + 1);
    m.refuse("act over 1 MiB", 413, "payload_too_large", || m.send("POST", "actions", &bob_headers, Some(&huge)));
    let huge_attach = padded(&json!({"requestId": "big"}), BODY_LIMIT + 1);
    m.refuse("attach over 1 MiB", 413, "payload_too_large", || {
        m.send("POST", "attach", &bob_headers, Some(&huge_attach))
    });
    let huge_create = padded(&json!({"game": "conformance/hilo"}), BODY_LIMIT + 1);
    m.refuse("create over 1 MiB", 413, "payload_too_large", || {
        m.send("POST", "/v1/sessions", &op_headers, Some(&huge_create))
    });
    // Exactly 1 MiB is within the limit: it reaches the cursor check.
    let stale_at_limit = padded(&submission(&round0, "bob", "bob:limit", json!({"card": 0})), BODY_LIMIT);
    m.refuse("a stale act of exactly 1 MiB", 409, "stale_tick", || {
        m.send("POST", "actions", &bob_headers, Some(&stale_at_limit))
    });

    // ----- game rules: 409 / 422 ---------------------------------------------
    m.refuse("a stale tick", 409, "stale_tick", || {
        act(base, &s, "bob", &submission(&round0, "bob", "bob:stale", json!({"card": 0})))
    });
    let mut future = bob_next("bob:future", json!({"card": 0}));
    future["revision"] = json!(7);
    future["tickId"] = json!(format!("{}:7", s.id));
    m.refuse("a future tick", 409, "stale_tick", || act(base, &s, "bob", &future));
    let mut mismatched = bob_next("bob:mismatch", json!({"card": 0}));
    mismatched["tickId"] = json!(format!("{}:0", s.id));
    m.refuse("a tickId that does not match the revision", 409, "stale_tick", || act(base, &s, "bob", &mismatched));
    for (case, revision) in [("a string revision", json!("1")), ("a fractional revision", json!(1.5))] {
        let mut body = bob_next(&format!("bob:{case}"), json!({"card": 0}));
        body["revision"] = revision;
        m.refuse(case, 409, "stale_tick", || act(base, &s, "bob", &body));
    }
    // An integral number beyond ±(2^53−1) is not JSON this protocol accepts.
    let mut huge_revision = bob_next("bob:huge-revision", json!({"card": 0}));
    huge_revision["revision"] = json!(1e300);
    m.refuse("a huge revision", 400, "invalid_submission", || act(base, &s, "bob", &huge_revision));
    m.refuse("a changed retry of alice's submission", 409, "conflicting_intent", || {
        act(base, &s, "alice", &submission(&round1, "alice", "alice:r1", json!({"card": 0})))
    });
    m.refuse("a second intent from alice in the window", 409, "conflicting_intent", || {
        act(base, &s, "alice", &submission(&round1, "alice", "alice:r1:second", json!({"card": 0})))
    });
    m.refuse("an out-of-range card", 422, "illegal_command", || {
        act(base, &s, "bob", &bob_next("bob:99", json!({"card": 99})))
    });
    m.refuse("a negative card", 422, "illegal_command", || {
        act(base, &s, "bob", &bob_next("bob:-1", json!({"card": -1})))
    });
    m.refuse("a command the game cannot map", 422, "illegal_command", || {
        act(base, &s, "bob", &bob_next("bob:what", json!({"move": "north"})))
    });
    m.refuse("finalize before the game ended", 409, "not_terminal", || {
        post(base, &s.path("finalize"), Some(alice), &json!({"requestId": "too-early"}))
    });
    m.refuse("the replay before the game ended", 409, "not_terminal", || get(base, &s.path("replay"), Some(alice)));
    // After all that, the exact retry is still answered with the first answer.
    let retry = act(base, &s, "alice", &alice_pending);
    assert_eq!(retry.status, 202, "{}", retry.text());

    // An attach request id cannot be reused once the game moved on.
    let attach_request = json!({"requestId": "bob-attach"});
    assert_eq!(post(base, &s.path("attach"), Some(bob), &attach_request).status, 200);
    let bob_move = post_bytes(base, &s.path("actions"), Some(bob), &valid_bob);
    assert_eq!(bob_move.status, 200, "{}", bob_move.text());
    m.refuse("an attach request reused after the game advanced", 409, "attach_request_reused", || {
        post(base, &s.path("attach"), Some(bob), &attach_request)
    });

    // Play out the last round, then finalize.
    play_simultaneous_window(base, &s, &[("bob", json!({"card": 0})), ("alice", json!({"card": 0}))], "r2");
    let done = tick(base, &s, alice);
    assert_eq!(done["tick"]["done"], json!(true));
    m.refuse("acting after the game ended", 409, "terminal", || {
        act(base, &s, "bob", &submission(&done, "bob", "bob:late", json!({"card": 0})))
    });
    let finalize = json!({"requestId": "the-end"});
    let result = post(base, &s.path("finalize"), Some(bob), &finalize);
    assert_eq!(result.status, 200, "{}", result.text());
    m.refuse("acting after finalize", 409, "session_finalized", || {
        act(base, &s, "alice", &submission(&done, "alice", "alice:late", json!({"card": 0})))
    });
    m.refuse("an exact retry of an old submission after finalize", 409, "session_finalized", || {
        act(base, &s, "alice", &alice_pending)
    });
    m.refuse("finalize with another requestId", 409, "finalize_conflict", || {
        post(base, &s.path("finalize"), Some(alice), &json!({"requestId": "another"}))
    });
    m.refuse("finalize with changed metadata", 409, "finalize_conflict", || {
        post(base, &s.path("finalize"), Some(alice), &json!({"requestId": "the-end", "metadata": {"x": 1}}))
    });
    m.refuse("attach after finalize", 409, "session_finalized", || {
        post(base, &s.path("attach"), Some(alice), &json!({"requestId": "late"}))
    });
    let again = post(base, &s.path("finalize"), Some(alice), &finalize);
    assert_eq!(
        (again.status, again.body),
        (200, result.body),
        "the finalize retry (any seat) returns the first result"
    );

    // The percent-encoded session id of a route is decoded.
    let encoded = s.id.replace('-', "%2D");
    assert_eq!(get(base, &format!("/v1/sessions/{encoded}/tick"), Some(alice)).status, 200);
    assert_eq!(m.checked.get(), 78, "every case of the matrix ran");
}

/// Start `gaos serve` with stdout and stderr captured and every log level on.
fn spawn_logged(data_dir: &std::path::Path, log: &std::path::Path) -> (std::process::Child, String) {
    let log_file = std::fs::File::create(log).expect("a log file");
    let mut child = Command::new(GAOS)
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data_dir)
        .env("RUST_LOG", "trace")
        .env_remove("GAOS_OPERATOR_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_file))
        .spawn()
        .expect("gaos serve starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout_log = data_dir.join("stdout.log");
    std::thread::spawn(move || {
        let mut copy = String::new();
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            copy.push_str(&line);
            copy.push('\n');
            let _ = std::fs::write(&stdout_log, &copy);
            if !sent && let Some(address) = line.strip_prefix("gaos serve: listening on ") {
                let _ = tx.send(address.trim().to_owned());
                sent = true;
            }
        }
    });
    let base = rx.recv_timeout(Duration::from_secs(60)).expect("gaos serve reports its address");
    (child, base)
}

#[test]
fn no_token_or_token_hash_ever_appears_in_the_logs() {
    let dir = TempDir::new("gaos-logs");
    let log = dir.path().join("stderr.log");
    let (mut child, base) = spawn_logged(dir.path(), &log);
    let operator =
        std::fs::read_to_string(dir.path().join("operator-token")).expect("operator token").trim().to_owned();

    let s = create_session(&base, &operator, &json!({"game": "conformance/hilo", "seed": 3}));
    let stranger = format!("gaos_seat_{}", "ab".repeat(32));
    play_simultaneous_window(&base, &s, &[("alice", json!({"card": 0})), ("bob", json!({"card": 0}))], "r0");
    let envelope = tick(&base, &s, s.token("alice"));
    assert_eq!(post(&base, &s.path("attach"), Some(s.token("bob")), &json!({"requestId": "a"})).status, 200);
    assert_error(&post(&base, &s.path("actions"), Some(&stranger), &json!({})), 401, "unauthorized");
    assert_error(
        &act(&base, &s, "bob", &submission(&envelope, "bob", "b", json!({"card": 9}))),
        422,
        "illegal_command",
    );
    assert_eq!(get(&base, &s.path("tick"), Some(&s.spectator)).status, 200);
    let reissued = post(&base, &s.path("seats/alice/token"), Some(&operator), &json!({}));
    assert_eq!(reissued.status, 200, "{}", reissued.text());
    let fresh = reissued.json()["token"].as_str().expect("a new token").to_owned();
    assert_error(&get(&base, &s.path("tick"), Some(s.token("alice"))), 401, "unauthorized");
    assert_eq!(get(&base, &s.path("tick"), Some(&fresh)).status, 200);
    let _ = child.kill();
    let _ = child.wait();

    let mut logs = std::fs::read_to_string(&log).expect("stderr log");
    logs.push_str(&std::fs::read_to_string(dir.path().join("stdout.log")).unwrap_or_default());
    assert!(logs.contains("session created"), "the log captured the host's events at trace level");
    let mut secrets: Vec<String> = s.seat_tokens.values().cloned().collect();
    secrets.extend([s.spectator.clone(), operator.clone(), stranger, fresh]);
    for secret in &secrets {
        for needle in [secret.clone(), gaos_json::sha256_hex(secret.as_bytes())] {
            assert!(!logs.contains(&needle), "a token or its hash appears in the logs");
        }
        // Not even a prefix long enough to narrow a search.
        let hex = secret.rsplit('_').next().expect("token body");
        assert!(!logs.contains(&hex[..16]), "a token fragment appears in the logs");
    }
}
