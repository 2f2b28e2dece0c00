//! `render(view, seat)`: the optional picture export of a game module
//! (checked at load, run in the sandbox under the call limits, its failures
//! typed errors that leave the module usable).

mod support;

use std::path::PathBuf;

use gaos_json::Value;
use gaos_kernel::Game;
use gaos_module::{MAX_RENDER_BYTES, ModuleError, ModuleGame};
use support::{advance, fixture, kernel, load, submit, test_limits};

/// `pictured.mjs` and the `duel.mjs` it imports in a fresh directory, with
/// `edit` applied to the picture module.
fn edited_pictured(tag: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gaos-module-render-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("duel.mjs"), dir.join("duel.mjs")).unwrap();
    let source = std::fs::read_to_string(fixture("pictured.mjs")).unwrap();
    let path = dir.join("pictured.mjs");
    std::fs::write(&path, edit(source)).unwrap();
    path
}

fn with_render(tag: &str, body: &str) -> ModuleGame {
    let path = edited_pictured(tag, |s| s.replace("  render,\n", &format!("  render: {body},\n")));
    ModuleGame::load(&path, &test_limits()).unwrap_or_else(|e| panic!("{tag} loads: {e}"))
}

fn render_error(game: &ModuleGame, view: &Value) -> String {
    match game.render(view, None) {
        Some(Err(e)) => e.to_string(),
        other => panic!("a failing render is an error, not {other:?}"),
    }
}

#[test]
fn a_module_renders_the_public_view_and_each_seats_own_hand() {
    let game = load("pictured.mjs");
    let mut session = kernel(&game, "pictured");
    submit(&mut session, "east", "e-0", r#"{"card":0}"#).unwrap();
    submit(&mut session, "west", "w-0", r#"{"card":0}"#).unwrap();
    advance(&mut session).unwrap();

    let public = session.full_view().clone();
    let html = game.render(&public, None).expect("the module has a renderer").expect("it renders");
    assert!(html.starts_with("<svg"), "{html}");
    assert!(html.contains("public view") && html.contains("round 1"), "{html}");
    let east = public.get("score").and_then(|s| s.get("east")).and_then(Value::as_u64).unwrap();
    let west = public.get("score").and_then(|s| s.get("west")).and_then(Value::as_u64).unwrap();
    assert!(html.contains(&format!("east {east} : {west} west")), "{html}");
    assert!(!html.contains("card "), "the public view holds no hand: {html}");

    for seat in ["east", "west"] {
        let view = session.observe(seat).unwrap();
        let hand: Vec<u64> =
            view.get("hand").and_then(Value::as_array).unwrap().iter().filter_map(Value::as_u64).collect();
        let html = game.render(&view, Some(seat)).unwrap().unwrap();
        assert!(html.contains(&format!("{seat}'s view")), "{html}");
        assert_eq!(html.matches("aria-label=\"card ").count(), hand.len(), "{html}");
        for value in hand {
            assert!(html.contains(&format!("aria-label=\"card {value}\"")), "{html}");
        }
    }
}

#[test]
fn a_module_without_render_has_no_renderer() {
    let game = load("duel.mjs");
    let session = kernel(&game, "no-render");
    assert!(game.render(session.full_view(), None).is_none());
}

#[test]
fn a_render_export_that_is_not_a_function_is_refused_at_load() {
    let path = edited_pictured("not-a-function", |s| s.replace("  render,\n", "  render: \"<svg/>\",\n"));
    match ModuleGame::load(&path, &test_limits()) {
        Err(ModuleError::Shape { message, .. }) => {
            assert!(message.contains("export default.render must be a function, not a string"), "{message}");
        }
        other => panic!("a string render is a shape error, not {other:?}"),
    }
}

#[test]
fn render_failures_are_errors_naming_the_call_and_leave_the_module_usable() {
    let game = load("pictured.mjs");
    let view = kernel(&game, "failures").full_view().clone();

    let thrower = with_render("throws", "() => { throw new RangeError(\"no picture today\"); }");
    let message = render_error(&thrower, &view);
    assert_eq!(message, "render(view, seat) of test/pictured threw RangeError: no picture today");

    let number = with_render("number", "() => 42");
    let message = render_error(&number, &view);
    assert!(message.contains("must return a string (HTML or SVG), not a number"), "{message}");

    let endless = with_render("endless", "(view) => { for (;;) {} }");
    let message = render_error(&endless, &view);
    assert!(message.contains("render of test/pictured exceeded the 200 ms call time limit"), "{message}");
    // The instance that crossed the limit is replaced; the reducer still runs.
    let mut session = kernel(&endless, "after-endless");
    submit(&mut session, "east", "e-0", r#"{"card":0}"#).unwrap();

    let huge = with_render("huge", &format!("() => \"x\".repeat({})", MAX_RENDER_BYTES + 1));
    let message = render_error(&huge, &view);
    assert!(message.contains(&format!("at most {MAX_RENDER_BYTES} are shown")), "{message}");

    let clock = with_render("clock", "() => String(Date.now())");
    let message = render_error(&clock, &view);
    assert!(message.contains("Date.now is not available to game modules"), "{message}");
}
