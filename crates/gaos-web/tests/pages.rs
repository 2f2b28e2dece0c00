//! The page and asset routes over real HTTP: every page is the HTML shell
//! with a strict content security policy, assets have their types, and an
//! unknown asset is a JSON 404.

use std::sync::Arc;

use gaos_testkit::http::get;
use gaos_web::{WebOptions, router};

async fn serve() -> String {
    let options = WebOptions {
        registry: gaos_games::GameRegistry::builtin(),
        authorize: Arc::new(|t: &str| (t == "good").then_some(gaos_web::TokenRole::Participant)),
        bench_reports: None,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router(options)).await.unwrap() });
    format!("http://{address}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_and_assets_answer_with_their_types() {
    let base = serve().await;
    tokio::task::spawn_blocking(move || {
        for (path, module) in [
            ("/", "home.js"),
            ("/sessions/s-1", "watch.js"),
            ("/sessions/s-1/play", "play.js"),
            ("/replay", "replay.js"),
        ] {
            let page = get(&base, path, None);
            assert_eq!(page.status, 200, "{path}");
            assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"), "{path}");
            let csp = page.header("content-security-policy").unwrap_or_default();
            assert!(csp.contains("script-src 'self'") && csp.contains("connect-src 'self'"), "{path}: {csp}");
            assert!(page.text().contains(&format!("/assets/{module}")), "{path} loads {module}");
            assert!(page.text().contains("role=\"alert\""), "{path} has the alert region");
        }
        let css = get(&base, "/assets/app.css", None);
        assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
        let js = get(&base, "/assets/play.js", None);
        assert_eq!(js.header("content-type"), Some("text/javascript; charset=utf-8"));
        let missing = get(&base, "/assets/nothing.js", None);
        assert_eq!(missing.status, 404);
        assert_eq!(missing.json()["code"], "not_found");
        let refused = gaos_testkit::http::post_bytes(&base, "/v1/replays/frames", Some("bad"), b"x");
        assert_eq!(refused.status, 401, "{}", refused.text());
    })
    .await
    .unwrap();
}
