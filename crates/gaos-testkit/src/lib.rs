//! Helpers shared by the gaos crates' tests: the reference conformance pack
//! (this module; running scripts against expected outputs in
//! [`conformance_outputs`]), a real `gaos serve` per test ([`server`]), a raw HTTP/SSE
//! client for it ([`http`]), game fixtures ([`fixtures`]), the RFC-018
//! handle gate suite every transport runs ([`handle_gates`]), the README's
//! runnable sections ([`readme`]), a headless Chromium over WebDriver for
//! the web pages' tests ([`browser`]), a real PostgreSQL server for the
//! PostgreSQL store's and the cluster's tests ([`postgres`]), and the check
//! that error messages speak the user's words ([`words`]).
//!
//! The reference pack is the repository's copy, `conformance/reference/`
//! (conformance/REFERENCE.md says where it comes from), so a clone tests
//! itself with nothing beside it. `GAOS_SHARED_DIR` names another pack (a
//! directory holding `conformance/`, such as the shared pack `../shared`)
//! to test against instead. A missing pack is a test failure with a message
//! that says where it was looked for, never a skip.

pub mod browser;
pub mod conformance_outputs;
pub mod fixtures;
pub mod handle_gates;
pub mod http;
pub mod kill;
pub mod postgres;
pub mod readme;
pub mod server;
pub mod words;

use std::path::{Path, PathBuf};

use gaos_json::Value;

/// The reference conformance pack the tests compare with: `conformance/`
/// of the pack `GAOS_SHARED_DIR` names, else the repository's copy
/// `conformance/reference/`.
pub fn conformance_dir() -> PathBuf {
    let (dir, source) = match std::env::var_os("GAOS_SHARED_DIR") {
        Some(shared) => (PathBuf::from(shared).join("conformance"), "GAOS_SHARED_DIR"),
        None => (repository_dir().join("conformance/reference"), "the repository's copy"),
    };
    assert!(
        dir.join("SCRIPT-FORMAT.md").is_file(),
        "the reference conformance pack was not found at {} ({source}); restore the copy with \
         `git checkout -- conformance/reference`, or point GAOS_SHARED_DIR at a pack holding conformance/",
        dir.display()
    );
    dir.canonicalize().unwrap_or(dir)
}

/// The repository's root directory.
pub fn repository_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    dir.canonicalize().unwrap_or(dir)
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
