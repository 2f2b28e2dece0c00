//! `POST /v1/games/{id}/render` over real HTTP: a module's `render(view,
//! seat)` and a Rust game's `Game::render` answer `{html}`; a game without a
//! renderer is a 404 the pages fall back from; bad bodies, unknown games,
//! missing tokens and failing renderers are typed 4xx errors.

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::Value;
use gaos_kernel::{CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, SubmittedAction};
use gaos_testkit::http::{assert_error, post, post_bytes};
use gaos_web::{WebOptions, router};
use serde_json::json;

/// A built-in game with a Rust renderer: the trait method, not a module.
struct Drawn {
    inner: Arc<dyn Game>,
    fail: bool,
}

impl Game for Drawn {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional(if self.fail { "test/drawn-broken" } else { "test/drawn" })
    }
    fn description(&self) -> &str {
        "the counter, drawn"
    }
    fn seats(&self) -> Vec<String> {
        self.inner.seats()
    }
    fn levels(&self) -> Vec<LevelSpec> {
        self.inner.levels()
    }
    fn reducer(&self) -> DynReducer {
        self.inner.reducer()
    }
    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        self.inner.command_to_action(command, ctx)
    }
    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        self.inner.legal_actions(view, seat)
    }
    fn render(&self, view: &Value, seat: Option<&str>) -> Option<Result<String, GameError>> {
        if self.fail {
            return Some(Err(GameError::new("the drawing board is broken")));
        }
        Some(Ok(format!("<p>{} sees {}</p>", seat.unwrap_or("everyone"), view)))
    }
}

fn registry() -> GameRegistry {
    let mut registry = GameRegistry::builtin();
    let counter = registry.list().into_iter().find(|g| g.game_ref().id.contains("counter")).expect("a counter game");
    for fail in [false, true] {
        registry.register(Arc::new(Drawn { inner: Arc::clone(&counter), fail })).expect("registered");
    }
    let module = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../gaos-module/tests/modules/pictured.mjs");
    let game = gaos_module::ModuleGame::load(&module, &gaos_module::ModuleLimits::default()).expect("pictured loads");
    registry.register(Arc::new(game)).expect("registered");
    registry
}

async fn serve() -> String {
    let options = WebOptions {
        registry: registry(),
        authorize: Arc::new(|t: &str| (t == "good").then_some(gaos_web::TokenRole::Participant)),
        bench_reports: None,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router(options)).await.unwrap() });
    format!("http://{address}")
}

const PICTURED: &str = "/v1/games/test%2Fpictured/render";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_draw_the_view_they_are_sent_and_refusals_are_typed() {
    let base = serve().await;
    tokio::task::spawn_blocking(move || {
        let token = Some("good");
        let view = json!({"status": "playing", "round": 1, "score": {"east": 1, "west": 0}, "last": {"east": 7, "west": 3}, "hand": [4, 9]});

        // A module's render, for a seat and for the public view.
        let seat = post(&base, PICTURED, token, &json!({"view": view, "seat": "east"}));
        assert_eq!(seat.status, 200, "{}", seat.text());
        let html = seat.json()["html"].as_str().expect("html").to_owned();
        assert!(html.starts_with("<svg") && html.contains("east's view") && html.contains("east 1 : 0 west"), "{html}");
        assert!(html.contains("aria-label=\"card 4\"") && html.contains("aria-label=\"card 9\""), "{html}");
        let public = post(&base, PICTURED, token, &json!({"view": view, "seat": null}));
        assert!(public.json()["html"].as_str().unwrap().contains("public view"), "{}", public.text());
        let no_seat = post(&base, PICTURED, token, &json!({"view": view}));
        assert_eq!(no_seat.json(), public.json(), "an absent seat is the public view");

        // A Rust game's renderer.
        let drawn = post(&base, "/v1/games/test%2Fdrawn/render", token, &json!({"view": {"n": 2}, "seat": "player"}));
        assert_eq!(drawn.json()["html"], "<p>player sees {\"n\":2}</p>", "{}", drawn.text());

        // A game without a renderer, an unknown game, a failing renderer.
        let counter = registry().list().into_iter().map(|g| g.game_ref().id).find(|id| id.contains("counter")).unwrap();
        let plain = post(&base, &format!("/v1/games/{}/render", counter.replace('/', "%2F")), token, &json!({"view": {}}));
        assert_error(&plain, 404, "no_renderer");
        assert_error(&post(&base, "/v1/games/nope/render", token, &json!({"view": {}})), 404, "unknown_game");
        let broken = post(&base, "/v1/games/test%2Fdrawn-broken/render", token, &json!({"view": {}}));
        assert_error(&broken, 422, "render_failed");
        assert!(broken.json()["error"].as_str().unwrap().contains("the drawing board is broken"));
        // The module's own failure: its render reads view.score.east.
        let thrown = post(&base, PICTURED, token, &json!({"view": {"round": 0}}));
        assert_error(&thrown, 422, "render_failed");
        assert!(thrown.json()["error"].as_str().unwrap().contains("render(view, seat) of test/pictured threw TypeError"), "{}", thrown.text());

        // Bodies and tokens.
        for body in [&b"[]"[..], b"42", b"{", b"{\"seat\":\"east\"}", b"{\"view\":{},\"seat\":5}", b"{\"view\":{},\"seat\":\"\"}", b"{\"view\":{},\"extra\":1}"] {
            let r = post_bytes(&base, PICTURED, token, body);
            assert_error(&r, 400, "invalid_request");
        }
        let huge = format!("{{\"view\":\"{}\"}}", "x".repeat(1024 * 1024 + 1));
        assert_error(&post_bytes(&base, PICTURED, token, huge.as_bytes()), 413, "payload_too_large");
        assert_error(&post(&base, PICTURED, None, &json!({"view": view})), 401, "unauthorized");
        assert_error(&post(&base, PICTURED, Some("bad"), &json!({"view": view})), 401, "unauthorized");
    })
    .await
    .unwrap();
}
