//! The web pages of `gaos serve` in a real headless Chromium (issue 17
//! acceptance 1–3): `/` lists and creates sessions, a person plays a whole
//! hilo match by clicking against a seat another client drives, and every
//! answer the page received is searched for the other seat's hidden hand;
//! the watch page shows a move made over HTTP within a second; the replay
//! viewer steps through a finished maze episode at the positions the host
//! reported live. Screenshots go to docs/screenshots/ for the README.
//!
//! Needs `chromium` and `chromium-driver` (scripts/test installs them); a
//! missing browser fails with a message, never skips. Every wait is bounded.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gaos_testkit::browser::Browser;
use gaos_testkit::http::{get, post, post_bytes};
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

fn server() -> TestServer {
    TestServer::start(env!("CARGO_BIN_EXE_gaos"))
}

fn screenshot(browser: &Browser, name: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots").join(name);
    browser.screenshot(&path);
}

/// Create a session as the operator; answers (id, seat tokens, spectator token).
fn create(server: &TestServer, game: &str, level: Option<&str>) -> (String, Value, String) {
    let mut body = json!({"game": game});
    if let Some(level) = level {
        body["levelId"] = json!(level);
    }
    let answer = post(server.base_url(), "/v1/sessions", Some(server.operator_token()), &body);
    assert!(answer.is_success(), "create {game}: {}", answer.text());
    let answer = answer.json();
    let creds = &answer["extensions"]["gaos.host.credentials"];
    (
        answer["sessionId"].as_str().unwrap().to_owned(),
        creds["seats"].clone(),
        creds["spectator"].as_str().unwrap().to_owned(),
    )
}

fn tick(server: &TestServer, id: &str, token: &str) -> Value {
    let answer = get(server.base_url(), &format!("/v1/sessions/{id}/tick"), Some(token));
    assert!(answer.is_success(), "tick: {}", answer.text());
    answer.json()
}

fn act(server: &TestServer, envelope: &Value, seat: &str, token: &str, command: Value, n: usize) -> Value {
    let body = json!({
        "protocol": "gaos.ticks", "protocolVersion": "1.0",
        "sessionId": envelope["sessionId"], "tickId": envelope["tickId"], "revision": envelope["revision"],
        "participantId": seat, "submissionId": format!("{seat}:test:{n}"), "command": command,
    });
    let id = envelope["sessionId"].as_str().unwrap();
    let answer = post(server.base_url(), &format!("/v1/sessions/{id}/actions"), Some(token), &body);
    assert!(answer.is_success(), "act {command}: {}", answer.text());
    answer.json()
}

