//! The game registry: lookup by game id and adapter id, duplicate refusal.

use std::sync::Arc;

use gaos_games::counter::CounterGame;
use gaos_games::{GameOrigin, GameRegistry, RegistryError, replacement_notice};
use gaos_json::Value;
use gaos_kernel::{AdapterRef, CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, SubmittedAction};

/// A product game that reuses counter's rules under another identity.
struct Renamed {
    game_ref: GameRef,
}

impl Game for Renamed {
    fn game_ref(&self) -> GameRef {
        self.game_ref.clone()
    }
    fn description(&self) -> &str {
        "counter under another name"
    }
    fn seats(&self) -> Vec<String> {
        CounterGame.seats()
    }
    fn levels(&self) -> Vec<LevelSpec> {
        CounterGame.levels()
    }
    fn reducer(&self) -> DynReducer {
        CounterGame.reducer()
    }
    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        CounterGame.command_to_action(command, ctx)
    }
    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        CounterGame.legal_actions(view, seat)
    }
}

#[test]
fn builtin_registry_finds_games_by_id_and_adapter() {
    let registry = GameRegistry::builtin();
    assert_eq!(registry.len(), 6);
    assert!(!registry.is_empty());
    let ids: Vec<String> = registry.list().iter().map(|g| g.game_ref().id).collect();
    assert_eq!(
        ids,
        [
            "conformance/counter",
            "conformance/hilo",
            "conformance/race",
            "conformance/sealed",
            "conformance/tictactoe",
            "gaos/maze"
        ]
    );
    for id in &ids {
        let by_id = registry.get(id).expect("by id");
        let by_adapter = registry.by_adapter(&format!("{id}/reducer")).expect("by adapter");
        assert!(Arc::ptr_eq(&by_id, &by_adapter), "{id}");
    }
    assert!(registry.get("conformance/counter/reducer").is_none(), "adapter ids are not game ids");
    assert!(registry.by_adapter("conformance/counter").is_none(), "game ids are not adapter ids");
    assert!(registry.get("chess").is_none());
    let seats: Vec<Vec<String>> = registry.list().iter().map(|g| g.seats()).collect();
    let expected: [&[&str]; 6] =
        [&["a", "b"], &["alice", "bob"], &["p1", "p2"], &["north", "south"], &["x", "o"], &["player"]];
    assert_eq!(seats, expected);
    assert!(format!("{registry:?}").contains("conformance/hilo"));
}

#[test]
fn register_refuses_duplicate_ids() {
    let mut registry = GameRegistry::builtin();
    assert_eq!(
        registry.register(Arc::new(CounterGame)),
        Err(RegistryError::DuplicateGame("conformance/counter".into()))
    );
    let same_adapter = Renamed {
        game_ref: GameRef {
            id: "product/counter".into(),
            version: "1".into(),
            adapter: AdapterRef { id: "conformance/counter/reducer".into(), version: "1".into() },
        },
    };
    let err = registry.register(Arc::new(same_adapter)).expect_err("adapter id taken");
    assert_eq!(err, RegistryError::DuplicateAdapter("conformance/counter/reducer".into()));
    assert!(err.to_string().contains("adapter id"));
    assert_eq!(registry.len(), 6, "refused games leave the registry unchanged");

    registry.register(Arc::new(Renamed { game_ref: GameRef::conventional("product/counter") })).expect("new ids");
    assert_eq!(registry.len(), 7);
    assert_eq!(
        registry.by_adapter("product/counter/reducer").expect("registered").description(),
        "counter under another name"
    );
    assert!(GameRegistry::new().is_empty());
}

#[test]
fn entries_remember_their_origin() {
    let mut registry = GameRegistry::builtin();
    assert!(registry.entries().all(|(_, origin)| *origin == GameOrigin::BuiltIn));
    registry.register(Arc::new(Renamed { game_ref: GameRef::conventional("product/counter") })).expect("new ids");
    assert_eq!(registry.origin("product/counter"), Some(&GameOrigin::Crate));
    assert_eq!(registry.origin("conformance/hilo"), Some(&GameOrigin::BuiltIn));
    assert_eq!(registry.origin("chess"), None);
}

#[test]
fn replace_swaps_a_game_of_the_same_id_and_returns_the_old_one() {
    let mut registry = GameRegistry::builtin();
    let module = GameOrigin::Module { path: "./counter.mjs".into(), sha256: "ab".repeat(32) };
    // Same game id, another adapter: the old adapter id no longer resolves.
    let replacement = Renamed {
        game_ref: GameRef {
            id: "conformance/counter".into(),
            version: "2".into(),
            adapter: AdapterRef { id: "js/counter".into(), version: "1".into() },
        },
    };
    let replaced = registry.replace(Arc::new(replacement), module.clone()).expect("same id replaces").expect("old");
    assert_eq!(replaced.origin, GameOrigin::BuiltIn);
    assert_eq!(replaced.game.game_ref().adapter.id, "conformance/counter/reducer");
    assert_eq!(
        replacement_notice("conformance/counter", &module, &replaced.origin),
        "game module conformance/counter replaces the built-in game conformance/counter"
    );
    assert_eq!(registry.len(), 6);
    assert_eq!(registry.get("conformance/counter").expect("replaced").game_ref().version, "2");
    assert_eq!(
        registry.origin("conformance/counter").and_then(GameOrigin::module_sha256),
        Some("ab".repeat(32).as_str())
    );
    assert!(registry.by_adapter("conformance/counter/reducer").is_none());
    assert!(registry.by_adapter("js/counter").is_some());

    // A new id is simply added; an adapter id owned by another game is refused.
    let fresh = Renamed { game_ref: GameRef::conventional("product/new") };
    assert!(registry.register_module(Arc::new(fresh), "./new.mjs".into(), "cd".repeat(32)).expect("added").is_none());
    let thief = Renamed {
        game_ref: GameRef {
            id: "product/thief".into(),
            version: "1".into(),
            adapter: AdapterRef { id: "js/counter".into(), version: "1".into() },
        },
    };
    assert_eq!(
        registry.replace(Arc::new(thief), GameOrigin::Crate).map(|r| r.is_some()),
        Err(RegistryError::DuplicateAdapter("js/counter".into()))
    );
    assert_eq!(registry.len(), 7);
}
