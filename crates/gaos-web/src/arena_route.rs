//! The tournaments a host was given (`gaos serve --arena-reports DIR`):
//! `GET /arena/` lists the runs in `DIR` (output directories of `gaos arena
//! run`, each holding `bundle/`), `GET /arena/{run}/` is the run's report
//! rendered from its bundle as it is now, every match opening in this
//! host's replay viewer, and `GET /arena/{run}/bundle/{replays|logs}/{file}`
//! and the bundle's JSON files are served as they are.
//!
//! Read-only and open to whoever reaches the host (page navigations carry
//! no token), so the operator opts in. Only regular files under the
//! directory given are served: every path component is checked not to be
//! a symbolic link, and the file's canonical path must lie under the
//! directory's, so nothing outside it can be reached.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use gaos_runner::arena::{ArenaManifest, MatchRecord};

use crate::arena_report::arena_report_html;
use crate::bench_report::{ReplayLinks, escape, href};
use crate::bench_route::{html, not_found, segment};
use crate::frames_route::error;

/// The canonical reports directory (`None`: it does not exist).
#[derive(Clone)]
struct Reports(Arc<Option<PathBuf>>);

/// `root/parts…` when every component below `root` is a real directory (or,
/// last, a regular file when `file`), no link anywhere, and the canonical
/// path lies under `root` (itself canonical).
fn inside(root: &Path, parts: &[&str], file: bool) -> Option<PathBuf> {
    let mut path = root.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        if Path::new(part).components().any(|c| !matches!(c, Component::Normal(_))) || segment(part).is_none() {
            return None;
        }
        path.push(part);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let last = i + 1 == parts.len();
        let fits = if last && file { meta.file_type().is_file() } else { meta.file_type().is_dir() };
        if !fits {
            return None;
        }
    }
    std::fs::canonicalize(&path).ok().filter(|p| p.starts_with(root))
}

fn read(root: &Path, parts: &[&str]) -> Option<String> {
    std::fs::read_to_string(inside(root, parts, true)?).ok()
}

/// The runs under `root`: real directories holding a real `bundle/`.
fn runs(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| inside(root, &[name, "bundle"], false).is_some())
        .collect();
    names.sort();
    names
}

fn listing(root: Option<&Path>) -> String {
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Tournaments</title>\n</head>\n<body>\n<main>\n<h1>Tournaments</h1>\n<ul id=\"runs\">\n",
    );
    let found = root.map(runs).unwrap_or_default();
    for run in &found {
        out.push_str(&format!("<li><a href=\"/arena/{}/\">{}</a></li>\n", escape(&href(run)), escape(run)));
    }
    if found.is_empty() {
        out.push_str("<li>No tournaments yet: <code>gaos arena run MANIFEST --out DIR/NAME</code> writes one.</li>\n");
    }
    out.push_str("</ul>\n</main>\n</body>\n</html>\n");
    out
}

/// The run's report, from its bundle's files; `Err`: why it cannot be shown.
fn report(root: &Path, run: &str) -> Result<String, String> {
    let file = |name: &str| read(root, &[run, "bundle", name]).ok_or(format!("run {run}: the bundle has no {name}"));
    let manifest = ArenaManifest::parse(&file("manifest.json")?).map_err(|e| format!("run {run}: {e}"))?;
    let standings = gaos_json::parse(&file("standings.json")?).map_err(|e| format!("run {run}: standings: {e}"))?;
    let records = file("matches.jsonl")?
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let value = gaos_json::parse(line).map_err(|e| e.to_string())?;
            MatchRecord::from_value(&value).map_err(|e| format!("run {run}: matches.jsonl line {}: {e}", i + 1))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let chart = read(root, &[run, "bundle", "ratings.svg"]).unwrap_or_default();
    let base = format!("/arena/{run}/bundle");
    Ok(arena_report_html(&manifest, &standings, &records, &chart, ReplayLinks::HostViewer { base: &base }))
}

async fn list(State(reports): State<Reports>) -> Response {
    match tokio::task::spawn_blocking(move || listing(reports.0.as_deref())).await {
        Ok(body) => html(body),
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal", "listing the tournaments failed"),
    }
}