#[test]
fn home_lists_the_games_and_sessions_and_creates_a_session() {
    let server = server();
    let (existing, _, _) = create(&server, "conformance/tictactoe", None);
    let browser = Browser::start();
    let started = Instant::now();
    browser.goto(&format!("{}/#token={}", server.base_url(), server.operator_token()));
    browser.wait_for(&format!("tr[data-session=\"{existing}\"]"), WAIT);
    let load_ms = browser.execute(
        "const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime;",
        vec![],
    );
    eprintln!(
        "home page: load event after {load_ms} ms (navigation timing), sessions listed after {:?}",
        started.elapsed()
    );
    assert!(load_ms.as_f64().is_some_and(|ms| ms < 1000.0), "the home page took {load_ms} ms to load");
    assert!(!browser.url().contains("token="), "the token is taken out of the address bar: {}", browser.url());
    let games = browser.text(&browser.wait_for("ul.games", WAIT));
    for game in ["conformance/hilo", "conformance/tictactoe", "gaos/maze", "conformance/race", "conformance/sealed"] {
        assert!(games.contains(game), "{game} is offered: {games}");
    }
    // Create a maze session at level "small" from the form.
    browser.execute("const g = document.getElementById('create-game'); g.value = 'gaos/maze'; g.dispatchEvent(new Event('change'));", vec![]);
    browser.execute("document.getElementById('create-level').value = 'small';", vec![]);
    browser.click(&browser.wait_for("#create-button", WAIT));
    let play = browser.wait_for("a.play-link[data-seat=\"player\"]", WAIT);
    let href = browser.attribute(&play, "href").unwrap();
    assert!(href.contains("/play#token=gaos_seat_"), "the play link carries the seat token in its fragment: {href}");
    let created = browser.text(&browser.wait_for(".created h3", WAIT));
    let new_id = created.split_whitespace().nth(1).unwrap().to_owned();
    browser.wait_for(&format!("tr[data-session=\"{new_id}\"]"), WAIT);
    let listed = get(server.base_url(), "/v1/sessions", Some(server.operator_token())).json();
    let row = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == json!(new_id))
        .expect("the new session is on the host");
    assert_eq!(row["game"], json!("gaos/maze"));
    // The text filter narrows the list to the maze session.
    let filter = browser.wait_for("#filter-text", WAIT);
    browser.type_text(&filter, "maze");
    browser.wait_until(&format!("!document.querySelector('tr[data-session=\"{existing}\"]')"), WAIT);
    assert!(browser.find(&format!("tr[data-session=\"{new_id}\"]")).is_some());
    screenshot(&browser, "home.png");
    // The list's Watch link works in this tab: create kept the spectator token.
    browser.click(&browser.wait_for(&format!("tr[data-session=\"{new_id}\"] a"), WAIT));
    browser.wait_for("table.maze", WAIT);
}

/// Drives `seat` over HTTP: a random legal card whenever it is awaited.
fn http_seat(
    server_url: String,
    id: String,
    seat: &'static str,
    token: String,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut moves = 0;
        let mut last_revision = None;
        let mut rng = 0x9e37_79b9_u32;
        while !stop.load(Ordering::Relaxed) {
            let envelope = get(&server_url, &format!("/v1/sessions/{id}/tick"), Some(&token)).json();
            if envelope["tick"]["done"] == json!(true) {
                return moves;
            }
            let legal = envelope["tick"]["legalActions"].as_array().cloned().unwrap_or_default();
            let mine_pending = envelope["kind"] == json!("pending")
                && envelope["submittedParticipants"].as_array().is_some_and(|s| s.contains(&json!(seat)));
            if !legal.is_empty() && !mine_pending && last_revision != Some(envelope["revision"].clone()) {
                rng ^= rng << 13;
                rng ^= rng >> 17;
                rng ^= rng << 5;
                let command = legal[rng as usize % legal.len()].clone();
                let body = json!({
                    "protocol": "gaos.ticks", "protocolVersion": "1.0", "sessionId": id, "tickId": envelope["tickId"],
                    "revision": envelope["revision"], "participantId": seat, "submissionId": format!("{seat}:{moves}"), "command": command,
                });
                let answer = post(&server_url, &format!("/v1/sessions/{id}/actions"), Some(&token), &body);
                assert!(answer.is_success(), "{seat} acts: {}", answer.text());
                last_revision = Some(envelope["revision"].clone());
                moves += 1;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        moves
    })
}

