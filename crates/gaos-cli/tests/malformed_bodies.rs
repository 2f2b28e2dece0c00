//! Strict bodies on every route (issue 15, item 5), against the real server:
//! every route of the host's router (read from its source, so a new route
//! cannot be forgotten here) gets a matrix of malformed bodies — `[]`, `42`,
//! `null`, `"x"`, `true`, `{}` where the route needs fields, an unknown
//! field, wrong types, invalid JSON, an oversized body — and each must be a
//! 4xx `{"error","code"}` that changes nothing: the session's transcript,
//! both seats' leases, the session list and the seat tokens are the same
//! after as before (e.g. `POST /stop` with body `42` must not revoke;
//! `/seats/{seat}/token` must not rotate). Errors from before the handlers
//! (a path that is not UTF-8, stray, duplicate or unknown query parameters,
//! an unknown route, a wrong method, the `/mcp` transport) are JSON too.

use std::collections::BTreeSet;

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const ROUTER_SOURCE: &str = include_str!("../../gaos-host/src/http.rs");

/// `(method, route)` of every `.route(...)` in the host's router.
fn router_routes() -> BTreeSet<(String, String)> {
    let mut routes = BTreeSet::new();
    for line in ROUTER_SOURCE.lines().map(str::trim).filter(|l| l.starts_with(".route(\"")) {
        let path = line.trim_start_matches(".route(\"").split('"').next().expect("a path").to_owned();
        let handlers = line.split_once(',').map(|(_, h)| h).unwrap_or("");
        for method in ["get", "post", "put", "delete", "patch"] {
            if handlers.contains(&format!("{method}(")) {
                routes.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    assert!(routes.len() > 20, "the router's routes were read: {routes:?}");
    routes
}

/// Who calls a route in the matrix.
#[derive(Clone, Copy)]
enum Who {
    Operator,
    Alice,
    Nobody,
}

/// How a route takes its body.
struct Shape {
    method: &'static str,
    route: &'static str,
    who: Who,
    /// `{}` is a valid body (and has effects): not in the matrix.
    empty_object_ok: bool,
    /// Bodies of the right outer shape with a wrong field type.
    wrong_types: Vec<Value>,
}

fn shapes() -> Vec<Shape> {
    let post =
        |route, who, empty_object_ok, wrong_types| Shape { method: "POST", route, who, empty_object_ok, wrong_types };
    let get = |route, who| Shape { method: "GET", route, who, empty_object_ok: true, wrong_types: Vec::new() };
    vec![
        post(
            "/v1/sessions",
            Who::Operator,
            false,
            vec![
                json!({"game": 5}),
                json!({"game": "conformance/hilo", "seed": "x"}),
                json!({"game": "conformance/hilo", "requestId": 1}),
            ],
        ),
        get("/v1/sessions", Who::Operator),
        get("/v1/sessions/{id}/tick", Who::Alice),
        post(
            "/v1/sessions/{id}/actions",
            Who::Alice,
            false,
            vec![
                json!({"participantId": 5}),
                json!({"participantId": "alice", "tickId": 5, "submissionId": "s", "command": {"card": 0}}),
            ],
        ),
        post(
            "/v1/sessions/{id}/attach",
            Who::Alice,
            false,
            vec![
                json!({"requestId": 5}),
                json!({"requestId": "r", "lease": 5}),
                json!({"requestId": "r", "controller": "x"}),
            ],
        ),
        post(
            "/v1/sessions/{id}/finalize",
            Who::Alice,
            false,
            vec![json!({"requestId": 5}), json!({"requestId": "r", "extensions": 5})],
        ),
        post(
            "/v1/sessions/{id}/reset",
            Who::Alice,
            true,
            vec![json!({"seed": "x"}), json!({"seed": -1}), json!({"revision": 1.5}), json!({"levels": 2})],
        ),
        post("/v1/sessions/{id}/seats/{seat}/token", Who::Operator, true, vec![json!({"seat": 5})]),
        post(
            "/v1/sessions/{id}/seat-signature",
            Who::Alice,
            false,
            vec![
                json!({"tick": "0", "clientTime": 1, "prevChainHash": "x", "sig": "y"}),
                json!({"tick": 0, "clientTime": -1, "prevChainHash": "x", "sig": "y"}),
                json!({"tick": 0, "clientTime": 1, "prevChainHash": 5, "sig": "y"}),
                json!({"tick": 0, "clientTime": 1, "prevChainHash": "x", "sig": "y", "seat": "bob"}),
            ],
        ),
        get("/v1/sessions/{id}/snapshot", Who::Alice),
        get("/v1/sessions/{id}/seats", Who::Alice),
        get("/v1/sessions/{id}/stream", Who::Alice),
        get("/v1/sessions/{id}/replay", Who::Alice),
        get("/v1/sessions/{id}/result", Who::Alice),
        get("/v1/sessions/{id}/receipts", Who::Alice),
        get("/v1/sessions/{id}/transcript", Who::Operator),
        get("/v1/sessions/{id}/lease", Who::Alice),
        post("/v1/sessions/{id}/lease/renew", Who::Alice, true, vec![json!({"durationMs": "x"}), json!({"seat": 5})]),
        post("/v1/sessions/{id}/lease/heartbeat", Who::Alice, true, vec![json!({"reason": 5})]),
        post("/v1/sessions/{id}/lease/release", Who::Alice, true, vec![json!({"reason": "x"}), json!({"seat": 5})]),
        post(
            "/v1/sessions/{id}/pause",
            Who::Alice,
            true,
            vec![json!({"reason": 5}), json!({"reason": ""}), json!({"seat": 5})],
        ),
        post("/v1/sessions/{id}/resume", Who::Alice, true, vec![json!({"reason": "x"})]),
        post("/v1/sessions/{id}/stop", Who::Alice, true, vec![json!({"reason": 5}), json!({"reason": []})]),
        post(
            "/v1/sessions/{id}/emergency-stop",
            Who::Operator,
            true,
            vec![json!({"reason": 5}), json!({"reason": {}})],
        ),
        get("/v1/admin/reconcile", Who::Operator),
        get("/v1/games", Who::Alice),
        post(
            "/v1/admin/clock",
            Who::Operator,
            false,
            vec![json!({"advanceMs": "x"}), json!({"advanceMs": -1}), json!({"advanceMs": 1.5})],
        ),
        get("/healthz", Who::Nobody),
        get("/metrics", Who::Nobody),
        get("/openapi.json", Who::Nobody),
    ]
}

struct World {
    base: String,
    operator: String,
    session: Session,
}

impl World {
    fn token(&self, who: Who) -> Option<&str> {
        match who {
            Who::Operator => Some(&self.operator),
            Who::Alice => Some(self.session.token("alice")),
            Who::Nobody => None,
        }
    }

    fn path(&self, route: &str) -> String {
        route.replace("{id}", &self.session.id).replace("{seat}", "alice")
    }

    /// Everything a malformed request must leave as it was.
    fn state(&self) -> Value {
        let lease = |seat: &str| {
            let r = get(&self.base, &self.session.path("lease"), Some(self.session.token(seat)));
            assert_eq!(r.status, 200, "{}", r.text());
            r.json()
        };
        let tick = |seat: &str| get(&self.base, &self.session.path("tick"), Some(self.session.token(seat))).status;
        let transcript = get(&self.base, &self.session.path("transcript"), Some(&self.operator));
        json!({
            "transcript": transcript.text(),
            "leases": [lease("alice"), lease("bob")],
            "tokens": [tick("alice"), tick("bob")],
            "sessions": get(&self.base, "/v1/sessions", Some(&self.operator)).json(),
        })
    }
}

fn send_raw(world: &World, method: &str, path: &str, token: Option<&str>, body: &[u8]) -> Response {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("Accept", "application/json"), ("Content-Type", "application/json")];
    if let Some(auth) = &auth {
        headers.push(("Authorization", auth.as_str()));
    }
    send(&world.base, method, path, &headers, Some(body)).unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}

/// Send `bytes` as they are on a fresh connection; the host's answer.
fn raw_request(base: &str, bytes: &[u8]) -> Response {
    use std::io::{Read, Write};
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).expect("timeout");
    // The host may answer and close before it read everything.
    let _ = stream.write_all(bytes);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.as_bytes().to_vec()).unwrap_or_default();
    Response { status, headers: Vec::new(), body }
}

