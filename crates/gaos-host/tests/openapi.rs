//! `/openapi.json` describes every route of the router, with its methods,
//! and every error code a host answers (the 404 answer points clients to
//! this document, so it must not miss a route).

use std::collections::BTreeSet;

fn document() -> gaos_json::Value {
    gaos_json::parse(include_str!("../src/openapi.json")).expect("openapi.json is JSON")
}

/// `(path, method)` of every `.route(...)` of `http.rs`'s router.
fn router_routes() -> BTreeSet<(String, String)> {
    let source = include_str!("../src/http.rs");
    let mut routes = BTreeSet::new();
    for line in source.lines().map(str::trim).filter(|l| l.starts_with(".route(\"")) {
        let path = line.trim_start_matches(".route(\"").split('"').next().expect("a path").to_owned();
        let handlers = &line[line.find(',').expect("a handler")..];
        for method in ["get", "post", "put", "delete", "patch"] {
            if handlers.contains(&format!("{method}(")) || handlers.contains(&format!(".{method}(")) {
                routes.insert((path.clone(), method.to_owned()));
            }
        }
    }
    assert!(routes.len() >= 28, "found the router's routes: {routes:?}");
    routes
}

fn documented_routes() -> BTreeSet<(String, String)> {
    let document = document();
    let paths = document.get("paths").and_then(gaos_json::Value::as_object).expect("paths").clone();
    paths
        .iter()
        .flat_map(|(path, item)| {
            // Keys of a path item other than its operations (parameters,
            // summary) are not routes.
            let methods: Vec<String> = item
                .as_object()
                .expect("a path item")
                .keys()
                .filter(|k| ["get", "post", "put", "delete", "patch"].contains(&k.as_str()))
                .cloned()
                .collect();
            methods.into_iter().map(move |method| (path.clone(), method))
        })
        .collect()
}

#[test]
fn every_route_of_the_router_is_documented_and_nothing_else() {
    let router = router_routes();
    let documented = documented_routes();
    let missing: Vec<_> = router.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&router).collect();
    assert!(missing.is_empty(), "routes the document misses: {missing:?}");
    assert!(extra.is_empty(), "documented routes the router does not have: {extra:?}");
}

#[test]
fn every_error_code_a_host_answers_is_listed() {
    let document = document();
    let code = ["components", "schemas", "Error", "properties", "code", "x-known-codes"]
        .iter()
        .try_fold(&document, |value, key| value.get(key))
        .expect("the known codes");
    let listed: BTreeSet<&str> =
        code.as_array().expect("the known codes").iter().map(|c| c.as_str().expect("a code")).collect();
    let hosts: BTreeSet<&str> = gaos_session::ErrorCode::KNOWN
        .iter()
        .filter(|code| code.http_status().is_some())
        .map(gaos_session::ErrorCode::as_str)
        .collect();
    assert_eq!(listed, hosts, "openapi.json's codes are ErrorCode's host codes");
}