#[test]
fn a_person_plays_a_whole_hilo_match_by_clicking_and_never_receives_the_other_hand() {
    let server = server();
    let hand = |id: &str, token: &str| -> Vec<i64> {
        tick(&server, id, token)["tick"]["hand"].as_array().unwrap().iter().map(|c| c.as_i64().unwrap()).collect()
    };
    // The host picks the seed, and now and then deals both seats the same
    // cards; then nothing below could tell bob's hand from alice's, so deal
    // again until the hands differ as multisets.
    let (id, alice, bob, alice_hand, bob_hand) = (0..50)
        .find_map(|_| {
            let (id, seats, _) = create(&server, "conformance/hilo", None);
            let alice = seats["alice"].as_str().unwrap().to_owned();
            let bob = seats["bob"].as_str().unwrap().to_owned();
            let (alice_hand, bob_hand) = (hand(&id, &alice), hand(&id, &bob));
            let sorted = |h: &[i64]| {
                let mut h = h.to_vec();
                h.sort_unstable();
                h
            };
            (sorted(&alice_hand) != sorted(&bob_hand)).then_some((id, alice, bob, alice_hand, bob_hand))
        })
        .expect("some deal gives the seats different hands");
    let stop = Arc::new(AtomicBool::new(false));
    let bob_thread = http_seat(server.base_url().to_owned(), id.clone(), "bob", bob, Arc::clone(&stop));

    let browser = Browser::start();
    browser.goto(&format!("{}/sessions/{id}/play#token={alice}&seat=alice", server.base_url()));
    browser.wait_for("button.action", WAIT);
    let name = browser.text(&browser.find("button.action").unwrap());
    assert!(
        name.contains(&format!("Play card {}", alice_hand[0])),
        "a legal action's button is named by the action: {name}"
    );
    screenshot(&browser, "play.png");
    let mut clicks = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the match did not finish; page: {}", browser.page_text());
        let status = browser.text(&browser.wait_for("#status", WAIT));
        if status.starts_with("Game over") {
            break;
        }
        let enabled = browser.find("button.action:not([disabled])");
        if let Some(button) = enabled {
            let cards = browser.find_all("button.action").len();
            if clicks == 0 {
                // The first move by keyboard: digit 1 presses the first legal action.
                browser.press_key("1");
            } else {
                browser.click(&button);
            }
            clicks += 1;
            // The move is in once the page shows this seat pending, or the
            // round resolved (one card fewer) or the match ended.
            browser.wait_until(
                &format!(
                    "document.getElementById('pending').textContent.includes('Submitted: alice') \
                     || document.querySelectorAll('button.action').length !== {cards} \
                     || document.getElementById('status').textContent.startsWith('Game over')"
                ),
                WAIT,
            );
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    stop.store(true, Ordering::Relaxed);
    let bob_moves = bob_thread.join().unwrap();
    assert_eq!(clicks, alice_hand.len(), "one click per card in alice's hand");
    assert_eq!(bob_moves, alice_hand.len(), "bob played every round");
    let final_view = tick(&server, &id, &alice);
    assert_eq!(final_view["tick"]["done"], json!(true), "the match is over on the host: {final_view}");
    screenshot(&browser, "play-finished.png");

    // Every body the page received: no trace of bob's hand. A `hand` field
    // is alice's own (a part of her dealt hand), and bob's dealt hand never
    // appears as a hand.
    let received = browser.execute("return window.__gaosReceived;", vec![]);
    let received = received.as_array().expect("the page kept what it received");
    assert!(received.len() > 2 * alice_hand.len(), "the page received ticks and stream events: {}", received.len());
    let bob_text = format!("\"hand\":{}", serde_json::to_string(&bob_hand).unwrap());
    for body in received {
        let text = body.as_str().unwrap();
        assert!(!text.contains(&bob_text), "bob's hand reached alice's page: {text}");
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            check_hands(&value, &alice_hand, text);
        }
    }
}

/// Every `hand` in `value` is a sub-multiset of alice's dealt hand, and no
/// object speaks for seat bob with a hand.
fn check_hands(value: &Value, alice_hand: &[i64], text: &str) {
    match value {
        Value::Object(map) => {
            if let Some(hand) = map.get("hand").and_then(Value::as_array) {
                let mut left = alice_hand.to_vec();
                for card in hand {
                    let card = card.as_i64().unwrap();
                    let at = left.iter().position(|c| *c == card);
                    assert!(at.is_some(), "a hand that is not alice's reached her page: {text}");
                    left.remove(at.unwrap());
                }
                assert_ne!(map.get("seat"), Some(&json!("bob")), "bob's view reached alice's page: {text}");
            }
            map.values().for_each(|v| check_hands(v, alice_hand, text));
        }
        Value::Array(items) => items.iter().for_each(|v| check_hands(v, alice_hand, text)),
        _ => {}
    }
}

