//! A create request that names no cadence gets the game's own
//! (`Game::cadence`); one that names a cadence gets that one.

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_games::counter::CounterGame;
use gaos_host::auth::Caller;
use gaos_host::handle::open_local_host;
use gaos_host::requests::CreateRequest;
use gaos_host::{Host, HostOptions};
use gaos_json::Value;
use gaos_kernel::{
    Cadence, CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, SubmittedAction, TickRate,
};
use gaos_testkit::server::TempDir;

/// Counter's rules, offered at 4 ticks per second by default.
struct TickingCounter;

impl Game for TickingCounter {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional("product/ticking-counter")
    }
    fn description(&self) -> &str {
        "counter on a clock"
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
    fn cadence(&self) -> Cadence {
        Cadence::Ticks(TickRate::new(4.0).expect("a positive rate"))
    }
    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        CounterGame.command_to_action(command, ctx)
    }
    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        CounterGame.legal_actions(view, seat)
    }
}

/// The header cadence of a session, from its transcript's first line.
async fn header_cadence(host: &Host, body: &str) -> String {
    let created = host
        .create(&Caller::Operator, CreateRequest::from_value(gaos_json::parse(body).expect("JSON")).expect("a request"))
        .await
        .expect("created");
    let id =
        gaos_json::parse(&created.body).expect("JSON").get("sessionId").and_then(Value::as_str).expect("id").to_owned();
    let transcript = host.transcript(&Caller::Operator, &id).await.expect("transcript");
    let header = gaos_json::parse(transcript.lines().next().expect("a header line")).expect("JSON");
    let cadence = header.get("header").and_then(|h| h.get("cadence")).or_else(|| header.get("cadence"));
    gaos_json::canonical_json(cadence.expect("the header records the cadence"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_without_cadence_gets_the_games_default() {
    let dir = TempDir::new("gaos-default-cadence");
    let mut registry = GameRegistry::builtin();
    registry.register(Arc::new(TickingCounter)).expect("a new id");
    let host = open_local_host(dir.path(), HostOptions::new(registry)).await.expect("a host");

    assert_eq!(
        header_cadence(&host, r#"{"game":"product/ticking-counter"}"#).await,
        r#"{"mode":"ticks","ticksPerSecond":4}"#
    );
    assert_eq!(
        header_cadence(&host, r#"{"game":"product/ticking-counter","cadence":{"mode":"turns"}}"#).await,
        r#"{"mode":"turns"}"#
    );
    assert_eq!(header_cadence(&host, r#"{"game":"conformance/counter"}"#).await, r#"{"mode":"turns"}"#);
}
