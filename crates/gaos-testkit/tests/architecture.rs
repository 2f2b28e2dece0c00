//! Architecture invariants of every crate that the compiler does not check
//! (ARCHITECTURE.md): no cycle between the top-level modules of a crate,
//! and no source file over 800 lines, tests included.
//!
//! A module depends on another when its code (comments and unit tests
//! left out) names `crate::other`, directly or through a name the crate
//! root re-exports from `other`. Submodules count as their top-level
//! module: the rooms of one type (`kernel/ingest.rs`, `kernel/commit.rs`,
//! ... are `impl SessionKernel` blocks) may call each other.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn crates_dir() -> PathBuf {
    gaos_testkit::repository_dir().join("crates")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a source file before its unit tests, without line comments.
fn code(text: &str) -> String {
    let before_tests = text.split("#[cfg(test)]").next().unwrap_or(text);
    before_tests.lines().filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Identifiers right after `crate::`, and inside `crate::{...}` groups.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let name = ident(item.trim());
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// Names the crate root re-exports, by the module they come from
/// (`pub use module::{A, B};`, `pub use module::A;`).
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else { continue };
        let Some((module, items)) = rest.split_once("::") else { continue };
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.split(" as ").next().unwrap_or("").trim();
            if !name.is_empty() && !name.contains("::") {
                names.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    names
}

/// The top-level module graph of the crate whose sources are in `src`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.strip_prefix(src).ok())
        .filter_map(|rel| rel.components().next())
        .map(|c| c.as_os_str().to_string_lossy().trim_end_matches(".rs").to_owned())
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap_or_default();
    let exported = reexports(&lib);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(src).expect("under src");
        let top = rel
            .components()
            .next()
            .expect("a component")
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = fs::read_to_string(file).expect("a UTF-8 source file");
        for name in crate_paths(&code(&text)) {
            let target = if modules.contains(&name) { Some(name) } else { exported.get(&name).cloned() };
            if let Some(target) = target
                && target != top
            {
                graph.entry(top.clone()).or_default().insert(target);
            }
        }
    }
    graph
}

/// The strongly connected components of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let targets: Vec<&'g str> = s.graph.get(v).map(|t| t.iter().map(String::as_str).collect()).unwrap_or_default();
        for w in targets {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    let nodes: BTreeSet<&str> =
        graph.keys().map(String::as_str).chain(graph.values().flatten().map(String::as_str)).collect();
    for node in nodes {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}

fn crate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(crates_dir())
        .expect("crates/ is readable")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 12, "found the workspace's crates: {dirs:?}");
    dirs
}

#[test]
fn no_crate_has_a_cycle_between_its_top_level_modules() {
    let mut problems = Vec::new();
    for dir in crate_dirs() {
        for cycle in cycles(&module_graph(&dir.join("src"))) {
            problems.push(format!("{}: {}", dir.file_name().expect("a name").to_string_lossy(), cycle.join(" ↔ ")));
        }
    }
    assert!(problems.is_empty(), "module cycles:\n{}", problems.join("\n"));
}

#[test]
fn no_source_file_is_over_800_lines() {
    let mut files = Vec::new();
    for dir in crate_dirs() {
        rust_files(&dir.join("src"), &mut files);
        rust_files(&dir.join("tests"), &mut files);
        rust_files(&dir.join("benches"), &mut files);
        rust_files(&dir.join("examples"), &mut files);
    }
    rust_files(&gaos_testkit::repository_dir().join("examples"), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = fs::read_to_string(f).ok()?.lines().count();
            (lines > 800).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these files by concern:\n{}", long.join("\n"));
}

#[test]
fn the_checker_finds_a_cycle_and_resolves_reexports() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    graph.insert("b".to_owned(), BTreeSet::from(["c".to_owned()]));
    graph.insert("c".to_owned(), BTreeSet::from(["a".to_owned()]));
    graph.insert("d".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(cycles(&graph), vec![vec!["a".to_owned(), "b".to_owned(), "c".to_owned()]]);
    let exported = reexports("pub mod x;\npub use x::{Alpha, Beta as B};\npub use y::Gamma;");
    assert_eq!(exported.get("Alpha").map(String::as_str), Some("x"));
    assert_eq!(exported.get("Gamma").map(String::as_str), Some("y"));
    let names = crate_paths("use crate::{a::X, b};\nlet v = crate::c::f();");
    assert_eq!(names, BTreeSet::from(["a".to_owned(), "b".to_owned(), "c".to_owned()]));
}

/// The one crate allowed unsafe code: SQLite calls it through a table of C
/// function pointers (ARCHITECTURE.md, `crates/gaos-sqlite-pagecache`).
const UNSAFE_CRATE: &str = "gaos-sqlite-pagecache";

#[test]
fn unsafe_code_lives_in_one_crate_only() {
    let workspace = fs::read_to_string(gaos_testkit::repository_dir().join("Cargo.toml")).expect("Cargo.toml");
    assert!(workspace.contains("unsafe_code = \"forbid\""), "the workspace lints forbid unsafe code");
    let mut members: Vec<PathBuf> = crate_dirs();
    if let Ok(examples) = fs::read_dir(gaos_testkit::repository_dir().join("examples")) {
        members.extend(examples.map(|e| e.expect("an entry").path()).filter(|p| p.join("Cargo.toml").is_file()));
    }
    let mut problems = Vec::new();
    for dir in members {
        let name = dir.file_name().expect("a name").to_string_lossy().into_owned();
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("a manifest");
        let inherits =
            manifest.split("[lints]").nth(1).is_some_and(|rest| rest.trim_start().starts_with("workspace = true"));
        if name == UNSAFE_CRATE {
            assert!(!inherits, "{name} is the crate that holds unsafe code");
        } else if !inherits {
            problems.push(name);
        }
    }
    assert!(
        problems.is_empty(),
        "these crates do not take the workspace's lints (`[lints] workspace = true`): {problems:?}"
    );
}
