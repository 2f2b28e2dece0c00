//! The benchmark runs a host was given (`gaos serve --bench-reports DIR`):
//! `GET /bench/` lists the runs in `DIR` (each an output directory of
//! `gaos bench run`: `bundle/`, `scores.svg`), `GET /bench/{run}/` is the
//! run's report — the page `gaos bench run` writes, rendered from the bundle
//! as it is now, its episode links opening this host's replay viewer — and
//! `GET /bench/{run}/bundle/episodes/{file}` is one replay file.
//!
//! A host does not run benchmarks itself (`gaos bench run` runs each on a
//! private in-process host); it serves what it is pointed at, read-only.
//! These are page navigations, which carry no token: the directory is
//! published to whoever reaches the host, so the operator opts in.
//!
//! Only regular files whose canonical path stays under the canonical
//! reports directory and the run are read: an unpacked bundle whose files
//! (or whose run or bundle directory) are symbolic links pointing at
//! `operator-token` or `host-key` publishes nothing.

use std::path::{Path, PathBuf};

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use gaos_json::Value;
use gaos_runner::benchmark::{Aggregate, BenchmarkManifest, read_bundle_dir};

use crate::bench_report::{ReplayLinks, escape, href, report_html};
use crate::frames_route::error;

/// The report is a document of its own: its inline style, nothing else
/// (and `data:` images, as the arena report's chart is).
pub(crate) const REPORT_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One path segment naming a run or a file: no separators, nothing hidden.
pub(crate) fn segment(name: &str) -> Option<&str> {
    let plain = !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\', '\0']);
    plain.then_some(name)
}

pub(crate) fn not_found(what: &str) -> Response {
    error(StatusCode::NOT_FOUND, "not_found", what)
}

pub(crate) fn html(body: String) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, REPORT_CSP),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Run `run`'s directory, canonical, when it and its `bundle/` are real
/// directories of the reports directory (no symbolic link leads elsewhere).
fn run_root(dir: &Path, run: &str) -> Option<PathBuf> {
    let root = dir.canonicalize().ok()?.join(segment(run)?);
    let real = |path: &Path| path.canonicalize().ok().filter(|c| c == path && c.is_dir());
    real(&root)?;
    real(&root.join("bundle"))?;
    Some(root)
}

/// `relative` in run `run`, when it is a regular file whose canonical path
/// stays under the run's directory.
fn run_file(dir: &Path, run: &str, relative: &Path) -> Option<PathBuf> {
    let root = run_root(dir, run)?;
    let path = root.join(relative).canonicalize().ok()?;
    let regular = std::fs::metadata(&path).ok()?.is_file();
    (regular && path.starts_with(&root)).then_some(path)
}

/// The runs under `dir`: directories holding a `bundle/`, by name.
fn runs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| run_root(dir, n).is_some())
        .collect();
    names.sort();
    names
}

fn listing(dir: &Path) -> String {
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Benchmark runs</title>\n</head>\n<body>\n<main>\n<h1>Benchmark runs</h1>\n<ul id=\"runs\">\n",
    );
    let found = runs(dir);
    for run in &found {
        out.push_str(&format!("<li><a href=\"/bench/{}/\">{}</a></li>\n", escape(&href(run)), escape(run)));
    }
    if found.is_empty() {
        out.push_str("<li>No runs yet: <code>gaos bench run MANIFEST --out DIR/NAME</code> writes one.</li>\n");
    }
    out.push_str("</ul>\n</main>\n</body>\n</html>\n");
    out
}

/// The aggregate a bundle carries (`{aggregateScore, taskScores}`), tasks
/// in manifest order.
fn carried_aggregate(manifest: &BenchmarkManifest, scores: &Value) -> Aggregate {
    let task = |id: &str| scores.get("taskScores").and_then(|t| t.get(id)).and_then(Value::as_f64).unwrap_or(0.0);
    Aggregate {
        aggregate_score: scores.get("aggregateScore").and_then(Value::as_f64).unwrap_or(0.0),
        task_scores: manifest.tasks.iter().map(|t| (t.id.clone(), task(&t.id))).collect(),
    }
}

/// The run's report page; `Err`: why its bundle cannot be shown.
fn report(dir: &Path, run: &str) -> Result<String, String> {
    let root = run_root(dir, run).ok_or_else(|| format!("run {run}: not a directory of the reports directory"))?;
    // The bundle reader refuses symbolic links inside the bundle.
    let bundle =
        read_bundle_dir(&root.join("bundle")).map_err(|e| format!("run {run}: the bundle does not read: {e}"))?;
    let manifest =
        BenchmarkManifest::from_value(&bundle.manifest).map_err(|e| format!("run {run}: its manifest: {e}"))?;
    let aggregate = carried_aggregate(&manifest, &bundle.scores);
    // The chart `gaos bench run` drew beside the bundle (absent: no chart).
    let chart = run_file(dir, run, Path::new("scores.svg"))
        .and_then(|path| std::fs::read_to_string(path).ok())
        .unwrap_or_default();
    let base = format!("/bench/{run}");
    Ok(report_html(&manifest, &aggregate, &bundle.episodes, &chart, ReplayLinks::HostViewer { base: &base }))
}

async fn list(State(dir): State<PathBuf>) -> Response {
    match tokio::task::spawn_blocking(move || listing(&dir)).await {
        Ok(page) => html(page),
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal", "listing the runs failed"),
    }
}

async fn run_report(State(dir): State<PathBuf>, UrlPath(run): UrlPath<String>) -> Response {
    let Some(run) = segment(&run).map(str::to_owned) else { return not_found("no such run") };
    if run_root(&dir, &run).is_none() {
        return not_found("no such run");
    }
    match tokio::task::spawn_blocking(move || report(&dir, &run)).await {
        Ok(Ok(page)) => html(page),
        Ok(Err(why)) => error(StatusCode::UNPROCESSABLE_ENTITY, "malformed_bundle", &why),
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal", "rendering the report failed"),
    }
}

async fn episode_file(State(dir): State<PathBuf>, UrlPath((run, file)): UrlPath<(String, String)>) -> Response {
    let (Some(run), Some(file)) = (segment(&run), segment(&file)) else { return not_found("no such replay") };
    if !file.ends_with(".gaos-replay.jsonl") {
        return not_found("no such replay");
    }
    let (run, relative) = (run.to_owned(), Path::new("bundle/episodes").join(file));
    let read = move || run_file(&dir, &run, &relative).map(std::fs::read_to_string);
    match tokio::task::spawn_blocking(read).await {
        Ok(Some(Ok(text))) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, gaos_kernel::replay::MEDIA_TYPE), (header::CACHE_CONTROL, "no-cache")],
            text,
        )
            .into_response(),
        _ => not_found("no such replay"),
    }
}

pub(crate) fn router(dir: PathBuf) -> Router {
    Router::new()
        .route("/bench", get(list))
        .route("/bench/", get(list))
        .route("/bench/{run}/", get(run_report))
        .route("/bench/{run}/report.html", get(run_report))
        .route("/bench/{run}/bundle/episodes/{file}", get(episode_file))
        .with_state(dir)
}
