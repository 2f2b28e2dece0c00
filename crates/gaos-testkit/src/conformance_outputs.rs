//! The conformance packs' scripts and their expected outputs: where they are,
//! and a byte-for-byte comparison of a run's files with an expected directory
//! (what the pack's `compare` does), shared by every test that runs scripts
//! (the built-in games in gaos-conformance, the JS ports in gaos-module).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The project's own pack, `conformance/` at the repository root.
pub fn project_conformance_dir() -> PathBuf {
    crate::repository_dir().join("conformance")
}

/// Every `*.json` in `pack/scripts`, sorted by path.
pub fn script_paths(pack: &Path) -> Vec<PathBuf> {
    let dir = pack.join("scripts");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    scripts.sort();
    scripts
}

/// Compare a run's files (name → content) with the files of `expected`, byte
/// for byte. Each problem is one line naming the script: a missing or extra
/// file, or the first differing line of a file with both versions of it.
pub fn compare_outputs(name: &str, files: &BTreeMap<String, String>, expected: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let expected_files: BTreeSet<String> = std::fs::read_dir(expected)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", expected.display()))
        .map(|entry| entry.expect("dir entry").file_name().to_string_lossy().into_owned())
        .collect();
    let actual_files: BTreeSet<String> = files.keys().cloned().collect();
    for missing in expected_files.difference(&actual_files) {
        problems.push(format!("{name}: MISSING {missing}"));
    }
    for extra in actual_files.difference(&expected_files) {
        problems.push(format!("{name}: EXTRA {extra}"));
    }
    for file in expected_files.intersection(&actual_files) {
        let want = std::fs::read_to_string(expected.join(file)).expect("expected file");
        let got = &files[file];
        if &want != got {
            let line = want
                .lines()
                .zip(got.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
            problems.push(format!(
                "{name}: MISMATCH {file} line {}\n  expected: {}\n  actual:   {}",
                line + 1,
                want.lines().nth(line).unwrap_or("<end>"),
                got.lines().nth(line).unwrap_or("<end>")
            ));
        }
    }
    problems
}
