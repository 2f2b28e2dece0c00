//! The deterministic-math declaration (`dmath`, RFC-007; RFC-006 §3.1,
//! kernel spec §2 and §4.3). The kernel never runs deterministic math
//! itself: the reducer does. It only records the declaration in the session
//! header, where rehydration compares it with the options (the header is
//! compared canonically) and finalization carries it into the replay's
//! `header.extensions.dmath`, which the replay validator and the verifier
//! check.

use gaos_json::{Value, obj};

/// The only `dmath` algorithm a session or a replay may declare.
pub const DMATH_ALGORITHM: &str = "dmath-1";

/// Which implementation of the algorithm the reducer runs on (advisory: both
/// produce the same bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmathBackend {
    Js,
    Wasm,
}

impl DmathBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            DmathBackend::Js => "js",
            DmathBackend::Wasm => "wasm",
        }
    }
}

/// `{algorithm, backend}`, recorded as the header's `dmath`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dmath {
    pub algorithm: String,
    pub backend: DmathBackend,
}

impl Dmath {
    /// The `dmath-1` declaration on `backend`.
    pub fn dmath_1(backend: DmathBackend) -> Self {
        Dmath { algorithm: DMATH_ALGORITHM.into(), backend }
    }

    /// The header's `dmath` value.
    pub fn to_value(&self) -> Value {
        obj! { "algorithm" => self.algorithm.as_str(), "backend" => self.backend.as_str() }.into()
    }

    /// Read `{"algorithm": A, "backend": "js"|"wasm"}` (exactly those keys);
    /// the algorithm is checked at kernel construction.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let map = value.as_object().ok_or("dmath must be an object")?;
        if let Some(key) = map.keys().find(|k| *k != "algorithm" && *k != "backend") {
            return Err(format!("unknown dmath property {key}"));
        }
        let algorithm = map.get("algorithm").and_then(Value::as_str).ok_or("dmath.algorithm must be a string")?;
        let backend = match map.get("backend").and_then(Value::as_str) {
            Some("js") => DmathBackend::Js,
            Some("wasm") => DmathBackend::Wasm,
            _ => return Err("dmath.backend must be \"js\" or \"wasm\"".into()),
        };
        Ok(Dmath { algorithm: algorithm.into(), backend })
    }
}