async fn run_report(State(reports): State<Reports>, UrlPath(run): UrlPath<String>) -> Response {
    let Some(root) = reports.0.as_ref().clone() else { return not_found("no such tournament") };
    if inside(&root, &[&run, "bundle"], false).is_none() {
        return not_found("no such tournament");
    }
    match tokio::task::spawn_blocking(move || report(&root, &run)).await {
        Ok(Ok(body)) => html(body),
        Ok(Err(why)) => error(StatusCode::UNPROCESSABLE_ENTITY, "malformed_bundle", &why),
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal", "rendering the report failed"),
    }
}

/// A file of a run's bundle: a replay, a log, or one of its JSON files.
async fn bundle_file(
    State(reports): State<Reports>,
    UrlPath((run, dir, file)): UrlPath<(String, String, String)>,
) -> Response {
    let Some(root) = reports.0.as_ref().clone() else { return not_found("no such file") };
    let kind = match (dir.as_str(), file.as_str()) {
        ("replays", f) if f.ends_with(".gaos-replay.jsonl") => gaos_kernel::replay::MEDIA_TYPE,
        ("logs", f) if f.ends_with(".log") => "text/plain; charset=utf-8",
        _ => return not_found("no such file"),
    };
    match tokio::task::spawn_blocking(move || read(&root, &[&run, "bundle", &dir, &file])).await {
        Ok(Some(text)) => file_response(kind, text),
        _ => not_found("no such file"),
    }
}

/// `manifest.json`, `matches.jsonl`, `standings.json`, `digests.json`.
async fn data_file(State(reports): State<Reports>, UrlPath((run, file)): UrlPath<(String, String)>) -> Response {
    let Some(root) = reports.0.as_ref().clone() else { return not_found("no such file") };
    let kind = match file.as_str() {
        "manifest.json" | "standings.json" | "digests.json" => "application/json",
        "matches.jsonl" => "application/jsonl",
        _ => return not_found("no such file"),
    };
    match tokio::task::spawn_blocking(move || read(&root, &[&run, "bundle", &file])).await {
        Ok(Some(text)) => file_response(kind, text),
        _ => not_found("no such file"),
    }
}

fn file_response(kind: &'static str, text: String) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'; sandbox"),
        ],
        text,
    )
        .into_response()
}

/// `/arena/` for the tournaments in `dir` (see the module docs). A `dir`
/// that does not exist lists nothing.
pub fn arena_reports_router(dir: PathBuf) -> Router {
    let reports = Reports(Arc::new(std::fs::canonicalize(&dir).ok().filter(|d| d.is_dir())));
    Router::new()
        .route("/arena", get(list))
        .route("/arena/", get(list))
        .route("/arena/{run}/", get(run_report))
        .route("/arena/{run}/report.html", get(run_report))
        .route("/arena/{run}/bundle/{file}", get(data_file))
        .route("/arena/{run}/bundle/{dir}/{file}", get(bundle_file))
        .with_state(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_under_the_root_are_reachable() {
        let base = std::env::temp_dir().join(format!("gaos-arena-route-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("reports");
        std::fs::create_dir_all(root.join("run/bundle/replays")).expect("dirs");
        std::fs::write(root.join("run/bundle/replays/a.gaos-replay.jsonl"), "x\n").expect("replay");
        std::fs::write(base.join("secret.txt"), "secret").expect("outside");
        let root = std::fs::canonicalize(&root).expect("canonical");
        assert!(read(&root, &["run", "bundle", "replays", "a.gaos-replay.jsonl"]).is_some());
        assert!(read(&root, &["run", "bundle", "replays", ".."]).is_none());
        assert!(read(&root, &["..", "secret.txt"]).is_none());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(base.join("secret.txt"), root.join("run/bundle/replays/b.gaos-replay.jsonl"))
                .expect("link");
            std::os::unix::fs::symlink(&base, root.join("out")).expect("dir link");
            assert!(read(&root, &["run", "bundle", "replays", "b.gaos-replay.jsonl"]).is_none());
            assert!(read(&root, &["out", "secret.txt"]).is_none());
            assert_eq!(runs(&root), vec!["run".to_owned()]);
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
