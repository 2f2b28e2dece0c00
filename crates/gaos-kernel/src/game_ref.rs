//! Which game and adapter a session or replay names ([`GameRef`]): a leaf
//! module the event header, the game trait and the options all use.

use serde::{Deserialize, Serialize};

/// `{id, version}` of a game's adapter (its reducer implementation).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterRef {
    pub id: String,
    pub version: String,
}

/// `ReplayGameRef`: `{id, version, adapter: {id, version}}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRef {
    pub id: String,
    pub version: String,
    pub adapter: AdapterRef,
}

impl GameRef {
    /// The conformance convention: version "1", adapter `<id>/reducer` "1".
    pub fn conventional(id: &str) -> Self {
        GameRef {
            id: id.into(),
            version: "1".into(),
            adapter: AdapterRef { id: format!("{id}/reducer"), version: "1".into() },
        }
    }
}
