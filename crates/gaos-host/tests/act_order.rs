//! The act's documented refusal order holds with typed requests: the
//! request is read once at the edge, yet its defects are answered at their
//! own step (the caller, the command's size, the session's state, not an
//! object, `participantId`, `sessionId`, the exact retry, then the kernel),
//! so a body that is wrong in several ways gets the first step's answer.

use std::sync::Arc;

use gaos_host::auth::Caller;
use gaos_host::lease::Presented;
use gaos_host::requests::{ActRequest, CreateRequest, EmergencyStopRequest};
use gaos_host::{Host, HostError, HostOptions};
use gaos_json::Value;
use gaos_session::ErrorCode;
use gaos_testkit::server::TempDir;

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

fn body(session: &str, seat: &str, submission_id: &str, command: &str) -> String {
    format!(
        r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"{session}","tickId":"{session}:0",
            "revision":0,"participantId":"{seat}","submissionId":"{submission_id}","command":{command}}}"#
    )
}

async fn code(host: &Host, caller: &Caller, id: &str, text: &str) -> ErrorCode {
    let refused: HostError = host
        .act(caller, id, Presented::default(), ActRequest::from_value(json(text)))
        .await
        .expect_err(&format!("refused: {text}"));
    refused.code
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_defect_of_an_act_is_answered_at_its_own_step() {
    let dir = TempDir::new("gaos-act-order");
    let (writer, reader) = gaos_host::storage::sqlite::open(&dir.path().join("gaos.sqlite3")).expect("a database");
    let options = HostOptions { max_command_bytes: 64, ..HostOptions::new(gaos_games::GameRegistry::builtin()) };
    let (host, _) = Host::open(Box::new(writer), Arc::new(reader), "operator", options).await.expect("a host");
    let create = CreateRequest::from_value(json(r#"{"game":"conformance/counter"}"#)).expect("a create request");
    let created = host.create(&Caller::Operator, create).await.expect("created");
    let id = json(&created.body).get("sessionId").and_then(Value::as_str).expect("sessionId").to_owned();
    let a = Caller::Seat { session_id: id.clone(), seat: "a".into() };
    let spectator = Caller::Spectator { session_id: id.clone() };
    let huge = format!("\"{}\"", "x".repeat(100));

    // Each row: a body wrong at this step and at every later one.
    assert_eq!(code(&host, &spectator, &id, "[]").await, ErrorCode::Forbidden, "the caller first");
    assert_eq!(code(&host, &a, &id, &body("elsewhere", "b", "1", &huge)).await, ErrorCode::CommandTooLarge);
    assert_eq!(code(&host, &a, &id, "[]").await, ErrorCode::InvalidSubmission, "not an object");
    assert_eq!(code(&host, &a, &id, &body("elsewhere", "b", "1", "5")).await, ErrorCode::Forbidden, "another seat");
    let unnamed = r#"{"participantId":5,"sessionId":"elsewhere"}"#;
    assert_eq!(code(&host, &a, &id, unnamed).await, ErrorCode::InvalidSubmission, "no seat named");
    assert_eq!(code(&host, &a, &id, &body("elsewhere", "a", "1", "5")).await, ErrorCode::WrongSession);
    assert_eq!(code(&host, &a, &id, &body(&id, "a", "1", r#"{"n":"x"}"#)).await, ErrorCode::IllegalCommand);
    let accepted =
        host.act(&a, &id, Presented::default(), ActRequest::from_value(json(&body(&id, "a", "1", r#"{"n":1}"#))));
    assert_eq!(accepted.await.expect("accepted").status, 202);

    // The session's state comes before the body's shape.
    host.emergency_stop(&Caller::Operator, &id, EmergencyStopRequest::new("test")).await.expect("stopped");
    assert_eq!(code(&host, &a, &id, "[]").await, ErrorCode::Revoked, "a revoked session, whatever the body");
}
