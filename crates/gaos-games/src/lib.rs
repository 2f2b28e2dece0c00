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

mod registry;

pub use registry::{GameOrigin, GameRegistry, RegistryError, Replaced, replacement_notice};
