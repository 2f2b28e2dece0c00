//! The README's "Write your own game" walkthrough runs as pasted (issue 14):
//! its ```sh blocks, in order, in one `bash -euo pipefail`, starting in a
//! checkout of this repository. They create a crate beside the checkout,
//! build it against the checkout's crates, play a match with the new binary
//! and verify the replay it wrote.
//!
//! So that "beside the checkout" is a scratch directory, the shell starts in
//! `SCRATCH/gaos-rs`, a symlink to this checkout (`cd ..` in bash is logical,
//! so it lands in SCRATCH). Two things make the build affordable and are not
//! part of what the README asks of a reader: cargo runs offline (the new
//! crate's lock resolves to the versions this workspace already downloaded)
//! and shares this workspace's target directory (those dependencies are
//! already compiled).

use std::path::{Path, PathBuf};

use std::time::Duration;

use gaos_testkit::readme::{readme, repo_root, run_bash, section, sh_blocks};
use gaos_testkit::server::TempDir;

const START_MARK: &str = "<!-- game walkthrough -->";
const END_MARK: &str = "<!-- end of game walkthrough -->";
/// A bound on the walkthrough: it compiles a new binary against the
/// workspace's crates (about a minute with a warm target directory).
const WALKTHROUGH_TIMEOUT: Duration = Duration::from_secs(900);

/// The target directory this test binary was built into.
fn target_dir() -> PathBuf {
    // CARGO_BIN_EXE_gaos is TARGET/<profile>/gaos.
    let binary = Path::new(env!("CARGO_BIN_EXE_gaos"));
    binary.parent().and_then(Path::parent).expect("the binary sits in TARGET/<profile>/").to_path_buf()
}

#[test]
fn the_write_your_own_game_walkthrough_runs_as_pasted_and_verifies_its_match() {
    let readme = readme();
    let blocks = sh_blocks(section(&readme, START_MARK, END_MARK));
    assert!(blocks.len() >= 2, "the game walkthrough has {} sh blocks; expected setup and play", blocks.len());
    let script = blocks.join("\n");
    for needed in ["cargo new", "gaos_cli::App", "play", "replay verify"] {
        assert!(script.contains(needed), "the game walkthrough no longer runs `{needed}`:\n{script}");
    }

    let scratch = TempDir::new("gaos-game-walkthrough");
    let checkout = scratch.path().join("gaos-rs");
    std::os::unix::fs::symlink(repo_root(), &checkout).expect("symlink the checkout into the scratch dir");
    let script_in_checkout = format!("cd {:?}\n{script}", checkout);
    let output = run_bash(&script_in_checkout, WALKTHROUGH_TIMEOUT, |bash| {
        bash.env("CARGO_TARGET_DIR", target_dir())
            .env("CARGO_NET_OFFLINE", "true")
            .env_remove("CARGO_MANIFEST_DIR")
            .env_remove("RUSTFLAGS");
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "a command of the game walkthrough failed ({}):\n--- script\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("duel.gaos-replay.jsonl: accepted"),
        "the game walkthrough must end with a verified replay:\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(scratch.path().join("my-duel/duel.gaos-replay.jsonl").is_file(), "the replay is in the new crate");
}
