//! Past one machine: three real `gaos serve` processes on one PostgreSQL.
//! Any host answers any session with the owner's bytes (streams too); a
//! session whose owner is killed (SIGKILL) moves to another host with its
//! transcript, revision, seat tokens, leases and pending intents; an owner
//! stopped (SIGSTOP) past its membership lease that wakes after its session
//! moved stores nothing more under its old epoch and forwards instead; a
//! turn deadline armed by the old owner fires at the same time on the new one;
//! `/mcp` of a host that does not own a session drives its seat there; a host
//! without a session's game module never claims it.

use std::time::{Duration, Instant};

use gaos_testkit::http::{self, SseReader, create_session, submission, tick, transcript};
use gaos_testkit::postgres::{self, TestPostgres};
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
/// Membership lease of the test hosts (short, so failover tests are quick).
const LEASE_MS: u64 = 1_500;

struct TestCluster {
    url: String,
    hosts: Vec<TestServer>,
    _dirs: Vec<TempDir>,
}

impl TestCluster {
    /// `n` hosts sharing one database, operator token and host key.
    fn start(n: usize) -> TestCluster {
        TestCluster::start_with(n, |_| Vec::new())
    }

    /// [`TestCluster::start`], host `i` with `extra(i)` more arguments.
    fn start_with(n: usize, extra: impl Fn(usize) -> Vec<String>) -> TestCluster {
        let url = postgres::server().database("cluster");
        let token = format!("gaos_op_{}", "ab".repeat(32));
        let key = "cd".repeat(32);
        let mut dirs = Vec::new();
        let mut hosts = Vec::new();
        for i in 0..n {
            let dir = TempDir::new("gaos-cluster-host");
            std::fs::write(dir.path().join("operator-token"), &token).expect("token");
            std::fs::write(dir.path().join("host-key"), &key).expect("key");
            let lease = LEASE_MS.to_string();
            let node = format!("node-{i}");
            let mut args = vec!["--store", url.as_str(), "--node-id", node.as_str(), "--node-lease-ms", lease.as_str()];
            let more = extra(i);
            args.extend(more.iter().map(String::as_str));
            hosts.push(TestServer::start_in(GAOS, dir.path(), &args));
            dirs.push(dir);
        }
        TestCluster { url, hosts, _dirs: dirs }
    }

    fn base(&self, i: usize) -> &str {
        &self.hosts[i].base_url
    }

    fn operator(&self) -> &str {
        &self.hosts[0].operator_token
    }
}

fn node_of(response: &http::Response) -> String {
    response.header("gaos-node").expect("every answer names its node").to_owned()
}

