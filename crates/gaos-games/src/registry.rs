//! [`GameRegistry`]: the one table of games a process serves, by game id and
//! by adapter id, each entry remembering where its game came from.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use gaos_kernel::Game;

use crate::{counter, hilo, maze, race, sealed, tictactoe};

/// Why [`GameRegistry::register`] refused a game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryError {
    /// Another registered game already uses this game id.
    DuplicateGame(String),
    /// Another registered game already uses this adapter id.
    DuplicateAdapter(String),
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::DuplicateGame(id) => {
                write!(f, "a game with id {id:?} is already registered")
            }
            RegistryError::DuplicateAdapter(id) => {
                write!(f, "a game with adapter id {id:?} is already registered")
            }
        }
    }
}

impl std::error::Error for RegistryError {}

/// Where a registered game came from: listings show it, and a game module
/// carries the digest a host checks before it rehydrates a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameOrigin {
    /// Compiled into `gaos-games` ([`GameRegistry::builtin`]).
    BuiltIn,
    /// A Rust type a downstream crate registered.
    Crate,
    /// A JavaScript game module loaded from `path`, whose bytes hash to
    /// `sha256` (lowercase hex).
    Module { path: PathBuf, sha256: String },
}

impl GameOrigin {
    /// How notices name a game of this origin ("the built-in game X").
    pub fn describe(&self, id: &str) -> String {
        match self {
            GameOrigin::BuiltIn => format!("the built-in game {id}"),
            GameOrigin::Crate => format!("the crate game {id}"),
            GameOrigin::Module { .. } => format!("game module {id}"),
        }
    }

    /// The module digest, for games that are modules.
    pub fn module_sha256(&self) -> Option<&str> {
        match self {
            GameOrigin::Module { sha256, .. } => Some(sha256),
            _ => None,
        }
    }
}

/// The entry [`GameRegistry::replace`] removed.
#[derive(Clone)]
pub struct Replaced {
    pub game: Arc<dyn Game>,
    pub origin: GameOrigin,
}

impl fmt::Debug for Replaced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replaced").field("game", &self.game.game_ref().id).field("origin", &self.origin).finish()
    }
}

#[derive(Clone)]
struct Entry {
    game: Arc<dyn Game>,
    origin: GameOrigin,
}

/// Games by game id and by adapter id, so hosts resolve a session's game and
/// verifiers resolve a replay's adapter through one table. A process builds
/// one (in `main`) and passes it to every part that resolves games.
#[derive(Clone, Default)]
pub struct GameRegistry {
    by_id: BTreeMap<String, Entry>,
    /// Adapter id → game id.
    by_adapter: BTreeMap<String, String>,
}

impl fmt::Debug for GameRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GameRegistry").field("games", &self.by_id.keys().collect::<Vec<_>>()).finish()
    }
}

impl GameRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding the five conformance games and `gaos/maze`.
    /// Other product games are added with [`GameRegistry::register`].
    pub fn builtin() -> Self {
        let mut registry = Self::new();
        let games: [Arc<dyn Game>; 6] = [
            Arc::new(counter::CounterGame),
            Arc::new(hilo::HiloGame),
            Arc::new(race::RaceGame),
            Arc::new(sealed::SealedGame),
            Arc::new(tictactoe::TicTacToeGame),
            Arc::new(maze::MazeGame),
        ];
        for game in games {
            registry.register_with_origin(game, GameOrigin::BuiltIn).expect("the built-in games have distinct ids");
        }
        registry
    }

    /// Add a game from a crate; refuses a game id or adapter id that is
    /// already taken.
    pub fn register(&mut self, game: Arc<dyn Game>) -> Result<(), RegistryError> {
        self.register_with_origin(game, GameOrigin::Crate)
    }

    /// Add a game of the given origin; refuses a game id or adapter id that
    /// is already taken.
    pub fn register_with_origin(&mut self, game: Arc<dyn Game>, origin: GameOrigin) -> Result<(), RegistryError> {
        let game_ref = game.game_ref();
        if self.by_id.contains_key(&game_ref.id) {
            return Err(RegistryError::DuplicateGame(game_ref.id));
        }
        if self.by_adapter.contains_key(&game_ref.adapter.id) {
            return Err(RegistryError::DuplicateAdapter(game_ref.adapter.id));
        }
        self.by_adapter.insert(game_ref.adapter.id, game_ref.id.clone());
        self.by_id.insert(game_ref.id, Entry { game, origin });
        Ok(())
    }

    /// Add a game, replacing the one registered under the same game id (a
    /// module or crate game overriding a built-in one for this process).
    /// Returns the replaced entry so the caller can say so. Refuses an
    /// adapter id that another game (with another game id) uses.
    pub fn replace(&mut self, game: Arc<dyn Game>, origin: GameOrigin) -> Result<Option<Replaced>, RegistryError> {
        let game_ref = game.game_ref();
        if let Some(owner) = self.by_adapter.get(&game_ref.adapter.id)
            && *owner != game_ref.id
        {
            return Err(RegistryError::DuplicateAdapter(game_ref.adapter.id));
        }
        let replaced = self.by_id.remove(&game_ref.id).map(|old| {
            self.by_adapter.remove(&old.game.game_ref().adapter.id);
            Replaced { game: old.game, origin: old.origin }
        });
        self.by_adapter.insert(game_ref.adapter.id, game_ref.id.clone());
        self.by_id.insert(game_ref.id, Entry { game, origin });
        Ok(replaced)
    }

    /// Add a game module loaded from `path` with digest `sha256`, replacing
    /// a game of the same id (see [`GameRegistry::replace`]).
    pub fn register_module(
        &mut self,
        game: Arc<dyn Game>,
        path: PathBuf,
        sha256: String,
    ) -> Result<Option<Replaced>, RegistryError> {
        self.replace(game, GameOrigin::Module { path, sha256 })
    }

    /// The game with game id `id`.
    pub fn get(&self, id: &str) -> Option<Arc<dyn Game>> {
        self.by_id.get(id).map(|entry| Arc::clone(&entry.game))
    }

    /// Where the game with game id `id` came from.
    pub fn origin(&self, id: &str) -> Option<&GameOrigin> {
        self.by_id.get(id).map(|entry| &entry.origin)
    }

    /// The game whose adapter (reducer implementation) has id `adapter_id`.
    pub fn by_adapter(&self, adapter_id: &str) -> Option<Arc<dyn Game>> {
        self.by_adapter.get(adapter_id).and_then(|id| self.get(id))
    }

    /// Every registered game, in game-id order.
    pub fn list(&self) -> Vec<Arc<dyn Game>> {
        self.by_id.values().map(|entry| Arc::clone(&entry.game)).collect()
    }

    /// Every registered game with its origin, in game-id order.
    pub fn entries(&self) -> impl Iterator<Item = (&Arc<dyn Game>, &GameOrigin)> {
        self.by_id.values().map(|entry| (&entry.game, &entry.origin))
    }

    /// Number of registered games.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True when no game is registered.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// The one-line stderr notice when `new` replaces `old` under game id `id`,
/// e.g. "game module X replaces the built-in game X".
pub fn replacement_notice(id: &str, new: &GameOrigin, old: &GameOrigin) -> String {
    format!("{} replaces {}", new.describe(id), old.describe(id))
}