#[test]
fn the_watch_page_shows_a_move_made_over_http_within_a_second() {
    let server = server();
    let (id, seats, spectator) = create(&server, "conformance/tictactoe", None);
    let x = seats["x"].as_str().unwrap().to_owned();
    let o = seats["o"].as_str().unwrap().to_owned();
    let browser = Browser::start();
    browser.goto(&format!("{}/sessions/{id}#token={spectator}", server.base_url()));
    browser.wait_for("table.ttt", WAIT);
    browser.wait_until("document.getElementById('connection').textContent.startsWith('Live')", WAIT);
    let centre = "document.querySelector('table.ttt td[aria-label=\"row 2 column 2: x\"]')";
    assert!(browser.execute(&format!("return !!{centre}"), vec![]) == json!(false));
    let moved = Instant::now();
    let envelope = tick(&server, &id, &x);
    act(&server, &envelope, "x", &x, json!({"cell": 4}), 0);
    browser.wait_until(centre, Duration::from_secs(1));
    eprintln!("watch page showed the move {:?} after the HTTP answer", moved.elapsed());
    assert!(moved.elapsed() < Duration::from_secs(1), "the watch page took {:?}", moved.elapsed());
    // Play on to a win for x (cells 4, 0, 3, 1, 5): the page shows the result and offers the replay.
    for (n, (seat, token, cell)) in [("o", &o, 0), ("x", &x, 3), ("o", &o, 1), ("x", &x, 5)].into_iter().enumerate() {
        let envelope = tick(&server, &id, token);
        act(&server, &envelope, seat, token, json!({"cell": cell}), n + 1);
    }
    let result = browser.text(&browser.wait_for("#result", WAIT));
    assert!(result.contains("x"), "the result names the winner: {result}");
    assert!(browser.find("#replay-link").is_some(), "a finished session offers its replay");
    let history = browser.find_all("#history li").len();
    assert!(history >= 6, "the history lists the transitions: {history}");
    screenshot(&browser, "watch.png");
}

#[test]
fn reloading_the_watch_page_again_and_again_keeps_it_live() {
    // Each load opens a stream; a page being unloaded must let go of its
    // own, or the browser's few connections per host run out and a later
    // load waits for ever.
    let server = server();
    let (id, _seats, spectator) = create(&server, "conformance/tictactoe", None);
    let browser = Browser::start();
    for n in 0..12 {
        browser.goto(&format!("{}/sessions/{id}?load={n}#token={spectator}", server.base_url()));
        browser.wait_for("table.ttt", WAIT);
        browser.wait_until("document.getElementById('connection').textContent.startsWith('Live')", WAIT);
    }
}

