//! Issue 18 item 7: attach receipts are part of the transcript (lifecycle
//! spec §3, "persist receipts in the event log"): each receipt an attach
//! issues is an `extension` event on lane `gaos.session.attach`, written with
//! the attach answer; an exact retry adds nothing, and the replay still verifies.

use gaos_testkit::http::{create_session, finalize_and_verify, get, post};
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn receipt_events(server: &TestServer, session_id: &str) -> Vec<Value> {
    let response =
        get(&server.base_url, &format!("/v1/sessions/{session_id}/transcript"), Some(&server.operator_token));
    assert_eq!(response.status, 200, "{}", response.text());
    response
        .text()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).expect("an event"))
        .filter(|e| e["kind"] == "extension" && e["lane"] == "gaos.session.attach")
        .collect()
}

#[test]
fn each_issued_receipt_is_an_event_of_the_transcript() {
    let server = TestServer::start(GAOS);
    let policy = json!({"evaluation":{"kind":"none"},"durability":{"attachable":true},
        "evidence":{"kind":"verification","attachReceipts":true},"publication":{"kind":"none"}});
    let session = create_session(
        &server.base_url,
        &server.operator_token,
        &json!({"game":"conformance/counter","policy":policy}),
    );
    let attach = |seat: &str, request: &str| {
        let response =
            post(&server.base_url, &session.path("attach"), Some(session.token(seat)), &json!({"requestId": request}));
        assert_eq!(response.status, 200, "{}", response.text());
        response.json()["receipt"].clone()
    };
    let first = attach("a", "attach-a");
    let second = attach("b", "attach-b");
    let retry = attach("a", "attach-a");
    assert_eq!(retry, first, "an exact retry answers the same receipt");
    let events = receipt_events(&server, &session.id);
    let recorded: Vec<&Value> = events.iter().map(|e| &e["record"]).collect();
    assert_eq!(recorded, [&first, &second], "one event per issued receipt, in order; the retry added none");
    assert_eq!(second["previousReceiptDigest"], first["receiptDigest"]);

    // The game plays on and the replay (which carries the receipts as
    // extension records) verifies.
    for (seat, n) in [("a", 1), ("b", 2), ("a", 0), ("b", 0), ("a", 1), ("b", 1)] {
        let tick = get(&server.base_url, &session.path("tick"), Some(session.token(seat))).json();
        let body = json!({"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":session.id,
            "tickId":tick["tickId"],"revision":tick["revision"],"participantId":seat,
            "submissionId":format!("{seat}-{}", tick["revision"]),"command":{"n":n}});
        let answer = post(&server.base_url, &session.path("actions"), Some(session.token(seat)), &body);
        assert!(answer.status == 200 || answer.status == 202, "{}", answer.text());
    }
    finalize_and_verify(GAOS, &server.base_url, server.data_dir(), &session, "a", "receipts-in-transcript");
}
