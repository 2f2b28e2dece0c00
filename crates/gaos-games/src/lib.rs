//! The five GAOS conformance games, the `gaos/maze` benchmark game, and a
//! registry that finds games by game id or adapter id.
//!
//! ```
//! use gaos_games::GameRegistry;
//! use gaos_games::hilo::HiloReducer;
//! use gaos_kernel::TickReducer;
//!
//! let registry = GameRegistry::builtin();
//! let hilo = registry.get("conformance/hilo").expect("built in");
//! assert_eq!(hilo.game_ref().adapter.id, "conformance/hilo/reducer");
//! assert!(registry.by_adapter("conformance/hilo/reducer").is_some());
//!
//! // Concrete reducers are public, so benchmarks can skip type erasure.
//! let level = gaos_json::parse(r#"{"handSize": 3, "maxCard": 9}"#).unwrap();
//! let state = HiloReducer.init(&level, 7).unwrap();
//! let view = HiloReducer.view_for(&state, "alice");
//! assert_eq!(view.get("hand").unwrap().to_string(), "[4,4,5]");
//! assert_eq!(hilo.legal_actions(&view, "alice").len(), 3);
//! ```
//!
//! Each game module (`counter`, `hilo`, `race`, `sealed`, `tictactoe`) holds a
//! reducer implementing [`gaos_kernel::TickReducer`] and a type implementing
//! [`gaos_kernel::Game`], both following `conformance/GAMES.md` exactly:
//! their views feed every digest the conformance pack checks. Reducers return
//! a [`gaos_kernel::GameError`] on inputs that break the game's rules and never
//! panic. [`maze`] is a product game for single-agent benchmarks: a seeded
//! maze with fog of war.

mod common;
pub mod counter;
pub mod hilo;
pub mod maze;
pub mod race;
pub mod sealed;
pub mod tictactoe;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use gaos_kernel::Game;

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

/// Games by game id and by adapter id, so hosts resolve a session's game and
/// verifiers resolve a replay's adapter through one table.
#[derive(Clone, Default)]
pub struct GameRegistry {
    by_id: BTreeMap<String, Arc<dyn Game>>,
    by_adapter: BTreeMap<String, Arc<dyn Game>>,
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
            registry.register(game).expect("the built-in games have distinct ids");
        }
        registry
    }

    /// Add a game; refuses a game id or adapter id that is already taken.
    pub fn register(&mut self, game: Arc<dyn Game>) -> Result<(), RegistryError> {
        let game_ref = game.game_ref();
        if self.by_id.contains_key(&game_ref.id) {
            return Err(RegistryError::DuplicateGame(game_ref.id));
        }
        if self.by_adapter.contains_key(&game_ref.adapter.id) {
            return Err(RegistryError::DuplicateAdapter(game_ref.adapter.id));
        }
        self.by_adapter.insert(game_ref.adapter.id, Arc::clone(&game));
        self.by_id.insert(game_ref.id, game);
        Ok(())
    }

    /// The game with game id `id`.
    pub fn get(&self, id: &str) -> Option<Arc<dyn Game>> {
        self.by_id.get(id).cloned()
    }

    /// The game whose adapter (reducer implementation) has id `adapter_id`.
    pub fn by_adapter(&self, adapter_id: &str) -> Option<Arc<dyn Game>> {
        self.by_adapter.get(adapter_id).cloned()
    }

    /// Every registered game, in game-id order.
    pub fn list(&self) -> Vec<Arc<dyn Game>> {
        self.by_id.values().cloned().collect()
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
