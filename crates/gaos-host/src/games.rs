//! `GET /v1/games`: the games this host serves, as a client choosing one to
//! create needs them (identity, seats, levels, default cadence) and where
//! each came from (built in, a crate, or a game module and its digest).

use gaos_games::{GameOrigin, GameRegistry};
use gaos_json::Value;
use gaos_kernel::{AdapterRef, Game};
use serde::Serialize;

use crate::wire;

#[derive(Debug, Serialize)]
pub(crate) struct GameList {
    pub games: Vec<GameRow>,
}

#[derive(Debug, Serialize)]
pub(crate) struct GameRow {
    pub id: String,
    pub version: String,
    pub adapter: AdapterRef,
    pub description: String,
    pub seats: Vec<String>,
    pub levels: Vec<LevelRow>,
    /// `{"mode":"turns"}` or `{"mode":"ticks","ticksPerSecond":N}`: what a
    /// create request that names no cadence gets.
    pub cadence: Value,
    pub origin: OriginRow,
}

#[derive(Debug, Serialize)]
pub(crate) struct LevelRow {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<Value>,
    pub level: Value,
}

#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum OriginRow {
    Builtin,
    Crate,
    Module { path: String, sha256: String },
}

impl From<&GameOrigin> for OriginRow {
    fn from(origin: &GameOrigin) -> Self {
        match origin {
            GameOrigin::BuiltIn => OriginRow::Builtin,
            GameOrigin::Crate => OriginRow::Crate,
            GameOrigin::Module { path, sha256 } => {
                OriginRow::Module { path: path.display().to_string(), sha256: sha256.clone() }
            }
        }
    }
}

fn row(game: &dyn Game, origin: &GameOrigin) -> GameRow {
    let game_ref = game.game_ref();
    GameRow {
        id: game_ref.id,
        version: game_ref.version,
        adapter: game_ref.adapter,
        description: game.description().to_owned(),
        seats: game.seats(),
        levels: game
            .levels()
            .into_iter()
            .map(|level| LevelRow { id: level.id, version: level.version, level: level.level })
            .collect(),
        cadence: wire::value(&game.cadence().header()),
        origin: origin.into(),
    }
}

/// The listing of every game of `registry`, in game-id order.
pub(crate) fn listing(registry: &GameRegistry) -> Value {
    let games = registry.entries().map(|(game, origin)| row(game.as_ref(), origin)).collect();
    wire::value(&GameList { games })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_tagged_by_kind() {
        let module = GameOrigin::Module { path: "games/duel.mjs".into(), sha256: "ab".into() };
        let text = |origin: &GameOrigin| gaos_json::canonical_json(&wire::value(&OriginRow::from(origin)));
        assert_eq!(text(&GameOrigin::BuiltIn), r#"{"kind":"builtin"}"#);
        assert_eq!(text(&GameOrigin::Crate), r#"{"kind":"crate"}"#);
        assert_eq!(text(&module), r#"{"kind":"module","path":"games/duel.mjs","sha256":"ab"}"#);
    }
}
