//! Seat handover (issue 18, item 6) on a real `gaos serve`, with real
//! `gaos mcp` children spoken to in MCP's stdio framing (one JSON-RPC
//! message per line):
//!
//! - a create asks for the creator's claim (`"lease"`) or takes none, so an
//!   agent handed alice's seat token right after create plays at once;
//! - `POST /lease/release` gives a claim up without stopping the session;
//!   the released token never drives again and epochs keep increasing;
//! - `gaos mcp` heartbeats its short lease while it runs (an idle server
//!   keeps its seat past the lease), releases it on a clean exit, and a
//!   `kill -9`-ed server's restart plays the seat again within 10 s.

mod lease_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use lease_support::*;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
/// How long a restarted `gaos mcp` may take to play its seat again.
const HANDOVER_LIMIT: Duration = Duration::from_secs(10);

/// A `gaos mcp` child for one seat, spoken to over its stdin/stdout.
struct McpChild {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl McpChild {
    /// Start `gaos mcp` for `seat` (its default short lease) and initialize it.
    fn start(base: &str, session: &Session, seat: &str) -> McpChild {
        let mut child = Command::new(GAOS)
            .args(["mcp", "--host", base, "--session", &session.id, "--seat", seat])
            .env("GAOS_SEAT_TOKEN", session.token(seat))
            .env_remove("GAOS_LEASE_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("gaos mcp starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut mcp = McpChild { child, stdin, lines, next_id: 1 };
        let init = mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "handover-test", "version": "0"}}),
        );
        assert!(init["result"]["serverInfo"].is_object(), "initialize: {init}");
        mcp.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn write(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("write to gaos mcp");
        stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no answer to {method} within 30 s"));
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `tools/call`: the call's result (`content`, `structuredContent`, `isError`).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        answer.get("result").cloned().unwrap_or_else(|| panic!("tools/call {tool}: {answer}"))
    }

    /// Close stdin (the client disconnects) and wait for a clean exit.
    fn close(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "gaos mcp exits cleanly: {status}");
                return;
            }
            assert!(Instant::now() < deadline, "gaos mcp did not exit after its client left");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `kill -9`: no chance to release anything.
    fn kill(mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }
}

impl Drop for McpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

#[track_caller]
fn played(result: &Value) {
    assert_eq!(result["isError"], json!(false), "the move was accepted: {}", text_of(result));
}

/// A hilo session; the creator seat alice holds a claim only with `lease`.
fn hilo(base: &str, op: &str, lease: Option<Value>) -> Session {
    let mut body = json!({"game": "conformance/hilo", "seed": 9, "level": {"handSize": 5, "maxCard": 1000}});
    if let Some(lease) = lease {
        body["lease"] = lease;
    }
    create_session(base, op, &body)
}

/// bob plays his first legal card, lease-unaware, over plain HTTP.
#[track_caller]
fn bob_plays(base: &str, session: &Session, tag: &str) {
    let view = envelope_of(base, session, "bob");
    let command = view["tick"]["legalActions"][0].clone();
    let body = submission(&view, "bob", tag, command);
    let answer = act(base, session, "bob", &body);
    assert!(answer.is_success(), "bob plays: {}", answer.text());
}

#[test]
fn a_create_claims_for_the_creator_only_when_asked_and_an_agent_with_alices_token_plays_at_once() {
    let server = TestServer::start(GAOS);
    let (base, op) = (server.base_url.clone(), server.operator_token.clone());
    let asked = hilo(&base, &op, Some(json!({})));
    assert_eq!(lease_of(&asked.created).epoch, 1, "\"lease\": {{}} asks for the creator's claim");
    assert_eq!(lease_state(&base, &asked, "alice", None), "active");

    let session = hilo(&base, &op, None);
    assert_eq!(session.created["extensions"].get("gaos.host.lease"), None, "no claim was asked for");
    assert_eq!(lease_state(&base, &session, "alice", None), "none");
    // The agent is handed alice's seat token right after create: no
    // writer_conflict, it plays.
    let mut alice = McpChild::start(&base, &session, "alice");
    played(&alice.call("act", json!({"index": 0})));
    let status = alice.call("status", json!({}));
    assert_eq!(status["structuredContent"]["lease"]["state"], json!("active"), "{}", text_of(&status));
    assert_eq!(status["structuredContent"]["lease"]["epoch"], json!(1));
    alice.close();
}

