//! The README's crate list names every crate of the workspace: a new
//! directory under `crates/` fails here until the README gives it its line.

use std::fs;

#[test]
fn the_readme_names_every_crate_of_the_workspace() {
    let root = gaos_testkit::repository_dir();
    let readme = fs::read_to_string(root.join("README.md")).expect("README.md");
    let layout = readme.split("## Layout").nth(1).expect("the README has a Layout section");
    let layout = layout.split("\n## ").next().unwrap_or(layout);
    let mut crates: Vec<String> = fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .map(|path| path.file_name().expect("a name").to_string_lossy().into_owned())
        .collect();
    crates.sort();
    assert!(crates.len() >= 13, "the workspace's crates were found: {crates:?}");
    let missing: Vec<&String> = crates.iter().filter(|name| !layout.contains(&format!("- `{name}`: "))).collect();
    assert!(missing.is_empty(), "README.md's Layout has no line for {missing:?}");
}
