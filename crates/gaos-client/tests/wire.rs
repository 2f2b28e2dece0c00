//! Pure wire logic: encoding, submission ids, error bodies, and the checks
//! every answer must pass before the client returns it.

use gaos_client::ClientError;
use gaos_client::wire::{
    AttachRequest, FinalizeRequest, check_product_path, default_submission_id, encode_uri_component,
    normalize_base_url, parse_binding, parse_credentials, parse_error_body, parse_session_attach, parse_session_result,
    parse_tick_envelope,
};
use gaos_json::Value;
use gaos_session::ErrorCode;
use gaos_session::SessionControllerIdentity;
use gaos_session::receipts::{AttachReceipt, ReceiptBody};

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

#[test]
fn ids_are_encoded_like_encode_uri_component() {
    // encodeURIComponent keeps A-Z a-z 0-9 - _ . ! ~ * ' ( ) and encodes
    // everything else as UTF-8 %XX (Python's quote(safe="") differs only on !'()*).
    assert_eq!(encode_uri_component("s-1_a.b~c"), "s-1_a.b~c");
    assert_eq!(encode_uri_component("!'()*"), "!'()*");
    assert_eq!(encode_uri_component("a b/c?d#e&f=g:h@i"), "a%20b%2Fc%3Fd%23e%26f%3Dg%3Ah%40i");
    assert_eq!(encode_uri_component("%"), "%25");
    assert_eq!(encode_uri_component("é😀"), "%C3%A9%F0%9F%98%80");
    assert_eq!(encode_uri_component(""), "");
}

#[test]
fn base_urls_lose_trailing_slashes_and_keep_prefixes() {
    assert_eq!(normalize_base_url("http://localhost:8899/").unwrap(), "http://localhost:8899");
    assert_eq!(normalize_base_url("https://h.example/gaos///").unwrap(), "https://h.example/gaos");
    assert_eq!(normalize_base_url(" http://127.0.0.1:1 ").unwrap(), "http://127.0.0.1:1");
    for bad in ["localhost:8899", "ftp://h/", "http://h/?x=1", "http://h/#f", "not a url", ""] {
        assert!(normalize_base_url(bad).is_err(), "{bad:?} should be refused");
    }
}

#[test]
fn product_paths_stay_on_the_same_origin() {
    for ok in ["/v1/sessions", "/v1/sessions?status=active", "/healthz", "/a/b.c/d"] {
        assert!(check_product_path(ok).is_ok(), "{ok:?}");
    }
    for bad in ["v1", "//evil.example/x", "/a/../b", "/a/./b", "/a/%2e%2e/b", "/a\\b", "/a b", "/a#b", "/a\nb", ""] {
        assert!(check_product_path(bad).is_err(), "{bad:?} should be refused");
    }
}

#[test]
fn default_submission_ids_follow_the_reference() {
    assert_eq!(default_submission_id("player", "s-1:0", 0), "player:s-1:0:0");
    assert_eq!(default_submission_id("player", "s-1:0", 1), "player:s-1:0:1");
}