#[test]
fn release_gives_the_seat_up_without_stopping_the_session() {
    let server = TestServer::start(GAOS);
    let (base, op) = (server.base_url.clone(), server.operator_token.clone());
    let session = hilo(&base, &op, Some(json!({})));
    let lease = lease_of(&session.created);
    // Another controller is refused while the claim is live, and told what to do.
    let bob_like = seat_post(&base, &session, "alice", "attach", None, &json!({"requestId": "r1", "lease": {}}));
    assert_error(&bob_like, 409, "writer_conflict");
    let told = bob_like.json()["error"].as_str().unwrap_or_default().to_owned();
    for hint in ["lapses", "POST /lease/release", "Gaos-Lease"] {
        assert!(told.contains(hint), "the writer_conflict text says what to do ({hint}): {told}");
    }
    // A bearer-only caller cannot release a lease-aware claim.
    assert_error(&seat_post(&base, &session, "alice", "lease/release", None, &json!({})), 409, "writer_conflict");
    let released = seat_post(&base, &session, "alice", "lease/release", Some(&lease), &json!({}));
    assert_eq!(released.status, 200, "{}", released.text());
    // The releaser's token is out of the seat; the seat itself has no claim.
    assert_eq!(released.json()["state"], json!("superseded"), "{}", released.text());
    assert_eq!(lease_state(&base, &session, "alice", None), "none");
    // A retry is harmless; the released token never drives again.
    assert_eq!(seat_post(&base, &session, "alice", "lease/release", Some(&lease), &json!({})).status, 200);
    assert_error(&renew(&base, &session, "alice", Some(&lease)), 409, "writer_conflict");
    // The session goes on: the next controller takes the seat at once, at a newer epoch.
    let attached = seat_post(&base, &session, "alice", "attach", None, &json!({"requestId": "r2", "lease": {}}));
    assert_eq!(attached.status, 200, "{}", attached.text());
    let next = lease_of(&attached.json());
    assert_eq!(next.epoch, 2, "epochs keep increasing across a release");
    let view = envelope_of(&base, &session, "alice");
    let body = submission(&view, "alice", "a0", view["tick"]["legalActions"][0].clone());
    assert!(act_as(&base, &session, "alice", Some(&next), &body).is_success());
    bob_plays(&base, &session, "b0");
    let records = session_lease_records(&base, &op, &session);
    let released: Vec<&Value> = records.iter().filter(|r| r["event"] == json!("released")).collect();
    assert_eq!(released.len(), 1, "one release on the record: {records:?}");
    assert_eq!((released[0]["seat"].clone(), released[0]["epoch"].clone()), (json!("alice"), json!(1)));
    assert!(!kinds(&records).contains(&"revoked".to_owned()), "a release is not a stop: {records:?}");
}

#[test]
fn gaos_mcp_keeps_its_seat_while_idle_releases_it_on_exit_and_a_killed_one_is_replaced_within_10_s() {
    let server = TestServer::start(GAOS);
    let (base, op) = (server.base_url.clone(), server.operator_token.clone());
    let session = hilo(&base, &op, None);

    // Idle longer than its 6 s lease: the heartbeats keep the claim.
    let mut first = McpChild::start(&base, &session, "alice");
    played(&first.call("act", json!({"index": 0})));
    bob_plays(&base, &session, "b0");
    std::thread::sleep(Duration::from_millis(7_500));
    assert_eq!(lease_state(&base, &session, "alice", None), "active", "an idle, running server keeps its seat");
    played(&first.call("act", json!({"index": 0})));
    bob_plays(&base, &session, "b1");
    // A clean exit releases: the next server plays on its first call.
    first.close();
    assert_eq!(lease_state(&base, &session, "alice", None), "none", "released on exit");
    let mut second = McpChild::start(&base, &session, "alice");
    played(&second.call("act", json!({"index": 0})));
    bob_plays(&base, &session, "b2");

    // kill -9: the claim stays until its short lease lapses; the restarted
    // server is told what is going on, then plays its seat again in < 10 s.
    second.kill();
    let killed_at = Instant::now();
    let mut third = McpChild::start(&base, &session, "alice");
    let mut refusals = Vec::new();
    loop {
        let result = third.call("act", json!({"index": 0}));
        if result["isError"] == json!(false) {
            break;
        }
        assert_eq!(result["structuredContent"]["code"], json!("writer_conflict"), "{}", text_of(&result));
        refusals.push(text_of(&result));
        assert!(killed_at.elapsed() < HANDOVER_LIMIT, "the restarted server did not get its seat: {refusals:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
    let took = killed_at.elapsed();
    assert!(took < HANDOVER_LIMIT, "the seat came back after {took:?}");
    for text in &refusals {
        assert!(text.contains("release"), "a refusal says what to do: {text}");
    }
    bob_plays(&base, &session, "b3");
    played(&third.call("act", json!({"index": 0})));
    third.close();

    // On the record: one lapse (the killed server's), one takeover, two releases.
    let records = session_lease_records(&base, &op, &session);
    let count = |event: &str| records.iter().filter(|r| r["event"] == json!(event)).count();
    assert_eq!(count("lease_expired"), 1, "{records:?}");
    assert_eq!(count("takeover"), 1, "{records:?}");
    assert_eq!(count("released"), 2, "{records:?}");
    let epochs: Vec<u64> =
        records.iter().filter(|r| r["event"] == json!("released")).filter_map(|r| r["epoch"].as_u64()).collect();
    assert_eq!(epochs, vec![1, 3], "each server held a newer epoch: {records:?}");
}