#[track_caller]
fn assert_json_error(response: &Response, what: &str) -> (u16, String) {
    assert!((400..500).contains(&response.status), "{what}: a 4xx, got {} {}", response.status, response.text());
    let body: Value = serde_json::from_slice(&response.body)
        .unwrap_or_else(|_| panic!("{what}: a JSON body, got {:?}", response.text()));
    let code = body["code"].as_str().unwrap_or_else(|| panic!("{what}: a code: {body}")).to_owned();
    assert!(body["error"].as_str().is_some_and(|e| !e.is_empty()), "{what}: an error message: {body}");
    (response.status, code)
}

#[test]
fn every_route_refuses_malformed_bodies_without_side_effects() {
    let server = TestServer::start_with(GAOS, &["--test-clock"]);
    let world = World {
        base: server.base_url.clone(),
        operator: server.operator_token.clone(),
        session: create_session(
            &server.base_url,
            &server.operator_token,
            // alice holds the creator's claim, so a malformed release (or
            // stop, or pause) that took effect would show in her lease.
            &json!({"game": "conformance/hilo", "seed": 3, "lease": {}}),
        ),
    };
    // Every route of the router is in the matrix.
    let covered: BTreeSet<(String, String)> =
        shapes().iter().map(|s| (s.method.to_owned(), s.route.to_owned())).collect();
    assert_eq!(covered, router_routes(), "the matrix covers exactly the router's routes");

    let before = world.state();
    let oversized = format!("{{\"reason\":\"{}\"}}", "x".repeat(1024 * 1024 + 16)).into_bytes();
    let mut asked = 0;
    for shape in shapes().iter().filter(|s| s.method == "POST") {
        let path = world.path(shape.route);
        let token = world.token(shape.who);
        let mut bodies: Vec<(String, Vec<u8>, u16)> =
            ["[]", "42", "null", "\"x\"", "true", "{\"bogus\":1}", "{", "{\"a\":1,}", "\u{fffd}"]
                .iter()
                .map(|b| ((*b).to_owned(), b.as_bytes().to_vec(), 400))
                .collect();
        bodies.push(("not UTF-8".into(), vec![0x7b, 0xff, 0xfe, 0x7d], 400));
        bodies.push(("oversized".into(), oversized.clone(), 413));
        if !shape.empty_object_ok {
            bodies.push(("{}".into(), b"{}".to_vec(), 400));
        }
        for wrong in &shape.wrong_types {
            bodies.push((wrong.to_string(), wrong.to_string().into_bytes(), 400));
        }
        for (label, body, status) in bodies {
            let what = format!("POST {} with {label}", shape.route);
            let response = send_raw(&world, "POST", &path, token, &body);
            let (got, _) = assert_json_error(&response, &what);
            assert_eq!(got, status, "{what}: {}", response.text());
            asked += 1;
        }
    }
    assert!(asked > 150, "{asked} malformed requests");

    // Before the handlers: paths, queries, routes, methods.
    let alice = world.session.token("alice");
    let mut refusals = vec![
        ("a path that is not UTF-8", get(&world.base, "/v1/sessions/%FF%FE/tick", Some(alice)), 400),
        ("a stray query", get(&world.base, &format!("{}?x=1", world.session.path("tick")), Some(alice)), 400),
        ("an unknown query parameter", get(&world.base, "/v1/sessions?bogus=1", Some(&world.operator)), 400),
        (
            "a duplicate query parameter",
            get(&world.base, &format!("{}?after=0&after=1", world.session.path("snapshot")), Some(alice)),
            400,
        ),
        ("a bad query value", get(&world.base, &format!("{}?after=x", world.session.path("stream")), Some(alice)), 400),
        ("a query that is not UTF-8", get(&world.base, "/v1/sessions?status=%FF", Some(&world.operator)), 400),
        ("an unknown route", get(&world.base, "/v1/nope", None), 404),
        ("a wrong method", send_raw(&world, "DELETE", &world.session.path("tick"), Some(alice), b""), 405),
        ("a wrong method on create", send_raw(&world, "PUT", "/v1/sessions", Some(&world.operator), b"{}"), 405),
    ];
    // The MCP endpoint mounted beside the host's routes.
    let mcp_headers = [
        ("Authorization", format!("Bearer {alice}")),
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
    ];
    let mcp_headers: Vec<(&str, &str)> = mcp_headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mcp = |body: &[u8]| send(&world.base, "POST", "/mcp", &mcp_headers, Some(body)).expect("POST /mcp");
    refusals.push(("/mcp with invalid JSON", mcp(b"{"), 0));
    refusals.push(("/mcp without a token", post_bytes(&world.base, "/mcp", None, b"{}"), 401));
    // What the HTTP layer refuses before any route: a URI over its limit,
    // a head too large, a head that is not HTTP.
    let long_uri = format!("/healthz?{}", "a".repeat(70_000));
    let big_head = format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n", "a".repeat(500_000));
    refusals.push(("a 70 KB URI", send(&world.base, "GET", &long_uri, &[], None).expect("GET"), 414));
    refusals.push(("a 500 KB head", raw_request(&world.base, big_head.as_bytes()), 431));
    refusals.push(("a head that is not HTTP", raw_request(&world.base, b"NOT HTTP AT ALL\r\n\r\n"), 400));
    for (what, response, status) in refusals {
        let (got, _) = assert_json_error(&response, what);
        if status != 0 {
            assert_eq!(got, status, "{what}: {}", response.text());
        }
    }

    assert_eq!(world.state(), before, "no malformed request changed anything");
    // And well-formed calls still work: the matrix did not break the session.
    let stopped = post(&world.base, &world.session.path("stop"), Some(alice), &json!({"reason": "done"}));
    assert_eq!(stopped.status, 200, "{}", stopped.text());
}
