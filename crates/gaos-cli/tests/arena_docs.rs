//! The arena's documentation runs as written: docs/process-agents.md's
//! Python agent and manifest play a tournament with the commands the page
//! shows (pasted into bash, the built `gaos` on the PATH), the example agent
//! in examples/ is that same agent, and the README's "Run a
//! tournament" example manifest plays and verifies.

use std::path::Path;
use std::time::Duration;

use gaos_testkit::readme::{fenced_blocks, readme, repo_file, repo_root, run_bash, section, sh_blocks};
use gaos_testkit::server::TempDir;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn path_with_gaos() -> String {
    let bin = Path::new(GAOS).parent().expect("the binary's directory");
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

#[test]
fn the_process_agent_guide_plays_its_tournament_as_written() {
    let guide = repo_file("docs/process-agents.md");
    let agent = fenced_blocks(&guide, "python").into_iter().next().expect("the guide shows an agent");
    assert!(agent.lines().count() <= 21, "the example agent stays about twenty lines:\n{agent}");
    assert_eq!(agent, repo_file("examples/arena-agent.py"), "examples/arena-agent.py is the guide's agent");
    let manifest = fenced_blocks(&guide, "json").into_iter().next().expect("the guide shows a manifest");
    let commands = sh_blocks(&guide).into_iter().last().expect("the guide shows how to run it");

    let dir = TempDir::new("gaos-docs-arena");
    std::fs::write(dir.path().join("agent.py"), &agent).expect("write the agent");
    std::fs::write(dir.path().join("tournament.json"), &manifest).expect("write the manifest");
    let output = run_bash(&commands, Duration::from_secs(300), |bash| {
        bash.current_dir(dir.path()).env("PATH", path_with_gaos());
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the guide's commands failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("verified:       yes"), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("valid: runs/mine/bundle")), "{stdout}");
    // The agent's stderr is in the match logs, prefixed with its seat.
    let logs = std::fs::read_dir(dir.path().join("runs/mine/bundle/logs")).expect("logs").count();
    assert_eq!(logs, 16, "one log per match the agent played (2 opponents × 2 seat orders × 4 seeds)");
    let log = std::fs::read_to_string(dir.path().join("runs/mine/bundle/logs/000-default-1-mine-vs-random.log"))
        .expect("a match log");
    assert!(log.contains("[alice] playing conformance/hilo as alice, seed 1"), "{log}");
    assert!(log.contains("[alice] game over: {\"kind\": \"decided\""), "{log}");
}

#[test]
fn the_readme_tournament_example_plays_and_verifies() {
    let readme = readme();
    let part = section(&readme, "## Run a tournament", "\n## ");
    let manifest = "examples/arena-hilo-ladder.json";
    assert!(part.contains(manifest), "the README's section runs {manifest}");
    let out = TempDir::new("gaos-readme-arena");
    let out = out.path().join("ladder");
    let run = std::process::Command::new(GAOS)
        .current_dir(repo_root())
        .args(["arena", "run", manifest, "--jobs", "2", "--out", out.to_str().expect("UTF-8"), "--json"])
        .output()
        .expect("gaos arena run");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).expect("the summary");
    assert_eq!(summary["verified"], true, "{summary}");
    assert_eq!(summary["matches"], 42, "3 pairings × 2 seat orders × 7 seeds");
    let verify = std::process::Command::new(GAOS)
        .current_dir(repo_root())
        .args(["arena", "verify", out.to_str().expect("UTF-8"), "--manifest", manifest])
        .output()
        .expect("gaos arena verify");
    assert_eq!(verify.status.code(), Some(0), "{}", String::from_utf8_lossy(&verify.stdout));
}
