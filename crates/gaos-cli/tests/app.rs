//! `gaos_cli::App`, the command line as a library: built-in games by
//! default, `.game()` adds one or replaces a game of the same id (with a
//! notice), a refused game stops `run` with a usage error, and `run_from`
//! runs a real subcommand over the registry it was given.

use std::process::ExitCode;

use gaos_cli::App;
use gaos_games::GameOrigin;
use gaos_games::counter::CounterGame;
use gaos_json::Value;
use gaos_kernel::{AdapterRef, CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, SubmittedAction};

/// Counter's rules under the identity `game_ref`.
struct Counter {
    game_ref: GameRef,
}

impl Game for Counter {
    fn game_ref(&self) -> GameRef {
        self.game_ref.clone()
    }
    fn description(&self) -> &str {
        "a counter from a crate"
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

fn with_adapter(id: &str, adapter: &str) -> Counter {
    Counter {
        game_ref: GameRef {
            id: id.into(),
            version: "1".into(),
            adapter: AdapterRef { id: adapter.into(), version: "1".into() },
        },
    }
}

#[test]
fn new_serves_the_built_in_games_and_game_adds_a_crate_game() {
    let app = App::new();
    assert_eq!(app.registry().len(), 6);
    assert!(app.registry().entries().all(|(_, origin)| *origin == GameOrigin::BuiltIn));
    let app = app.game(Counter { game_ref: GameRef::conventional("product/counter") });
    assert_eq!(app.registry().len(), 7);
    assert_eq!(app.registry().origin("product/counter"), Some(&GameOrigin::Crate));
    assert!(app.notices().is_empty(), "a new id replaces nothing");
}

#[test]
fn a_game_with_a_built_in_id_replaces_it_with_a_notice_and_runs() {
    let app = App::new().game(with_adapter("conformance/counter", "product/counter/reducer"));
    assert_eq!(app.registry().len(), 6);
    assert_eq!(app.registry().origin("conformance/counter"), Some(&GameOrigin::Crate));
    assert_eq!(app.registry().get("conformance/counter").expect("registered").description(), "a counter from a crate");
    assert_eq!(app.notices(), ["the crate game conformance/counter replaces the built-in game conformance/counter"]);
    // kernel-bench runs conformance/counter: here the crate's, verified by
    // its own adapter id (the built-in adapter id is gone).
    assert!(app.registry().by_adapter("conformance/counter/reducer").is_none());
    assert_eq!(app.run_from(["gaos", "kernel-bench", "--transitions", "30", "--json"]), ExitCode::SUCCESS);
}

#[test]
fn a_game_whose_adapter_id_is_taken_stops_run_with_a_usage_error() {
    let app = App::new().game(with_adapter("product/thief", "conformance/hilo/reducer"));
    assert!(app.registry().get("product/thief").is_none(), "the refused game is not registered");
    assert_eq!(app.run_from(["gaos", "kernel-bench", "--transitions", "3"]), ExitCode::from(2));
}

#[test]
fn run_from_reports_bad_arguments_without_exiting_the_process() {
    assert_eq!(App::new().run_from(["gaos", "no-such-command"]), ExitCode::from(2));
    assert_eq!(App::new().run_from(["gaos", "--version"]), ExitCode::SUCCESS);
}
