//! docs/game-modules.md's example runs as shown: its module (the first ```js
//! block) saved as `duel.mjs`, then its first two commands (play a match in
//! process, verify the replay with the same file), in one `bash -euo
//! pipefail` with the built `gaos` on the PATH.

use std::path::Path;
use std::time::Duration;

use gaos_testkit::readme::{fenced_blocks, repo_file, run_bash, sh_blocks};
use gaos_testkit::server::TempDir;

#[test]
fn the_game_module_guide_example_plays_and_verifies() {
    let guide = repo_file("docs/game-modules.md");
    let module = fenced_blocks(&guide, "js").into_iter().next().expect("the guide shows a module");
    let commands = sh_blocks(&guide).into_iter().next().expect("the guide shows how to run it");
    let script: Vec<&str> =
        commands.lines().filter(|l| l.starts_with("gaos play") || l.starts_with("gaos replay")).collect();
    assert_eq!(script.len(), 2, "the guide's first block plays and verifies:\n{commands}");

    let dir = TempDir::new("gaos-docs-module");
    std::fs::write(dir.path().join("duel.mjs"), &module).expect("write the module");
    let binary = Path::new(env!("CARGO_BIN_EXE_gaos"));
    let path = format!("{}:{}", binary.parent().expect("bin dir").display(), std::env::var("PATH").unwrap_or_default());
    let output = run_bash(&script.join("\n"), Duration::from_secs(120), |bash| {
        bash.current_dir(dir.path()).env("PATH", path);
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the guide's example failed:\n{stdout}\n{stderr}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with("duel.gaos-replay.jsonl: accepted"), "the replay verifies:\n{stdout}\n{stderr}");
}
