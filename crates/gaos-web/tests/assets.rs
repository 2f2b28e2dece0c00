//! The app shell stays small and self-contained: every module a page imports
//! is embedded, nothing is loaded from another origin, and the whole shell is
//! under the 200 KB budget (uncompressed).

use gaos_web::ASSETS;

/// The budget for every embedded asset together, uncompressed.
const BUDGET_BYTES: usize = 200 * 1024;

#[test]
fn the_app_shell_is_under_its_budget() {
    let total: usize = ASSETS.iter().map(|a| a.body.len()).sum();
    eprintln!("app shell: {total} bytes in {} assets", ASSETS.len());
    assert!(total < BUDGET_BYTES, "the embedded assets are {total} bytes, over the {BUDGET_BYTES}-byte budget");
}

#[test]
fn every_import_is_an_embedded_module_and_nothing_is_fetched_from_elsewhere() {
    for asset in ASSETS {
        for line in asset.body.lines() {
            if let Some(from) = line.trim().strip_prefix("import ").and_then(|l| l.split(" from \"").nth(1)) {
                let name = from.trim_end_matches(['"', ';']).trim_start_matches("./");
                assert!(ASSETS.iter().any(|a| a.name == name), "{} imports {name}, which is not embedded", asset.name);
            }
            for external in ["http://", "https://", "//fonts.", "@import"] {
                assert!(
                    !line.contains(external) || line.trim_start().starts_with("//"),
                    "{} refers to {external}: {line}",
                    asset.name
                );
            }
        }
    }
}
