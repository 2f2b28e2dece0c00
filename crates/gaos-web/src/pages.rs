//! The page routes: each page is one HTML shell naming its module.

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::assets;

/// The pages, each as (title, module).
#[derive(Debug, Clone, Copy)]
enum Page {
    Home,
    Watch,
    Play,
    Replay,
}

impl Page {
    fn title(self) -> &'static str {
        match self {
            Page::Home => "GAOS host",
            Page::Watch => "Watch a session",
            Page::Play => "Play a seat",
            Page::Replay => "Replay viewer",
        }
    }

    fn module(self) -> &'static str {
        match self {
            Page::Home => "home.js",
            Page::Watch => "watch.js",
            Page::Play => "play.js",
            Page::Replay => "replay.js",
        }
    }
}

const SHELL: &str = include_str!("../assets/shell.html");

/// The pages are served with a strict content security policy: only this
/// origin's scripts, styles and connections, no inline script, no frames
/// but sandboxed ones the page makes itself, and shown in no other page's
/// frame (`frame-ancestors`; `guard.rs` adds `X-Frame-Options` for older
/// browsers).
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn page(page: Page) -> Response {
    let html = SHELL.replace("{{title}}", page.title()).replace("{{module}}", page.module());
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        html,
    )
        .into_response()
}

async fn asset(Path(name): Path<String>) -> Response {
    match assets::find(&name) {
        Some(a) => {
            (StatusCode::OK, [(header::CONTENT_TYPE, a.content_type), (header::CACHE_CONTROL, "no-cache")], a.body)
                .into_response()
        }
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "application/json")],
            "{\"code\":\"not_found\",\"error\":\"no such asset\"}",
        )
            .into_response(),
    }
}

pub(crate) fn router() -> Router {
    Router::new()
        .route("/", get(|| async { page(Page::Home) }))
        .route("/sessions/{id}", get(|| async { page(Page::Watch) }))
        .route("/sessions/{id}/play", get(|| async { page(Page::Play) }))
        .route("/replay", get(|| async { page(Page::Replay) }))
        .route("/assets/{name}", get(asset))
}
