//! The README's runnable sections: tests run its ```sh blocks as pasted, so
//! a command the README shows cannot rot.

use std::path::{Path, PathBuf};

/// The repository root (where README.md lives).
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The README's text.
pub fn readme() -> String {
    let path = repo_root().join("README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The bodies of the ```sh blocks of `text`, in order.
pub fn sh_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_end() == "```sh" => current = Some(String::new()),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    assert!(current.is_none(), "an unclosed ```sh block in the README");
    blocks
}

/// The part of `readme` from `start_mark` up to `end_mark` (both must be
/// there: a README that lost its markers fails the test that needs them).
pub fn section<'a>(readme: &'a str, start_mark: &str, end_mark: &str) -> &'a str {
    let start = readme.find(start_mark).unwrap_or_else(|| panic!("the README marks a section with {start_mark}"));
    let end = readme[start..].find(end_mark).unwrap_or_else(|| panic!("the README ends that section with {end_mark}"));
    &readme[start..start + end]
}