/// Retry `GET path` on `base` until it answers 200 (a session moving
/// between hosts answers 503 for a moment); returns the answer and how
/// long that took.
fn get_when_served(base: &str, path: &str, token: &str, within: Duration) -> (http::Response, Duration) {
    let started = Instant::now();
    loop {
        let response = http::try_get(base, path, Some(token));
        if let Ok(response) = &response
            && response.status == 200
        {
            return (response.clone(), started.elapsed());
        }
        assert!(started.elapsed() < within, "not served again within {within:?}: {response:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn any_host_answers_any_session_with_the_owners_bytes_and_streams() {
    let cluster = TestCluster::start(3);
    let session = create_session(cluster.base(1), cluster.operator(), &json!({"game": "conformance/hilo"}));
    let alice = session.token("alice");
    let mut bodies = Vec::new();
    for i in 0..3 {
        let response = http::get(cluster.base(i), &session.path("tick"), Some(alice));
        assert_eq!(response.status, 200, "{}", response.text());
        assert_eq!(node_of(&response), "node-1", "the owner serves, whichever host was asked");
        bodies.push(response.body);
    }
    assert!(bodies.iter().all(|b| b == &bodies[0]), "every host answers the owner's bytes");
    // A stream opened at a host that does not own the session carries the
    // owner's deltas.
    let stream = SseReader::open(cluster.base(2), &session.path("stream"), session.token("bob"));
    stream.wait_until_open(Duration::from_secs(5));
    // A whole match, each move sent to another host.
    for round in 0..3 {
        for (i, seat) in ["alice", "bob"].iter().enumerate() {
            let host = (round + i) % 3;
            let envelope = tick(cluster.base(host), &session, session.token(seat));
            let body = submission(&envelope, seat, &format!("{seat}-{round}"), json!({"card": 0}));
            let answer = http::act(cluster.base(host), &session, seat, &body);
            assert!(answer.is_success(), "{}", answer.text());
            assert_eq!(node_of(&answer), "node-1");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while stream.events().iter().filter(|e| e.event != "public").count() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, events) = stream.stop();
    assert_eq!(status, 200);
    assert!(events.len() >= 3, "bob's stream through node-2 saw the match: {events:?}");
    // Finalize at one host, read the replay at another, verify it.
    let finalized = http::post(cluster.base(2), &session.path("finalize"), Some(alice), &json!({"requestId": "fin-1"}));
    assert_eq!(finalized.status, 200, "{}", finalized.text());
    let replay = http::get(cluster.base(0), &session.path("replay"), Some(session.token("bob")));
    assert_eq!(replay.status, 200, "{}", replay.text());
    http::verify_replay(GAOS, cluster.hosts[0].data_dir(), "cluster-match", &replay.text());
    // The games and the metrics answer on every host; a host's metrics
    // count what it forwarded.
    let metrics = http::get(cluster.base(0), "/metrics", Some(cluster.operator())).text();
    assert!(metrics.contains("gaos_proxy_hops_total"), "{metrics}");
}

#[test]
fn a_killed_owners_session_moves_with_its_transcript_tokens_leases_and_pending_intents() {
    let mut cluster = TestCluster::start(3);
    let session = create_session(cluster.base(0), cluster.operator(), &json!({"game": "conformance/hilo"}));
    // Bob holds a controller lease (attached through another host).
    let attached = http::post(
        cluster.base(1),
        &session.path("attach"),
        Some(session.token("bob")),
        &json!({"requestId": "bob-1", "participantId": "bob", "lease": {"durationMs": 120_000}}),
    );
    assert_eq!(attached.status, 200, "{}", attached.text());
    let lease_token =
        attached.json()["extensions"]["gaos.host.lease"]["token"].as_str().expect("a lease token").to_owned();
    let lease_before = http::get(cluster.base(0), &session.path("lease"), Some(session.token("bob"))).json();
    // Alice moves first: her intent is pending when the owner dies.
    let envelope = tick(cluster.base(0), &session, session.token("alice"));
    let pending =
        http::act(cluster.base(0), &session, "alice", &submission(&envelope, "alice", "alice-0", json!({"card": 1})));
    assert_eq!(pending.status, 202, "{}", pending.text());
    let (_, before) = transcript(cluster.base(0), cluster.operator(), &session);

    cluster.hosts[0].kill();
    let (served, took) =
        get_when_served(cluster.base(1), &session.path("tick"), session.token("alice"), Duration::from_secs(10));
    assert_ne!(node_of(&served), "node-0");
    eprintln!("the session was served again {} ms after its owner was killed", took.as_millis());
    assert_eq!(served.json()["revision"], envelope["revision"], "the same revision");
    let (_, after) = transcript(cluster.base(2), cluster.operator(), &session);
    assert_eq!(after, before, "the transcript moved whole");
    // The lease moved with it: the same claim and epoch.
    let lease_after = http::get(cluster.base(2), &session.path("lease"), Some(session.token("bob"))).json();
    assert_eq!(lease_after["epoch"], lease_before["epoch"], "{lease_after}");
    assert_eq!(lease_after["holderId"], lease_before["holderId"], "{lease_after}");
    // Bob completes the window under his lease: alice's pending intent counts.
    let envelope = tick(cluster.base(2), &session, session.token("bob"));
    let body = submission(&envelope, "bob", "bob-0", json!({"card": 0}));
    let resolved = http::send(
        cluster.base(2),
        "POST",
        &session.path("actions"),
        &[
            ("Authorization", &format!("Bearer {}", session.token("bob"))),
            ("Gaos-Lease", &lease_token),
            ("Content-Type", "application/json"),
        ],
        Some(body.to_string().as_bytes()),
    )
    .expect("the act");
    assert_eq!(resolved.status, 200, "{}", resolved.text());
    let (_, events) = transcript(cluster.base(1), cluster.operator(), &session);
    let identities = http::accepted_identities(&events);
    assert_eq!(identities.iter().filter(|(_, s)| s == "alice-0").count(), 1, "{identities:?}");
    assert!(identities.contains(&("bob".into(), "bob-0".into())));
    // Alice's resend of her move is the same answer, not a second move.
    let resend = http::act(
        cluster.base(1),
        &session,
        "alice",
        &submission(
            &json!({"sessionId": session.id, "tickId": format!("{}:0", session.id), "revision": 0}),
            "alice",
            "alice-0",
            json!({"card": 1}),
        ),
    );
    assert!(resend.is_success(), "{}", resend.text());
    assert_eq!(
        http::accepted_identities(&transcript(cluster.base(1), cluster.operator(), &session).1).len(),
        identities.len()
    );
}

#[test]
fn a_stopped_owner_that_wakes_after_its_session_moved_stores_nothing_under_its_old_epoch() {
    let cluster = TestCluster::start(2);
    let session = create_session(cluster.base(0), cluster.operator(), &json!({"game": "conformance/hilo"}));
    let envelope = tick(cluster.base(0), &session, session.token("alice"));
    let pending =
        http::act(cluster.base(0), &session, "alice", &submission(&envelope, "alice", "alice-0", json!({"card": 0})));
    assert_eq!(pending.status, 202, "{}", pending.text());
    let epoch_of =
        |url: &str| TestPostgres::query(url, &format!("SELECT epoch FROM gaos_sessions WHERE id = '{}'", session.id));
    let old_epoch: i64 = epoch_of(&cluster.url).parse().expect("an epoch");

    cluster.hosts[0].signal("STOP");
    std::thread::sleep(Duration::from_millis(LEASE_MS + 500));
    // The other host takes the session over and plays on.
    let envelope = tick(cluster.base(1), &session, session.token("bob"));
    let moved = http::act(cluster.base(1), &session, "bob", &submission(&envelope, "bob", "bob-0", json!({"card": 0})));
    assert_eq!(moved.status, 200, "{}", moved.text());
    assert_eq!(node_of(&moved), "node-1");
    let new_epoch: i64 = epoch_of(&cluster.url).parse().expect("an epoch");
    assert!(new_epoch > old_epoch);

    cluster.hosts[0].signal("CONT");
    // The woken host answers with the new owner's bytes (it forwards; it
    // does not serve its stale memory).
    let (woken, _) =
        get_when_served(cluster.base(0), &session.path("tick"), session.token("alice"), Duration::from_secs(10));
    assert_eq!(node_of(&woken), "node-1", "{}", woken.text());
    let direct = http::get(cluster.base(1), &session.path("tick"), Some(session.token("alice")));
    assert_eq!(woken.body, direct.body);
    // A move sent to the woken host lands once, at the owner.
    let envelope = tick(cluster.base(0), &session, session.token("alice"));
    let next =
        http::act(cluster.base(0), &session, "alice", &submission(&envelope, "alice", "alice-1", json!({"card": 0})));
    assert_eq!(next.status, 202, "{}", next.text());
    assert_eq!(node_of(&next), "node-1");
    // No event was stored under the old epoch after the move.
    let last_old = TestPostgres::query(
        &cluster.url,
        &format!(
            "SELECT coalesce(max(seq), -1) FROM gaos_events WHERE session_id = '{}' AND epoch = {old_epoch}",
            session.id
        ),
    );
    let first_new = TestPostgres::query(
        &cluster.url,
        &format!("SELECT min(seq) FROM gaos_events WHERE session_id = '{}' AND epoch = {new_epoch}", session.id),
    );
    let (last_old, first_new): (i64, i64) = (last_old.parse().expect("seq"), first_new.parse().expect("seq"));
    assert!(last_old < first_new, "old epoch events end at {last_old}, new ones start at {first_new}");
    let old_after_move = TestPostgres::query(
        &cluster.url,
        &format!(
            "SELECT count(*) FROM gaos_events WHERE session_id = '{}' AND epoch < {new_epoch} AND seq >= {first_new}",
            session.id
        ),
    );
    assert_eq!(old_after_move, "0");
}

/// A turn deadline is durable, not a fresh turn per host: the session's new
/// owner fires the timeout at the deadline the old owner armed (on the
/// database's clock), not a whole turn after it took the session over.
#[test]
fn a_turn_deadline_survives_its_session_moving_to_another_host() {
    const TURN_MS: u64 = 6_000;
    let mut cluster = TestCluster::start(2);
    let created_at = Instant::now();
    let session = create_session(
        cluster.base(0),
        cluster.operator(),
        &json!({"game": "conformance/tictactoe", "level": {"board": ".........", "first": "x"},
                "timeouts": {"turnMs": TURN_MS}}),
    );
    let x = session.token("x").to_owned();
    assert_eq!(node_of(&http::get(cluster.base(0), &session.path("tick"), Some(&x))), "node-0");
    cluster.hosts[0].kill();
    let (served, _) = get_when_served(cluster.base(1), &session.path("tick"), &x, Duration::from_secs(10));
    assert_eq!(node_of(&served), "node-1");
    let claimed_at = Instant::now();
    let x_timed_out = || {
        let (_, events) = transcript(cluster.base(1), cluster.operator(), &session);
        events.iter().any(|e| e["kind"] == json!("timeout") && e["participantId"] == json!("x"))
    };
    // A fresh turn would time out TURN_MS after the claim; the durable
    // deadline expires TURN_MS after the create, well before that.
    let fresh_turn_ends = claimed_at + Duration::from_millis(TURN_MS);
    while !x_timed_out() {
        assert!(
            Instant::now() + Duration::from_millis(500) < fresh_turn_ends,
            "x's turn did not time out at its deadline ({TURN_MS} ms after the create, {} ms before the claim)",
            claimed_at.duration_since(created_at).as_millis()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        created_at.elapsed() >= Duration::from_millis(TURN_MS - 200),
        "the timeout came early: {} ms after the create",
        created_at.elapsed().as_millis()
    );
}

/// One JSON-RPC message to `/mcp` of `base` as `token`: the answer's
/// message (the transport answers JSON or one SSE `data:` line) and the
/// MCP session id it names.
fn mcp(base: &str, token: &str, session: Option<&str>, message: &serde_json::Value) -> (serde_json::Value, String) {
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    let body = message.to_string();
    let answer = http::send(base, "POST", "/mcp", &headers, Some(body.as_bytes())).expect("POST /mcp");
    assert!(answer.is_success(), "{}: {}", message["method"], answer.text());
    let id = answer.header("mcp-session-id").unwrap_or(session.unwrap_or_default()).to_owned();
    let text = answer.text();
    // An SSE answer may open with an empty priming event.
    let json = match text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).find(|d| !d.is_empty()) {
        Some(data) => data.to_owned(),
        None if text.contains("data:") => String::new(),
        None => text.trim().to_owned(),
    };
    (if json.is_empty() { serde_json::Value::Null } else { serde_json::from_str(&json).expect("JSON-RPC") }, id)
}

/// `/mcp` of a host that does not own the session drives the seat there:
/// the tools' calls are forwarded to the owner like any other request.
#[test]
fn mcp_on_a_host_that_does_not_own_the_session_plays_the_seat() {
    let cluster = TestCluster::start(2);
    let session = create_session(cluster.base(0), cluster.operator(), &json!({"game": "conformance/hilo"}));
    let alice = session.token("alice");
    let (init, id) = mcp(
        cluster.base(1),
        alice,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                "capabilities": {}, "clientInfo": {"name": "cluster-test", "version": "1"}}}),
    );
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    mcp(cluster.base(1), alice, Some(&id), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |n: u64, tool: &str, arguments: serde_json::Value| {
        let (answer, _) = mcp(
            cluster.base(1),
            alice,
            Some(&id),
            &json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
        );
        assert_ne!(answer["result"]["isError"], json!(true), "{tool}: {answer}");
        answer["result"].clone()
    };
    let observed = call(2, "observe", json!({}));
    assert!(observed.to_string().contains("legal"), "{observed}");
    let acted = call(3, "act", json!({"index": 0}));
    assert!(acted.is_object(), "{acted}");
    // The move is the owner's: in its transcript, once.
    let (_, events) = transcript(cluster.base(0), cluster.operator(), &session);
    let alices: Vec<_> = http::accepted_identities(&events).into_iter().filter(|(seat, _)| seat == "alice").collect();
    assert_eq!(alices.len(), 1, "{alices:?}");
    let tick = http::get(cluster.base(0), &session.path("tick"), Some(alice));
    assert_eq!(node_of(&tick), "node-0", "the session did not move");
}

/// A host that does not serve a session's game module never claims it: the
/// killed owner's session answers `409 module_changed` naming the module
/// (and stays the owner's) until a host with the same module takes it.
#[test]
fn a_host_without_the_sessions_module_does_not_claim_it() {
    let module = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance/modules/counter.mjs");
    let mut cluster =
        TestCluster::start_with(2, |i| if i == 0 { vec!["--game".into(), module.into()] } else { vec![] });
    let session = create_session(cluster.base(0), cluster.operator(), &json!({"game": "conformance/counter"}));
    let a = session.token("a").to_owned();
    assert_eq!(http::get(cluster.base(0), &session.path("tick"), Some(&a)).status, 200);
    cluster.hosts[0].kill();
    std::thread::sleep(Duration::from_millis(LEASE_MS + 500));
    let refused = http::get(cluster.base(1), &session.path("tick"), Some(&a));
    assert_eq!(refused.status, 409, "{}", refused.text());
    assert_eq!(refused.json()["code"], json!("module_changed"), "{}", refused.text());
    assert!(refused.text().contains("sha256"), "{}", refused.text());
    let owner =
        TestPostgres::query(&cluster.url, &format!("SELECT owner FROM gaos_sessions WHERE id = '{}'", session.id));
    assert_eq!(owner, "node-0", "not claimed by a host without the module");
}
