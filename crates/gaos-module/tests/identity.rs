//! The module digest: the documented construction, stable across loads and
//! directories, changed by any byte of any file the module imports.

mod support;

use std::path::{Path, PathBuf};

use gaos_module::{ModuleGame, module_digest};
use support::{fixture, test_limits};

/// A copy of `tests/modules/split` in a fresh directory.
fn split_copy(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gaos-module-identity-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    for file in ["game.mjs", "seats.mjs", "lib/rules.mjs"] {
        std::fs::copy(fixture("split").join(file), dir.join(file)).unwrap();
    }
    dir
}

fn sha256_hex(bytes: &[u8]) -> String {
    gaos_json::sha256_hex(bytes)
}

#[test]
fn the_digest_is_the_documented_construction() {
    let identity = module_digest(&fixture("split/game.mjs")).unwrap();
    let mut text = String::new();
    for path in ["game.mjs", "lib/rules.mjs", "seats.mjs"] {
        let bytes = std::fs::read(fixture("split").join(path)).unwrap();
        text.push_str(&format!("{path}\0{}\n", sha256_hex(&bytes)));
    }
    assert_eq!(identity.sha256, sha256_hex(text.as_bytes()));
    assert_eq!(identity.files.len(), 3);
    assert_eq!(identity.entry, fixture("split/game.mjs"));
}

#[test]
fn loads_agree_and_moving_the_directory_keeps_the_digest() {
    let first = ModuleGame::load(&fixture("split/game.mjs"), &test_limits()).unwrap();
    let second = ModuleGame::load(&fixture("split/game.mjs"), &test_limits()).unwrap();
    let digest = module_digest(&fixture("split/game.mjs")).unwrap();
    assert_eq!(first.identity().sha256, second.identity().sha256);
    assert_eq!(first.identity(), &digest);
    let moved = split_copy("moved");
    assert_eq!(module_digest(&moved.join("game.mjs")).unwrap().sha256, digest.sha256);
    let _ = std::fs::remove_dir_all(moved);
}

#[test]
fn any_byte_of_any_imported_file_changes_the_digest() {
    let original = module_digest(&fixture("split/game.mjs")).unwrap().sha256;
    for file in ["game.mjs", "seats.mjs", "lib/rules.mjs"] {
        let dir = split_copy(&file.replace('/', "-"));
        let path = dir.join(file);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"\n// one more line\n");
        std::fs::write(&path, bytes).unwrap();
        let changed = module_digest(&dir.join("game.mjs")).unwrap().sha256;
        assert_ne!(changed, original, "{file}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_loaded_module_keeps_the_bytes_it_loaded() {
    // Editing the file after loading changes neither the identity nor what
    // the module's engines run: the engine that replaces one discarded
    // after a time-limit failure compiles the recorded bytes.
    let dir = std::env::temp_dir().join(format!("gaos-module-identity-{}-edited", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("hostile.mjs");
    std::fs::copy(fixture("hostile.mjs"), &path).unwrap();
    let game = ModuleGame::load(&path, &test_limits()).unwrap();
    let before = game.identity().sha256.clone();
    std::fs::write(&path, "this is not JavaScript {").unwrap();
    let mut looping = support::kernel(&game, "edited-loop");
    support::submit(&mut looping, "solo", "loop", r#"{"try":"loop"}"#).unwrap();
    assert!(looping.prepare_advance(None).is_err());
    let mut fresh = support::kernel(&game, "edited-fresh");
    support::submit(&mut fresh, "solo", "ok", r#"{"try":"nothing"}"#).unwrap();
    support::advance(&mut fresh).expect("the replacement engine runs the recorded bytes");
    assert_eq!(game.identity().sha256, before);
    assert!(module_digest(&path).is_err(), "the file on disk no longer compiles");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn relative_paths_above_the_entry_use_dot_dot() {
    let identity = module_digest(&fixture("duel-adapter.mjs")).unwrap();
    let files: Vec<&str> = identity.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, ["duel-adapter.mjs", "duel.mjs"]);
    let nested = std::env::temp_dir().join(format!("gaos-module-identity-{}-nested", std::process::id()));
    std::fs::create_dir_all(nested.join("entry")).unwrap();
    std::fs::write(nested.join("shared.mjs"), "export const x = 1;\n").unwrap();
    std::fs::write(nested.join("entry/main.mjs"), "import { x } from \"../shared.mjs\";\nexport default x;\n").unwrap();
    let identity = module_digest(&nested.join("entry/main.mjs")).unwrap();
    let files: Vec<&str> = identity.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, ["../shared.mjs", "main.mjs"]);
    let _ = std::fs::remove_dir_all(Path::new(&nested));
}
