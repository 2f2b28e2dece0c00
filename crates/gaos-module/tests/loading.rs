//! Loading: what a module has (web APIs, ES2023, JavaScript semantics), load
//! errors that name the file and the export, and relative imports.

mod support;

use gaos_kernel::Game;
use gaos_module::{ModuleError, ModuleGame};
use support::{advance, fixture, json, kernel, load, submit, test_limits};

fn load_error(name: &str) -> (ModuleError, String) {
    let error = ModuleGame::load(&fixture(name), &test_limits()).expect_err("the module must be refused");
    let text = error.to_string();
    (error, text)
}

#[test]
fn a_module_has_the_deterministic_web_apis_and_es2023() {
    let game = load("webapis.mjs");
    let session = kernel(&game, "web");
    let probe = session.full_view().get("probe").expect("the probe ran").clone();
    let expected = json(
        r#"{
        "utf8": [104, 195, 169, 226, 130, 172, 240, 159, 152, 128],
        "decoded": "h\u00e9\u20ac\ud83d\ude00",
        "lenient": "a\ufffdb\ufffd",
        "fatal": "TypeError",
        "btoa": "aGVsbG8sIHdvcmxk",
        "atob": "hello, world",
        "cloneIsDeep": true,
        "cloneKeepsCycles": true,
        "cloneMapSet": true,
        "typeofs": {"process": "undefined", "WeakRef": "undefined", "FinalizationRegistry": "undefined",
                    "setTimeout": "function", "fetch": "function", "require": "function", "Date": "function",
                    "console": "object"},
        "es2023": 7,
        "sortsByCodeUnit": ["B", "a", "b", "\u00e9", "\ud83d\ude00", "\uffff"],
        "numbers": ["0.30000000000000004", "1e+21", "0", "9007199254740992", "5e-324"],
        "keyOrder": ["1", "2", "b", "a"]
    }"#,
    );
    assert_eq!(probe, expected);
}

#[test]
fn relative_imports_resolve_from_the_importing_file() {
    let game = load("split/game.mjs");
    assert_eq!(game.seats(), ["left", "right"]);
    let files: Vec<&str> = game.identity().files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, ["game.mjs", "lib/rules.mjs", "seats.mjs"]);
    let mut session = kernel(&game, "split");
    submit(&mut session, "left", "l", r#"{"n":1}"#).unwrap();
    submit(&mut session, "right", "r", r#"{"n":1}"#).unwrap();
    advance(&mut session).unwrap();
    assert_eq!(session.full_view().get("status"), Some(&json(r#""won""#)));
}

#[test]
fn shape_errors_name_the_file_and_the_export() {
    let cases = [
        ("broken/no-default.mjs", "the module has no default export"),
        ("broken/missing-reducer.mjs", "export default is missing the required field `reducer`"),
        ("broken/mistyped-advance.mjs", "export default.reducer.advance must be a function, not a number"),
        ("broken/no-seats.mjs", "export default.seats must be an array, not a string"),
        ("broken/ticks-without-advance.mjs", "export default.cadence is ticks, which needs reducer.advance"),
    ];
    for (name, expected) in cases {
        let (error, text) = load_error(name);
        assert!(matches!(error, ModuleError::Shape { .. }), "{name}: {error:?}");
        assert!(text.contains(expected), "{name}: {text}");
        assert!(text.contains(name.rsplit('/').next().unwrap()), "{name}: names the file: {text}");
    }
}

#[test]
fn code_errors_name_the_file_and_say_what_to_do() {
    let (error, text) = load_error("broken/bare-import.mjs");
    assert!(matches!(error, ModuleError::BareImport { .. }), "{error:?}");
    assert!(text.contains("bare-import.mjs: imports \"lodash\", which is a package"), "{text}");
    assert!(text.contains("npx esbuild game.ts --bundle --format=esm --outfile=game.mjs"), "{text}");

    let (error, text) = load_error("broken/syntax-error.mjs");
    assert!(matches!(error, ModuleError::Evaluate { .. }), "{error:?}");
    assert!(text.contains("syntax-error.mjs") && text.contains("SyntaxError"), "{text}");

    let (error, text) = load_error("broken/throws-at-load.mjs");
    assert!(matches!(error, ModuleError::Evaluate { .. }), "{error:?}");
    assert!(text.contains("throws-at-load.mjs") && text.contains("Date.now is not available"), "{text}");

    let (error, text) = load_error("broken/imports-missing.mjs");
    assert!(matches!(error, ModuleError::Read { .. }), "{error:?}");
    assert!(text.contains("no-such-file.mjs: cannot read the game module"), "{text}");

    let (error, text) = load_error("broken/game.ts");
    assert!(matches!(error, ModuleError::TypeScript { .. }), "{error:?}");
    assert!(text.contains("game.ts: TypeScript is not run directly") && text.contains("npx esbuild"), "{text}");

    let (error, text) = load_error("broken/does-not-exist.mjs");
    assert!(matches!(error, ModuleError::Read { .. }), "{error:?}");
    assert!(text.contains("does-not-exist.mjs"), "{text}");
}

#[test]
fn a_top_level_that_never_finishes_is_stopped_at_the_time_limit() {
    let started = std::time::Instant::now();
    let (error, text) = load_error("broken/loops-at-load.mjs");
    assert!(matches!(error, ModuleError::Limit { .. }), "{error:?}");
    assert!(text.contains("loops-at-load.mjs: loading the module exceeded the 200 ms time limit"), "{text}");
    assert!(started.elapsed() < test_limits().call_time_limit * 5);
}

#[test]
fn console_output_is_bounded_and_never_fails_a_call() {
    let game = load("chatty.mjs");
    let session = kernel(&game, "chatty");
    assert_eq!(session.cursor(), 0);
}
