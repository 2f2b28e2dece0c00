//! The OpenAPI 3 description of every route (`GET /openapi.json`).

/// The document, as served.
pub fn document() -> String {
    include_str!("openapi.json").to_owned()
}
