//! Helpers shared by the gaos crates' tests: the shared conformance pack
//! (this module; running scripts against expected outputs in
//! [`conformance_outputs`]), a real `gaos serve` per test ([`server`]), a raw HTTP/SSE
//! client for it ([`http`]), game fixtures ([`fixtures`]), the RFC-018
//! handle gate suite every transport runs ([`handle_gates`]), the README's
//! runnable sections ([`readme`]), a headless Chromium over WebDriver for
//! the web pages' tests ([`browser`]), and a real PostgreSQL server for the
//! PostgreSQL store's and the cluster's tests ([`postgres`]).
//!
//! The pack lives in `../shared` beside the checkout (CI places it there).
//! `GAOS_SHARED_DIR` overrides the location. A missing pack is a test
//! failure with a message that says where it was looked for, never a skip.

pub mod browser;
pub mod conformance_outputs;
pub mod fixtures;
pub mod handle_gates;
pub mod http;
pub mod postgres;
pub mod readme;
pub mod server;

use std::path::{Path, PathBuf};

use gaos_json::Value;

/// The `shared` directory (contains `conformance/`, `spec/`, `seeds/`).
pub fn shared_dir() -> PathBuf {
    let dir = match std::env::var_os("GAOS_SHARED_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    let conformance = dir.join("conformance");
    assert!(
        conformance.is_dir(),
        "the shared conformance pack was not found at {} (expected ../shared beside the checkout, \
         or set GAOS_SHARED_DIR)",
        conformance.display()
    );
    dir.canonicalize().unwrap_or(dir)
}

/// `shared/conformance`.
pub fn conformance_dir() -> PathBuf {
    shared_dir().join("conformance")
}

/// `shared/conformance/fuzz`: scripts written by the reference's seeded
/// random generator, in the main pack's layout (`scripts/`, `expected/`).
pub fn fuzz_conformance_dir() -> PathBuf {
    conformance_dir().join("fuzz")
}

/// Read and parse a JSON file of the pack (path relative to `conformance/`).
pub fn read_conformance_json(relative: &str) -> Value {
    let path = conformance_dir().join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    gaos_json::parse(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Field `key` of an object as a string (panics with the key name).
pub fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_else(|| panic!("missing string field {key}"))
}

/// Field `key` of an object as an array (panics with the key name).
pub fn array_field<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value.get(key).and_then(Value::as_array).unwrap_or_else(|| panic!("missing array field {key}"))
}
