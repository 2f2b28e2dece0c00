//! `gaos`: the command-line front door of gaos-rs, with the built-in games.

/// mimalloc: the kernel allocates many small JSON values per transition, a
/// pattern glibc malloc handles poorly (fragmentation, consolidation stalls).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Before any command opens a SQLite connection (SQLite takes a page
    // cache only before its first one).
    gaos_host::storage::sqlite::use_layered_page_cache();
    gaos_cli::App::new().run()
}
