//! gaos.ticks v1 session helpers over the raw HTTP client: create, submit,
//! transcripts, simultaneous windows, attach receipts, finalize, and replay
//! verification through the real `gaos replay verify`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::client::{Response, assert_error, get, post};

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
