//! The pages show a game's own picture and where each seat stands (issue 17
//! items 1, 2 and 5), in a real headless Chromium against `gaos serve
//! --game pictured.mjs`: the watch page shows the module's SVG in a
//! sandboxed frame and which seat submitted and which is awaited, with each
//! seat's lease; the play page shows the seat's own picture; the operator's
//! list shows every seat's turn and lease. The spectator's seat status holds
//! nothing of what a seat submitted.

use std::path::PathBuf;
use std::time::Duration;

use gaos_testkit::browser::Browser;
use gaos_testkit::http::{get, post};
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

fn pictured() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../gaos-module/tests/modules/pictured.mjs")
        .to_string_lossy()
        .into_owned()
}

fn screenshot(browser: &Browser, name: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots").join(name);
    browser.screenshot(&path);
}

fn act(server: &TestServer, id: &str, seat: &str, token: &str, command: Value, n: usize) -> Value {
    let envelope = get(server.base_url(), &format!("/v1/sessions/{id}/tick"), Some(token)).json();
    let body = json!({
        "protocol": "gaos.ticks", "protocolVersion": "1.0",
        "sessionId": id, "tickId": envelope["tickId"], "revision": envelope["revision"],
        "participantId": seat, "submissionId": format!("{seat}:test:{n}"), "command": command,
    });
    let answer = post(server.base_url(), &format!("/v1/sessions/{id}/actions"), Some(token), &body);
    assert!(answer.is_success(), "act {command}: {}", answer.text());
    answer.json()
}

/// The text of the SVG element `css` inside the page's picture frame.
fn picture_text(browser: &Browser, container: &str, css: &str) -> String {
    let frame = browser.wait_for(&format!("{container} iframe.picture"), WAIT);
    assert_eq!(browser.attribute(&frame, "sandbox").as_deref(), Some(""), "the frame runs nothing");
    browser.enter_frame(&frame);
    let text = browser.find(css).map(|e| browser.text(&e));
    browser.leave_frame();
    text.unwrap_or_else(|| panic!("the frame shows no {css}; page: {}", browser.page_text()))
}

#[test]
fn the_pages_show_the_modules_picture_and_who_submitted_and_who_is_awaited() {
    let module = pictured();
    let server = TestServer::start_with(env!("CARGO_BIN_EXE_gaos"), &["--game", &module]);
    let created =
        post(server.base_url(), "/v1/sessions", Some(server.operator_token()), &json!({"game": "test/pictured"}));
    assert!(created.is_success(), "{}", created.text());
    let created = created.json();
    let id = created["sessionId"].as_str().unwrap().to_owned();
    let creds = &created["extensions"]["gaos.host.credentials"];
    let (east, west) = (creds["seats"]["east"].as_str().unwrap(), creds["seats"]["west"].as_str().unwrap());
    let spectator = creds["spectator"].as_str().unwrap();

    // Watch: the module's SVG of the public view, both seats awaited.
    let browser = Browser::start();
    browser.goto(&format!("{}/sessions/{id}#token={spectator}", server.base_url()));
    browser.wait_for("#seat-states tr[data-seat=\"west\"]", WAIT);
    assert_eq!(picture_text(&browser, "#view", "#duel-score"), "east 0 : 0 west");
    let turn = |seat: &str| format!("document.querySelector('#seat-states tr[data-seat=\"{seat}\"] td').textContent");
    browser.wait_until(&format!("{} === 'awaited' && {} === 'awaited'", turn("east"), turn("west")), WAIT);

    // East submits over HTTP: within the polling second the page says so,
    // and that west is awaited; east now holds a claim through its token.
    act(&server, &id, "east", east, json!({"card": 0}), 0);
    let shown =
        browser.wait_until(&format!("{} === 'submitted' && {} === 'awaited'", turn("east"), turn("west")), WAIT);
    eprintln!("the watch page showed east's submission after {shown:?}");
    assert!(shown < Duration::from_millis(2500), "east's submission took {shown:?} to show");
    let lease = browser.text(&browser.find("#seat-states tr[data-seat=\"east\"] td:last-child").unwrap());
    assert!(lease.starts_with("active · seat token · until "), "east's lease: {lease}");

    // The spectator's seat status says who submitted, never what.
    let status = get(server.base_url(), &format!("/v1/sessions/{id}/seats"), Some(spectator));
    assert_eq!(status.status, 200, "{}", status.text());
    let status = status.json();
    assert_eq!(status["game"], json!("test/pictured"));
    assert_eq!(status["seats"][0]["seat"], json!("east"));
    assert_eq!(status["seats"][0]["window"], json!("submitted"));
    assert_eq!(status["seats"][1]["window"], json!("awaited"));
    assert_eq!(status["seats"][1]["lease"], Value::Null, "west holds no claim yet");
    let text = status.to_string();
    assert!(!text.contains("card") && !text.contains("hand"), "nothing of the submission: {text}");
    // The other session's token may not look.
    let other =
        post(server.base_url(), "/v1/sessions", Some(server.operator_token()), &json!({"game": "test/pictured"}))
            .json();
    let other_spectator = other["extensions"]["gaos.host.credentials"]["spectator"].as_str().unwrap();
    let refused = get(server.base_url(), &format!("/v1/sessions/{id}/seats"), Some(other_spectator));
    assert_eq!(refused.status, 403, "{}", refused.text());

    // West completes the round: the picture moves on.
    act(&server, &id, "west", west, json!({"card": 0}), 0);
    browser.wait_until(&format!("{} === 'awaited' && {} === 'awaited'", turn("east"), turn("west")), WAIT);
    let public = get(server.base_url(), &format!("/v1/sessions/{id}/tick"), Some(spectator)).json();
    let score = &public["tick"]["score"];
    let expected = format!("east {} : {} west", score["east"], score["west"]);
    let deadline = std::time::Instant::now() + WAIT;
    while picture_text(&browser, "#view", "#duel-score") != expected {
        assert!(std::time::Instant::now() < deadline, "the picture did not move to {expected}");
        std::thread::sleep(Duration::from_millis(50));
    }
    screenshot(&browser, "watch-picture.png");

    // Play as east: the picture of east's own view shows east's hand.
    browser.goto(&format!("{}/sessions/{id}/play#token={east}&seat=east", server.base_url()));
    browser.wait_for("button.action", WAIT);
    let hand = get(server.base_url(), &format!("/v1/sessions/{id}/tick"), Some(east)).json()["tick"]["hand"].clone();
    let frame = browser.wait_for("#view iframe.picture", WAIT);
    browser.enter_frame(&frame);
    let cards: Vec<String> = browser.find_all("text[aria-label^=\"card \"]").iter().map(|c| browser.text(c)).collect();
    browser.leave_frame();
    let expected: Vec<String> = hand.as_array().unwrap().iter().map(|v| v.to_string()).collect();
    assert_eq!(cards, expected, "east's picture shows east's hand");

    // The operator's list: every seat's turn and lease.
    browser.goto(&format!("{}/#token={}", server.base_url(), server.operator_token()));
    let row = browser.wait_for(&format!("tr[data-session=\"{id}\"] li[data-seat=\"east\"]"), WAIT);
    let east_row = browser.text(&row);
    assert!(east_row.contains("awaited") && east_row.contains("lease active · seat token"), "{east_row}");
    let west_row = browser.text(&browser.find(&format!("tr[data-session=\"{id}\"] li[data-seat=\"west\"]")).unwrap());
    assert!(west_row.contains("lease active · seat token"), "west acted, so holds a claim now: {west_row}");
}
