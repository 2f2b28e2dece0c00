//! Issue 18 item 7 against a real `gaos serve` (SQLite, HTTP): attach
//! receipts are part of the session's verifiable record. The chain is read
//! with `GET /receipts` at any time, carried in the finalized replay's header
//! (`extensions["gaos.session.attach"] = {"receipts": [...]}`), survives a
//! restart and compaction, and `gaos replay verify` checks it: a tampered
//! receipt is refused naming its index, a replay without the key is accepted.
//! Attaching never moves the revision.

use std::path::{Path, PathBuf};
use std::process::Command;

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const EXT: &str = "gaos.session.attach";

/// `GET /receipts` with `token`: asserts 200 and the session id; the chain.
fn receipts(server: &TestServer, session: &Session, token: &str) -> Vec<Value> {
    let response = get(&server.base_url, &session.path("receipts"), Some(token));
    assert_eq!(response.status, 200, "GET /receipts: {}", response.text());
    let answer = response.json();
    assert_eq!(answer["sessionId"], json!(session.id));
    answer["receipts"].as_array().unwrap_or_else(|| panic!("a receipts array: {answer}")).clone()
}

fn revision(server: &TestServer, session: &Session, seat: &str) -> u64 {
    tick(&server.base_url, session, session.token(seat))["revision"].as_u64().expect("revision")
}

/// Play counter windows (seat a, then b) until the game is over, across
/// level changes of a run; the number of windows played.
fn play_to_end(server: &TestServer, session: &Session, tag: &str) -> u64 {
    let base = &server.base_url;
    let mut windows = 0;
    loop {
        let envelope = tick(base, session, session.token("a"));
        if envelope["tick"]["done"] == json!(true) {
            return windows;
        }
        for seat in ["a", "b"] {
            let envelope = tick(base, session, session.token(seat));
            let body = submission(&envelope, seat, &format!("{seat}:{tag}:{windows}"), json!({"n": 1}));
            let response = act(base, session, seat, &body);
            assert!(matches!(response.status, 200 | 202), "act: {}", response.text());
        }
        windows += 1;
        assert!(windows < 50, "the game ends");
    }
}

/// The replay the session finalized to (finalize, its exact retry, the
/// download and `gaos replay verify` are checked by the helper).
fn finalized_replay(server: &TestServer, dir: &Path, session: &Session, name: &str) -> String {
    finalize_and_verify(GAOS, &server.base_url, dir, session, "b", name);
    let replay = get(&server.base_url, &session.path("replay"), Some(session.token("a")));
    assert_eq!(replay.status, 200);
    replay.text()
}

fn header_of(replay: &str) -> Value {
    serde_json::from_str(replay.lines().next().expect("a header line")).expect("header JSON")
}

/// `replay` with its header replaced by `header` (written canonically).
fn with_header(replay: &str, header: &Value) -> String {
    let canonical = gaos_json::canonical_json(&gaos_json::parse(&header.to_string()).expect("JSON"));
    let rest: Vec<&str> = replay.lines().skip(1).collect();
    format!("{canonical}\n{}\n", rest.join("\n"))
}

