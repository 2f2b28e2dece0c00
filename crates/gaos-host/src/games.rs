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

/// The listing of every game of `registry`, in game-id order: the body of
/// `GET /v1/games` (`{"games": [{id, version, adapter, description, seats,
/// levels, cadence, origin}]}`), which `gaos games --json` prints too.
pub fn listing(registry: &GameRegistry) -> Value {
    let games = registry.entries().map(|(game, origin)| row(game.as_ref(), origin)).collect();
    wire::value(&GameList { games })
}

/// The module digest to record with a new session of `game_id`.
pub(crate) fn module_sha256(registry: &GameRegistry, game_id: &str) -> Option<String> {
    registry.origin(game_id).and_then(GameOrigin::module_sha256).map(str::to_owned)
}

/// Refuse to rehydrate session `session_id` when the game it was created
/// with (`stored`: a module digest, or none for a built-in or crate game)
/// is not the one this host now serves under `game_id`: replaying its
/// events through other rules would rebuild another game. `409
/// module_changed`, naming both sides; the session is left as it is, so
/// serving the original module again brings it back.
pub(crate) fn check_module(
    registry: &GameRegistry,
    session_id: &str,
    game_id: &str,
    stored: Option<&str>,
) -> Result<(), crate::error::HostError> {
    let origin = registry.origin(game_id);
    let current = origin.and_then(GameOrigin::module_sha256);
    if current == stored {
        return Ok(());
    }
    let created = match stored {
        Some(sha256) => format!("game module {game_id} with sha256 {sha256}"),
        None => format!("{game_id} as a built-in or crate game"),
    };
    let now = match origin {
        Some(GameOrigin::Module { path, sha256 }) => {
            format!("the game module {game_id} this host loaded ({}) has sha256 {sha256}", path.display())
        }
        _ => format!("this host serves {game_id} as a built-in or crate game"),
    };
    Err(crate::error::HostError::new(
        gaos_session::ErrorCode::ModuleChanged,
        format!("session {session_id} was created with {created}, but {now}; serve the original module to resume it"),
    ))
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

    #[test]
    fn a_session_rehydrates_only_under_the_game_it_was_created_with() {
        let builtin = GameRegistry::builtin();
        let counter = builtin.get("conformance/counter").expect("built in");
        let mut module = builtin.clone();
        module.register_module(counter, "counter.mjs".into(), "cd".repeat(32)).expect("replaces");
        assert_eq!(module_sha256(&module, "conformance/counter"), Some("cd".repeat(32)));
        assert_eq!(module_sha256(&builtin, "conformance/counter"), None);

        assert!(check_module(&builtin, "s", "conformance/counter", None).is_ok());
        assert!(check_module(&module, "s", "conformance/counter", Some(&"cd".repeat(32))).is_ok());
        let changed = check_module(&module, "s", "conformance/counter", Some(&"ab".repeat(32))).expect_err("changed");
        assert_eq!((changed.status.as_u16(), changed.code.as_str()), (409, "module_changed"));
        assert!(changed.message.contains(&"ab".repeat(32)) && changed.message.contains(&"cd".repeat(32)));
        let now_module = check_module(&module, "s", "conformance/counter", None).expect_err("was built in");
        assert!(now_module.message.contains("built-in or crate game"), "{}", now_module.message);
        let now_builtin = check_module(&builtin, "s", "conformance/counter", Some("ab")).expect_err("was a module");
        assert!(now_builtin.message.contains("serves conformance/counter as a built-in"), "{}", now_builtin.message);
    }
}
