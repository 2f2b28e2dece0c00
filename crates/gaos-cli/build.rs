//! Records the git commit `gaos --version` names. A build outside a git
//! checkout (a source tarball, `cargo install` from a registry) still
//! builds: the version then says the commit is unknown, unless the packager
//! names it in `GAOS_BUILD_COMMIT`.

#[path = "build/commit.rs"]
mod commit;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/commit.rs");
    println!("cargo:rerun-if-env-changed=GAOS_BUILD_COMMIT");
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let override_id = std::env::var("GAOS_BUILD_COMMIT").ok().filter(|id| !id.trim().is_empty());
    let commit = if override_id.is_some() { None } else { commit::describe(&dir) };
    for path in commit.iter().flat_map(|c| &c.watch) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let note = commit::version_note(commit.as_ref(), override_id.as_deref().map(str::trim));
    println!("cargo:rustc-env=GAOS_VERSION_NOTE={note}");
}