#[test]
fn error_bodies_give_message_and_code_with_fallbacks() {
    assert_eq!(
        parse_error_body("Conflict", br#"{"error":"stale","code":"stale_tick"}"#),
        ("stale".to_owned(), Some(ErrorCode::StaleTick))
    );
    assert_eq!(
        parse_error_body("Conflict", br#"{"code":"x"}"#),
        ("Conflict".to_owned(), Some(ErrorCode::Unknown("x".into())))
    );
    assert_eq!(parse_error_body("Bad Gateway", b"upstream down\n"), ("upstream down".to_owned(), None));
    assert_eq!(parse_error_body("Not Found", b""), ("Not Found".to_owned(), None));
    assert_eq!(parse_error_body("Teapot", br#"{"error":7}"#), (r#"{"error":7}"#.to_owned(), None));
}

const RESOLVED: &str = r#"{"protocol":"gaos.ticks","protocolVersion":"1.0","kind":"tick","sessionId":"s-1",
    "tickId":"s-1:3","revision":3,"tick":{"round":3},"extensions":{"gaos.session.episode":{"id":"s-1","index":0}}}"#;

fn pending(submitted: &str, awaiting: &str, accepted: &str) -> String {
    format!(
        r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","kind":"pending","sessionId":"s-1","tickId":"s-1:3",
            "revision":3,"tick":null,"submittedParticipants":{submitted},"awaitingParticipants":{awaiting}{accepted}}}"#
    )
}

#[test]
fn envelopes_are_checked_against_the_spec() {
    let envelope = parse_tick_envelope(json(RESOLVED), Some("s-1")).expect("valid");
    assert_eq!((envelope.kind.as_str(), envelope.revision, envelope.tick_id.as_str()), ("tick", 3, "s-1:3"));
    let ok = pending(r#"["a"]"#, r#"["b"]"#, r#","acceptedParticipantId":"a""#);
    let envelope = parse_tick_envelope(json(&ok), Some("s-1")).expect("valid pending");
    assert!(envelope.is_pending());
    assert!(envelope.tick.is_null(), "tick may be null");

    let cases: [(String, &str); 9] = [
        (RESOLVED.to_owned(), "not the requested"),
        (RESOLVED.replace(r#""tick":{"round":3},"#, ""), "no \"tick\""),
        (RESOLVED.replace("gaos.ticks", "other"), "protocol"),
        (RESOLVED.replace(r#""kind":"tick""#, r#""kind":"later""#), "kind"),
        (RESOLVED.replace(r#""revision":3"#, r#""revision":-1"#), "malformed"),
        (pending(r#"["a"]"#, "[]", ""), "at least one"),
        (pending(r#"["a"]"#, r#"["a","b"]"#, ""), "disjoint"),
        (pending("[]", r#"["b","b"]"#, ""), "unique"),
        (pending(r#"["a"]"#, r#"["b"]"#, r#","acceptedParticipantId":"b""#), "submitted"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let expected = if i == 0 { "s-2" } else { "s-1" };
        let err = parse_tick_envelope(json(text), Some(expected)).expect_err(needle);
        assert!(err.contains(needle), "case {i}: {err:?} should mention {needle:?}");
    }
    assert!(parse_tick_envelope(json("[1]"), None).is_err());
}

#[test]
fn bindings_are_exact() {
    let good = json(
        r#"{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"s","tickId":"s:1","revision":1,"participantId":"a"}"#,
    );
    assert_eq!(parse_binding(&good).expect("valid").participant_id, "a");
    let mut extra = good.clone();
    extra.as_object_mut().expect("object").insert("x".into(), Value::Null);
    assert!(parse_binding(&extra).is_err(), "unknown fields are refused");
    let mut bad_seat = good;
    bad_seat.as_object_mut().expect("object").insert("participantId".into(), "a b".into());
    assert!(parse_binding(&bad_seat).is_err());
}

#[test]
fn credentials_come_from_the_host_extension() {
    let mut envelope = parse_tick_envelope(json(RESOLVED), None).expect("valid");
    assert_eq!(parse_credentials(&envelope), Ok(None));
    let ext = envelope.extensions.as_mut().expect("extensions");
    ext.insert("gaos.host.credentials".into(), json(r#"{"seats":{"a":"tok-a","b":"tok-b"},"spectator":"tok-s"}"#));
    let credentials = parse_credentials(&envelope).expect("valid").expect("present");
    assert_eq!(credentials.seat("b"), Some("tok-b"));
    assert_eq!(credentials.spectator.as_deref(), Some("tok-s"));
    assert!(!format!("{credentials:?}").contains("tok-"), "Debug redacts tokens");
    let ext = envelope.extensions.as_mut().expect("extensions");
    ext.insert("gaos.host.credentials".into(), json(r#"{"seats":{"a":1}}"#));
    assert!(parse_credentials(&envelope).is_err());
}

fn receipt(request_id: &str, controller: Option<&str>) -> AttachReceipt {
    let mut body = ReceiptBody::new("s-1", request_id, 0, 3, "transcript", "state");
    body.controller = controller.map(|c| json(c).as_object().cloned().expect("object"));
    AttachReceipt::new(body).expect("valid receipt")
}

fn attach_answer(session: &str, seat: &str, receipt: Option<&AttachReceipt>) -> Value {
    let mut text = format!(
        r#"{{"sessionId":"{session}","tick":{{"round":3}},"binding":{{"protocol":"gaos.ticks","protocolVersion":"1.0",
            "sessionId":"{session}","tickId":"{session}:3","revision":3,"participantId":"{seat}"}}}}"#
    );
    if let Some(receipt) = receipt {
        let receipt = gaos_json::canonical_json(&receipt.to_value().expect("JSON"));
        text = format!("{},\"receipt\":{receipt}}}", &text[..text.len() - 1]);
    }
    json(&text)
}

#[test]
fn attach_answers_are_checked_end_to_end() {
    let controller = r#"{"kind":"cli","id":"bot"}"#;
    let request = AttachRequest {
        participant_id: Some("a".into()),
        controller: Some(SessionControllerIdentity::from_value(&json(controller)).expect("a controller identity")),
        ..AttachRequest::new("attach-1")
    };
    let good = receipt("attach-1", Some(controller));
    let attach = parse_session_attach(&attach_answer("s-1", "a", Some(&good)), "s-1", &request).expect("valid");
    assert_eq!(attach.binding.revision, 3);
    assert_eq!(attach.receipt.as_ref().map(|r| r.sequence), Some(0));
    assert!(parse_session_attach(&attach_answer("s-1", "a", None), "s-1", &request).expect("valid").receipt.is_none());

    let mut tampered = good.clone();
    tampered.state_digest = "other".into();
    let other_controller = receipt("attach-1", Some(r#"{"kind":"cli","id":"someone-else"}"#));
    let cases = [
        (attach_answer("s-2", "a", None), "not the requested"),
        (attach_answer("s-1", "b", None), "seat"),
        (attach_answer("s-1", "a", Some(&receipt("attach-2", Some(controller)))), "answers request"),
        (attach_answer("s-1", "a", Some(&tampered)), "receiptDigest"),
        (attach_answer("s-1", "a", Some(&other_controller)), "controller"),
        (json(r#"{"sessionId":"s-1","binding":{}}"#), "tick"),
    ];
    for (answer, needle) in cases {
        let err = parse_session_attach(&answer, "s-1", &request).expect_err(needle);
        assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    }
}

#[test]
fn requests_have_the_reference_shape() {
    assert_eq!(gaos_json::canonical_json(&AttachRequest::new("r").to_value()), r#"{"requestId":"r"}"#);
    assert_eq!(
        gaos_json::canonical_json(&FinalizeRequest::default().to_value("s-1")),
        r#"{"requestId":"finalize:s-1"}"#
    );
    let request = FinalizeRequest {
        request_id: Some("f".into()),
        metadata: json(r#"{"k":1}"#).as_object().cloned(),
        extensions: None,
    };
    assert_eq!(gaos_json::canonical_json(&request.to_value("s-1")), r#"{"metadata":{"k":1},"requestId":"f"}"#);
}

#[test]
fn session_results_are_checked() {
    let good = json(
        r#"{"sessionId":"s-1","status":"finalized","outcome":{"status":"won"},"replay":"line\n",
            "artifacts":[{"kind":"replay","digest":"d","mediaType":"application/x"}],"extensions":{"x":1}}"#,
    );
    let result = parse_session_result(&good, "s-1").expect("valid");
    assert_eq!(result.artifacts.as_ref().map(|a| a[0].media_type.as_deref()), Some(Some("application/x")));
    assert!(parse_session_result(&good, "s-2").is_err());
    assert!(parse_session_result(&json(r#"{"sessionId":"s-1","status":"finalized"}"#), "s-1").is_err());
    let open = json(r#"{"sessionId":"s-1","status":"open","outcome":null}"#);
    assert!(parse_session_result(&open, "s-1").expect_err("status").contains("finalized"));
}

#[test]
fn errors_say_what_failed() {
    let e = ClientError::Api { status: 409, code: Some("stale_tick".into()), message: "old window".into() };
    assert_eq!(e.to_string(), "the host answered HTTP 409, code stale_tick: old window");
    assert_eq!((e.status(), e.code(), e.label().as_str()), (Some(409), Some(&ErrorCode::StaleTick), "stale_tick"));
    let e = ClientError::IllegalActionRejected { message: "no such card".into(), code: None };
    assert_eq!((e.status(), e.label().as_str()), (Some(422), "illegal_command"));
    let e = ClientError::Api { status: 502, code: None, message: "Bad Gateway".into() };
    assert_eq!(e.label(), "http_502");
    assert!(!e.is_transport_failure());
}