/// Write `replay` as `name` and run `gaos replay verify --json` on it: the
/// exit code and the report line.
fn verify(dir: &Path, name: &str, replay: &str) -> (Option<i32>, Value) {
    let file: PathBuf = dir.join(format!("{name}.gaos-replay.jsonl"));
    std::fs::write(&file, replay).expect("write the replay");
    let output = Command::new(GAOS).args(["replay", "verify", "--json"]).arg(&file).output().expect("run gaos");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = serde_json::from_str(stdout.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("a JSON report ({e}): {stdout} {}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code(), report)
}

/// Recompute a receipt's `receiptDigest` after an edit (what a forger would do).
fn reseal(receipt: &mut Value) {
    let mut body = receipt.as_object().expect("a receipt").clone();
    body.remove("receiptDigest");
    let canonical = gaos_json::canonical_json(&gaos_json::parse(&Value::Object(body).to_string()).expect("JSON"));
    receipt["receiptDigest"] = json!(gaos_json::sha256_hex(canonical.as_bytes()));
}

fn problems(report: &Value) -> String {
    report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| p.as_str().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_receipt_chain_is_carried_by_the_replay_and_verified() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-receipts-replay");
    let session = create_session(base, op, &json!({"game": "conformance/counter", "policy": receipts_policy()}));
    assert_eq!(receipts(&server, &session, op), Vec::<Value>::new(), "no receipt before the first attach");

    play_simultaneous_window(base, &session, &[("a", json!({"n": 1})), ("b", json!({"n": 2}))], "r0");
    let before = revision(&server, &session, "a");
    let first = attach_with_receipt(base, op, &session, "a", "attach-a", 0, None);
    let link = first["receiptDigest"].as_str().expect("digest").to_owned();
    let second = attach_with_receipt(base, op, &session, "b", "attach-b", 1, Some(&link));
    // An exact retry of the first attach, after the second: the same
    // receipt, no new one.
    let retry = post(
        base,
        &session.path("attach"),
        Some(session.token("a")),
        &json!({"requestId": "attach-a", "participantId": "a"}),
    );
    assert_eq!(retry.status, 200, "{}", retry.text());
    assert_eq!(retry.json()["receipt"], first);
    assert_eq!(revision(&server, &session, "a"), before, "attaching never changes the revision");
    assert_eq!(revision(&server, &session, "b"), before);

    // Before finalize: the operator and every seat read the same chain.
    let chain = vec![first.clone(), second.clone()];
    for token in [op.as_str(), session.token("a"), session.token("b")] {
        assert_eq!(receipts(&server, &session, token), chain);
    }
    // The client reads the same chain, typed, and it verifies.
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let client = gaos_client::SessionClient::new(base, session.token("b")).expect("a client");
    let typed = runtime.block_on(client.receipts(&session.id)).expect("GET /receipts through the client");
    let typed_values: Vec<Value> =
        typed.iter().map(|r| serde_json::to_value(r.to_value().expect("JSON")).expect("JSON")).collect();
    assert_eq!(typed_values, chain);
    assert!(gaos_runner::receipts::verify_typed_receipt_chain(&typed).valid);
    assert_error(&get(base, &session.path("receipts"), Some(&session.spectator)), 403, "forbidden");
    let other = create_session(base, op, &json!({"game": "conformance/counter"}));
    assert_error(&get(base, &session.path("receipts"), Some(other.token("a"))), 403, "forbidden");
    assert_error(&get(base, &session.path("receipts"), None), 401, "unauthorized");

    assert_eq!(play_to_end(&server, &session, "rest"), 2, "counter's default three rounds");
    // An attach at the terminal head: its revision is the replay's last.
    let link = second["receiptDigest"].as_str().expect("digest").to_owned();
    let third = attach_with_receipt(base, op, &session, "a", "attach-a-end", 2, Some(&link));
    assert_eq!(third["revision"], json!(3));

    let replay = finalized_replay(&server, dir.path(), &session, "chain");
    let header = header_of(&replay);
    let chain = vec![first, second, third];
    assert_eq!(header["extensions"][EXT], json!({"receipts": chain}), "the header carries the chain, in order");
    assert_eq!(receipts(&server, &session, op), chain, "the same chain after finalize");
    let (code, report) = verify(dir.path(), "chain-again", &replay);
    assert_eq!((code, report["verdict"].clone()), (Some(0), json!("accepted-unsigned")), "{report}");

    // Tampered: receipt 1's revision edited, its digest left as it was.
    let mut tampered = header.clone();
    tampered["extensions"][EXT]["receipts"][1]["revision"] = json!(2);
    let (code, report) = verify(dir.path(), "tampered-revision", &with_header(&replay, &tampered));
    assert_eq!(code, Some(1), "{report}");
    assert_eq!((report["verdict"].clone(), report["stage"].clone()), (json!("rejected"), json!("receipts")));
    assert!(problems(&report).contains("receipt 1: receiptDigest"), "names the receipt: {report}");

    // Resealed, but past the end of the replay: the bound catches it.
    let mut forged = header.clone();
    forged["extensions"][EXT]["receipts"][2]["revision"] = json!(4);
    reseal(&mut forged["extensions"][EXT]["receipts"][2]);
    let (code, report) = verify(dir.path(), "forged-revision", &with_header(&replay, &forged));
    assert_eq!(code, Some(1), "{report}");
    assert!(problems(&report).contains("receipt 2: revision 4 is above the replay's final revision 3"), "{report}");

    // A receipt dropped from the middle breaks the chain.
    let mut dropped = header.clone();
    dropped["extensions"][EXT]["receipts"].as_array_mut().expect("receipts").remove(1);
    let (code, report) = verify(dir.path(), "dropped", &with_header(&replay, &dropped));
    assert_eq!(code, Some(1), "{report}");
    assert!(problems(&report).contains("receipt 1: sequence 2 does not follow 0"), "{report}");

    // Not the shape: malformed.
    let mut misshapen = header.clone();
    misshapen["extensions"][EXT] = json!({"receipts": {"0": chain[0]}});
    let (code, report) = verify(dir.path(), "misshapen", &with_header(&replay, &misshapen));
    assert_eq!(code, Some(1), "{report}");
    assert_eq!((report["verdict"].clone(), report["stage"].clone()), (json!("malformed"), json!("receipts")));
    assert!(problems(&report).contains("receipts must be an array"), "{report}");

    // Without the key the replay still verifies: presence is the product's check.
    let mut absent = header.clone();
    absent["extensions"].as_object_mut().expect("extensions").remove(EXT);
    let (code, report) = verify(dir.path(), "absent", &with_header(&replay, &absent));
    assert_eq!((code, report["verdict"].clone()), (Some(0), json!("accepted-unsigned")), "{report}");
}

#[test]
fn the_chain_continues_across_a_restart_and_compaction() {
    // A checkpoint (and compaction) after every transition.
    let mut server = TestServer::start_with(GAOS, &["--checkpoint-every", "1"]);
    let dir = TempDir::new("gaos-receipts-restart");
    let session = create_session(
        &server.base_url,
        &server.operator_token,
        &json!({"game": "conformance/counter", "policy": receipts_policy()}),
    );
    play_simultaneous_window(&server.base_url, &session, &[("a", json!({"n": 1})), ("b", json!({"n": 2}))], "r0");
    let first = attach_with_receipt(&server.base_url, &server.operator_token, &session, "a", "attach-a", 0, None);
    play_simultaneous_window(&server.base_url, &session, &[("a", json!({"n": 3})), ("b", json!({"n": 4}))], "r1");

    server.restart();
    assert_eq!(receipts(&server, &session, session.token("b")), std::slice::from_ref(&first), "the chain is durable");
    let link = first["receiptDigest"].as_str().expect("digest").to_owned();
    let second =
        attach_with_receipt(&server.base_url, &server.operator_token, &session, "b", "attach-b", 1, Some(&link));
    assert_eq!(second["revision"], json!(2));
    play_to_end(&server, &session, "rest");

    let replay = finalized_replay(&server, dir.path(), &session, "restarted");
    assert_eq!(header_of(&replay)["extensions"][EXT], json!({"receipts": [first, second]}));
}

#[test]
fn a_session_without_receipts_has_no_attach_extension() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-receipts-none");
    let policy = json!({
        "evaluation": {"kind": "none"},
        "durability": {"attachable": true},
        "evidence": {"kind": "replay"},
        "publication": {"kind": "none"}
    });
    let session = create_session(base, op, &json!({"game": "conformance/counter", "policy": policy}));
    let attached = post(base, &session.path("attach"), Some(session.token("a")), &json!({"requestId": "attach-a"}));
    assert_eq!(attached.status, 200, "{}", attached.text());
    assert!(attached.json().get("receipt").is_none(), "no receipt without attachReceipts");
    play_to_end(&server, &session, "all");
    assert_eq!(receipts(&server, &session, session.token("a")), Vec::<Value>::new());

    let replay = finalized_replay(&server, dir.path(), &session, "no-receipts");
    let header = header_of(&replay);
    assert!(header.get("extensions").is_none_or(|e| e.get(EXT).is_none()), "no receipts key: {header}");
}

#[test]
fn a_run_replay_carries_the_chain_across_levels() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-receipts-run");
    let create = json!({
        "game": "conformance/counter",
        "seed": 7,
        "policy": receipts_policy(),
        "run": {"levels": [{"levelId": "two", "level": {"rounds": 2}}, {"levelId": "one", "level": {"rounds": 1}}],
                "advancePolicy": "play-all-levels"},
    });
    let session = create_session(base, op, &create);
    let first = attach_with_receipt(base, op, &session, "a", "attach-a", 0, None);
    // Level 0's two windows, then the first envelope of level 1.
    for round in 0..2 {
        for seat in ["a", "b"] {
            let envelope = tick(base, &session, session.token(seat));
            let body = submission(&envelope, seat, &format!("{seat}:level0:{round}"), json!({"n": 1}));
            let response = act(base, &session, seat, &body);
            assert!(matches!(response.status, 200 | 202), "act: {}", response.text());
        }
    }
    let envelope = tick(base, &session, session.token("b"));
    assert_eq!(envelope["extensions"]["gaos.session.episode"]["index"], json!(1), "{envelope}");
    let link = first["receiptDigest"].as_str().expect("digest").to_owned();
    let second = attach_with_receipt(base, op, &session, "b", "attach-b", 1, Some(&link));
    assert_eq!(second["revision"], json!(3), "level 1 starts one past level 0's last revision (2)");
    play_to_end(&server, &session, "level1");
    // At the run's terminal head: revision 3 + 1, the replay's final revision.
    let link = second["receiptDigest"].as_str().expect("digest").to_owned();
    let third = attach_with_receipt(base, op, &session, "a", "attach-a-end", 2, Some(&link));
    assert_eq!(third["revision"], json!(4));

    let replay = finalized_replay(&server, dir.path(), &session, "run");
    let header = header_of(&replay);
    assert_eq!(header["seedPolicy"], json!("gaos.run-level-seed.v1"), "a run replay: {header}");
    assert_eq!(header["extensions"][EXT], json!({"receipts": [first, second, third]}));

    let mut forged = header.clone();
    forged["extensions"][EXT]["receipts"][2]["revision"] = json!(5);
    reseal(&mut forged["extensions"][EXT]["receipts"][2]);
    let (code, report) = verify(dir.path(), "run-forged", &with_header(&replay, &forged));
    assert_eq!(code, Some(1), "{report}");
    assert!(problems(&report).contains("receipt 2: revision 5 is above the replay's final revision 4"), "{report}");
}

#[test]
fn unlinked_receipts_are_carried_with_their_mode_and_verify() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-receipts-unlinked");
    let create = json!({"game": "conformance/counter", "receipts": "unlinked", "policy": receipts_policy()});
    let session = create_session(base, op, &create);
    let first = attach_with_receipt(base, op, &session, "a", "attach-a", 0, None);
    let second = attach_with_receipt(base, op, &session, "b", "attach-b", 1, None);
    play_to_end(&server, &session, "all");

    let replay = finalized_replay(&server, dir.path(), &session, "unlinked");
    let header = header_of(&replay);
    assert_eq!(header["extensions"][EXT], json!({"mode": "unlinked", "receipts": [first, second]}));
    // Read as chained, the same receipts lack their links.
    let mut relabelled = header.clone();
    relabelled["extensions"][EXT]["mode"] = json!("chained");
    let (code, report) = verify(dir.path(), "relabelled", &with_header(&replay, &relabelled));
    assert_eq!(code, Some(1), "{report}");
    assert!(problems(&report).contains("receipt 1: previousReceiptDigest is missing; it must link"), "{report}");
}