#[test]
fn the_replay_viewer_steps_through_a_finished_maze_episode() {
    let server = server();
    let (id, seats, _) = create(&server, "gaos/maze", Some("tiny"));
    let player = seats["player"].as_str().unwrap().to_owned();
    // Walk the maze over HTTP, recording the position the host reports after each move.
    let mut envelope = tick(&server, &id, &player);
    let mut positions = vec![envelope["tick"]["position"].clone()];
    let mut rng = 7u32;
    let mut n = 0;
    while envelope["tick"]["done"] != json!(true) {
        let legal = envelope["tick"]["legalActions"].as_array().unwrap().clone();
        rng = rng.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        envelope = act(&server, &envelope, "player", &player, legal[(rng >> 16) as usize % legal.len()].clone(), n);
        positions.push(envelope["tick"]["position"].clone());
        n += 1;
        assert!(n < 500, "the maze episode ends");
    }
    let replay = get(server.base_url(), &format!("/v1/sessions/{id}/replay"), Some(&player));
    assert!(replay.is_success(), "replay: {}", replay.text());

    let browser = Browser::start();
    browser.goto(&format!("{}/replay#session={id}&token={player}", server.base_url()));
    let verdict = browser.text(&browser.wait_for("#verdict.ok", WAIT));
    assert!(verdict.contains("accepted-unsigned"), "{verdict}");
    screenshot(&browser, "replay.png");
    for (step, expected) in positions.iter().enumerate() {
        browser.wait_until(&format!("document.getElementById('scrubber').value === '{step}'"), WAIT);
        let here = browser.execute("const c = document.querySelector('#public-view table.maze td.here'); return c ? [Number(c.dataset.x), Number(c.dataset.y)] : null;", vec![]);
        assert_eq!(here, json!([expected["x"], expected["y"]]), "the position at step {step}");
        if step + 1 < positions.len() {
            browser.click(&browser.find("#step-forward").unwrap());
        }
    }
    assert_eq!(
        browser.attribute(&browser.find("#step-forward").unwrap(), "disabled").as_deref(),
        Some("true"),
        "the last step is the end"
    );

    // The same replay opened from a file: same verdict, same number of steps.
    let dir = TempDir::new("web-replay");
    let file = dir.path().join("maze.gaos-replay.jsonl");
    std::fs::write(&file, &replay.body).unwrap();
    browser.goto(&format!("{}/replay", server.base_url()));
    browser.type_text(&browser.wait_for("#replay-file", WAIT), file.to_str().unwrap());
    browser.wait_for("#verdict.ok", WAIT);
    browser.wait_until(&format!("document.getElementById('scrubber').max === '{}'", positions.len() - 1), WAIT);
    // A body that is not a replay: an error in words, nothing else.
    let bad = post_bytes(server.base_url(), "/v1/replays/frames", Some(&player), b"not a replay");
    assert_eq!(bad.status, 422, "{}", bad.text());
    assert_eq!(bad.json()["code"], json!("malformed_replay"));
    let anonymous = post_bytes(server.base_url(), "/v1/replays/frames", None, &replay.body);
    assert_eq!(anonymous.status, 401, "{}", anonymous.text());
}

/// A `gaos serve` on a fixed port, so it can come back where the page looks for it.
struct FixedServer {
    child: std::process::Child,
    base: String,
}

