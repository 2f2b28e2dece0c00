//! Architecture invariants of the kernel crate that the compiler does not
//! check: no OS randomness, no kernel ↔ replay module cycle, no source file
//! over 800 lines.

use std::fs;
use std::path::{Path, PathBuf};

fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in fs::read_dir(dir).expect("src is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).expect("a UTF-8 source file");
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    assert!(out.len() > 20, "found the crate's sources");
    out
}

/// The code before its unit tests, without comments.
fn library_code(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    code.lines().filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_kernel_takes_no_os_randomness() {
    for (path, text) in sources() {
        let code = library_code(&text);
        for needle in
            ["RandomState", "DefaultHasher", "HashMap::new(", "HashSet::new(", "HashMap::default(", "HashSet::default("]
        {
            assert!(!code.contains(needle), "{} uses {needle}: use crate::hash (deterministic)", path.display());
        }
    }
}

#[test]
fn kernel_and_replay_do_not_import_each_other() {
    for (path, text) in sources() {
        let code = library_code(&text);
        let relative = path.to_string_lossy().replace('\\', "/");
        if relative.contains("/src/replay") {
            assert!(!code.contains("crate::kernel"), "{relative} imports the kernel");
        }
        if relative.contains("/src/kernel") {
            assert!(!code.contains("crate::replay"), "{relative} imports the replay verifier");
        }
    }
}

#[test]
fn no_source_file_is_over_800_lines() {
    for (path, text) in sources() {
        let lines = text.lines().count();
        assert!(lines <= 800, "{} has {lines} lines", path.display());
    }
}
