//! The game registry: lookup by game id and adapter id, duplicate refusal.

use std::sync::Arc;

use gaos_games::counter::CounterGame;
use gaos_games::{GameRegistry, RegistryError};
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
