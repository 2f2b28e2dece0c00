//! The README's walkthrough runs as pasted (issue 16): every ```sh block
//! between `<!-- walkthrough` and `<!-- end of walkthrough -->` is run, in
//! order, in one `bash -euo pipefail`, against a real `gaos serve` on a
//! fresh data directory, and must end with a verified replay. A command of
//! the README that fails fails this test, so the README cannot rot.
//!
//! The one thing not run is the README's server start (`cargo run --release
//! -p gaos-cli -- serve`, in its first block, beside the test command):
//! this test supplies that server itself, started the same way (`gaos serve`
//! with `--data gaos-data` in the shell's working directory, so the
//! walkthrough finds `gaos-data/operator-token` where the README says) but
//! on a free port, handed to the walkthrough as `GAOS_HOST`.

use std::path::Path;

use std::time::Duration;

use gaos_testkit::readme::{readme, run_bash, section, sh_blocks};
use gaos_testkit::server::{TempDir, TestServer};

/// The README's server-start command, which this test replaces with its own server.
const SERVER_START: &str = "cargo run --release -p gaos-cli -- serve";
const START_MARK: &str = "<!-- walkthrough";
const END_MARK: &str = "<!-- end of walkthrough -->";
/// A bound on the whole walkthrough (it takes about a second).
const WALKTHROUGH_TIMEOUT: Duration = Duration::from_secs(120);

#[test]
fn the_readme_starts_the_server_the_way_this_test_does() {
    let readme = readme();
    let first = sh_blocks(&readme).into_iter().next().expect("the README has a ```sh block");
    assert!(
        first.lines().any(|l| l.trim() == SERVER_START),
        "the README's first block no longer starts the server with `{SERVER_START}`; update this test's server start"
    );
}

#[test]
fn the_readme_walkthrough_runs_as_pasted_and_ends_with_a_verified_replay() {
    let readme = readme();
    let blocks = sh_blocks(section(&readme, START_MARK, END_MARK));
    assert!(blocks.len() >= 3, "the walkthrough has {} sh blocks; expected create, act, verify", blocks.len());
    let script = blocks.join("\n");
    for needed in ["gaos session new", "gaos session act", "gaos session finalize", "/replay", "gaos replay verify"] {
        assert!(script.contains(needed), "the walkthrough no longer runs `{needed}`:\n{script}");
    }
    assert!(!script.contains(SERVER_START), "the walkthrough must not start a server of its own");

    let binary = Path::new(env!("CARGO_BIN_EXE_gaos"));
    let shell_dir = TempDir::new("gaos-readme");
    let server = TestServer::start_in(binary, &shell_dir.path().join("gaos-data"), &[]);
    let bin_dir = binary.parent().expect("the binary has a directory");
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());

    // A fresh shell: only PATH, HOME and the test's host; no inherited
    // GAOS_* variables (the README must set what it uses).
    let output = run_bash(&script, WALKTHROUGH_TIMEOUT, |bash| {
        bash.current_dir(shell_dir.path())
            .env_clear()
            .env("PATH", &path)
            .env("HOME", shell_dir.path())
            .env("GAOS_HOST", server.base_url());
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "a README walkthrough command failed ({}):\n--- script\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- server\n{}",
        output.status,
        server.stderr_tail()
    );
    let last = stdout.lines().last().unwrap_or_default();
    assert_eq!(
        last, "hilo.gaos-replay.jsonl: accepted-unsigned (3 resolutions re-simulated)",
        "the walkthrough must end with a verified replay:\n{stdout}"
    );
    assert!(shell_dir.path().join("hilo.gaos-replay.jsonl").is_file());
}