impl FixedServer {
    fn start(dir: &std::path::Path, port: u16) -> FixedServer {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_gaos"))
            .args(["serve", "--data"])
            .arg(dir)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start gaos serve");
        let base = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while !gaos_testkit::http::try_get(&base, "/healthz", None).is_ok_and(|r| r.status == 200) {
            assert!(started.elapsed() < Duration::from_secs(30), "gaos serve did not start on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        FixedServer { child, base }
    }
}

impl Drop for FixedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_watch_page_recovers_from_a_dropped_stream() {
    let dir = TempDir::new("web-drop");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = FixedServer::start(dir.path(), port);
    let operator = std::fs::read_to_string(dir.path().join("operator-token")).unwrap().trim().to_owned();
    let answer = post(&server.base, "/v1/sessions", Some(&operator), &json!({"game": "conformance/tictactoe"})).json();
    let id = answer["sessionId"].as_str().unwrap().to_owned();
    let creds = &answer["extensions"]["gaos.host.credentials"];
    let x = creds["seats"]["x"].as_str().unwrap().to_owned();
    let spectator = creds["spectator"].as_str().unwrap().to_owned();

    let browser = Browser::start();
    browser.goto(&format!("{}/sessions/{id}#token={spectator}", server.base));
    browser.wait_until("document.getElementById('connection').textContent.startsWith('Live')", WAIT);
    drop(server);
    browser.wait_until("document.getElementById('connection').textContent.startsWith('Stream dropped')", WAIT);
    // The host comes back (same data, same port) and a move is made: the page
    // reconnects on its own and shows it.
    let server = FixedServer::start(dir.path(), port);
    let envelope = get(&server.base, &format!("/v1/sessions/{id}/tick"), Some(&x)).json();
    let body = json!({
        "protocol": "gaos.ticks", "protocolVersion": "1.0", "sessionId": id, "tickId": envelope["tickId"],
        "revision": envelope["revision"], "participantId": "x", "submissionId": "x:after-restart", "command": {"cell": 4},
    });
    let moved = post(&server.base, &format!("/v1/sessions/{id}/actions"), Some(&x), &body);
    assert!(moved.is_success(), "{}", moved.text());
    browser.wait_until(
        "document.querySelector('table.ttt td[aria-label=\"row 2 column 2: x\"]')",
        Duration::from_secs(15),
    );
    browser.wait_until("document.getElementById('connection').textContent.startsWith('Live')", WAIT);
}

#[test]
fn a_seat_can_enter_its_token_and_name_in_the_form_and_errors_end_nothing() {
    let server = server();
    let (id, seats, _) = create(&server, "conformance/tictactoe", None);
    let x = seats["x"].as_str().unwrap();
    let browser = Browser::start();
    browser.goto(&format!("{}/sessions/{id}/play", server.base_url()));
    browser.type_text(&browser.wait_for("#token-input", WAIT), x);
    browser.type_text(&browser.wait_for("#seat-input", WAIT), "x");
    browser.click(&browser.find("form.token-form button[type=submit]").unwrap());
    browser.wait_for("button.action", WAIT);
    // A command the game refuses: the error is shown in words, the page goes on.
    browser.execute("document.getElementById('editor').open = true;", vec![]);
    let editor = browser.wait_for("#command-json", WAIT);
    browser.execute("document.getElementById('command-json').value = '';", vec![]);
    browser.type_text(&editor, "{\"cell\": 99}");
    browser.click(&browser.find("#send-json").unwrap());
    browser.wait_until("!document.getElementById('alert').hidden", WAIT);
    let alert = browser.text(&browser.find("#alert").unwrap());
    assert!(!alert.is_empty() && !alert.contains("undefined"), "the refusal in words: {alert}");
    // Then a legal move by its button: the host has x in the centre.
    let centre = browser
        .find_all("button.action")
        .into_iter()
        .find(|b| browser.text(b).contains("Mark cell 5"))
        .expect("a button named by its action");
    browser.click(&centre);
    browser.wait_until("document.getElementById('alert').hidden", WAIT);
    let board = tick(&server, &id, x)["tick"]["board"].clone();
    assert_eq!(board, json!("....x...."), "the click reached the host");
}

#[test]
fn the_play_page_starts_the_next_level_of_a_run_that_advances_on_reset() {
    let server = server();
    let one_round = json!({"rounds": 1});
    let body = json!({"game": "conformance/counter", "seed": 3, "run": {
        "levels": [{"levelId": "first", "level": one_round}, {"levelId": "second", "level": one_round}],
        "advancePolicy": "play-all-levels", "advanceOn": "reset"}});
    let answer = post(server.base_url(), "/v1/sessions", Some(server.operator_token()), &body);
    assert!(answer.is_success(), "create: {}", answer.text());
    let answer = answer.json();
    let id = answer["sessionId"].as_str().unwrap().to_owned();
    let seats = answer["extensions"]["gaos.host.credentials"]["seats"].clone();
    let (a, b) = (seats["a"].as_str().unwrap(), seats["b"].as_str().unwrap());
    let browser = Browser::start();
    browser.goto(&format!("{}/sessions/{id}/play#token={a}&seat=a", server.base_url()));
    browser.wait_for("button.action", WAIT);
    act(&server, &tick(&server, &id, b), "b", b, json!({"n": 1}), 0);
    // The page re-renders on each stream event (b's move, the resolution),
    // so each button is found again right before it is clicked.
    browser.click_on("button.action", WAIT);
    // The level ended: the page offers the next one, and a press starts it.
    browser.wait_for("#next-level", WAIT);
    assert_eq!(tick(&server, &id, a)["extensions"]["gaos.session.episode"]["index"], json!(0));
    browser.click_on("#next-level", WAIT);
    browser.wait_until("document.querySelector('button.action:not([disabled])') !== null", WAIT);
    let live = tick(&server, &id, a);
    assert_eq!(live["extensions"]["gaos.session.episode"]["index"], json!(1), "{live}");
    assert!(browser.find("#next-level").is_none(), "level 1 is being played");
}
