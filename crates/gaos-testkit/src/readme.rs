//! The runnable parts of the README and docs: tests run their ```sh blocks
//! (and the files they show) as pasted, so a command the docs show cannot rot.

use std::path::{Path, PathBuf};

/// The repository root (where README.md lives).
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The README's text.
pub fn readme() -> String {
    repo_file("README.md")
}

/// The bodies of the ```sh blocks of `text`, in order.
pub fn sh_blocks(text: &str) -> Vec<String> {
    fenced_blocks(text, "sh")
}

/// The bodies of the fenced blocks of `text` opened with ```` ```lang ````, in order.
pub fn fenced_blocks(text: &str, lang: &str) -> Vec<String> {
    let opening = format!("```{lang}");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_end() == opening => current = Some(String::new()),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    assert!(current.is_none(), "an unclosed {opening} block");
    blocks
}

/// A file of the repository, as text.
pub fn repo_file(relative: &str) -> String {
    let path = repo_root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The part of `readme` from `start_mark` up to `end_mark` (both must be
/// there: a README that lost its markers fails the test that needs them).
pub fn section<'a>(readme: &'a str, start_mark: &str, end_mark: &str) -> &'a str {
    let start = readme.find(start_mark).unwrap_or_else(|| panic!("the README marks a section with {start_mark}"));
    let end = readme[start..].find(end_mark).unwrap_or_else(|| panic!("the README ends that section with {end_mark}"));
    &readme[start..start + end]
}

/// Run `script` in one `bash --noprofile --norc -euo pipefail` (as a reader
/// pasting the blocks would), with the environment and working directory
/// `configure` sets; kill it and panic if it runs past `timeout`.
pub fn run_bash(
    script: &str,
    timeout: std::time::Duration,
    configure: impl FnOnce(&mut std::process::Command),
) -> std::process::Output {
    let mut command = std::process::Command::new("bash");
    command.args(["--noprofile", "--norc", "-euo", "pipefail", "-c", script]);
    configure(&mut command);
    let mut child =
        command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().expect("bash runs");
    let deadline = std::time::Instant::now() + timeout;
    while child.try_wait().expect("wait for bash").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the script did not finish within {timeout:?}:\n{script}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().expect("bash output")
}
