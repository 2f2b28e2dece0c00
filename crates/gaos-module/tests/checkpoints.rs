//! Kernel checkpoints of JS games: the kernel's own crash-point check (the
//! shared player of gaos-kernel's checkpoint tests) run on the JS ports of
//! the conformance games. A module's state is checkpointed as its JSON text
//! and re-derived by the engine on restore.

#[path = "../../gaos-kernel/tests/checkpoint_support/mod.rs"]
mod checkpoint_support;

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::Value;
use gaos_kernel::{Game, SessionKernel, TickReducer};
use gaos_module::{ModuleGame, ModuleLimits};
use gaos_testkit::conformance_outputs::project_conformance_dir;

/// The conformance games, each replaced by its JS port.
fn ports() -> GameRegistry {
    let mut registry = GameRegistry::new();
    for name in ["counter", "hilo", "race", "sealed", "tictactoe"] {
        let path = project_conformance_dir().join("modules").join(format!("{name}.mjs"));
        let module =
            ModuleGame::load(&path, &ModuleLimits::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(module.game_ref().id, format!("conformance/{name}"));
        registry.register(Arc::new(module)).expect("distinct ids");
    }
    registry
}

#[test]
fn js_ports_restore_from_checkpoint_and_tail_like_the_full_log() {
    checkpoint_support::use_games(ports());
    checkpoint_support::check_crash_points();
}

#[test]
fn a_module_state_is_checkpointed_as_its_own_text_and_keeps_its_key_order() {
    let path = project_conformance_dir().join("modules/counter.mjs");
    let module = ModuleGame::load(&path, &ModuleLimits::default()).expect("the counter port loads");
    let reducer = module.reducer();
    let state = reducer.init(&gaos_json::parse(r#"{"rounds":3}"#).expect("json"), 1).expect("init");
    let encoded = reducer.encode_state(&state).expect("a module state encodes");
    // Not canonical: `rounds` before `actionsUsed`, as the module wrote it.
    let Value::String(text) = &encoded else { panic!("a module state encodes as its text, not {encoded}") };
    assert_eq!(text, r#"{"rounds":3,"round":0,"total":0,"actionsUsed":0}"#);
    let decoded = reducer.decode_state(&encoded).expect("the text decodes");
    assert_eq!(reducer.view(&decoded), reducer.view(&state));
    assert_eq!(reducer.view_for(&decoded, "a"), reducer.view_for(&state, "a"));

    let refusal =
        reducer.decode_state(&gaos_json::parse(r#"{"rounds":3}"#).expect("json")).expect_err("a value is refused");
    assert!(refusal.message.contains("must be the module's JSON text"), "{}", refusal.message);
    let refusal =
        reducer.decode_state(&Value::String(r#"{"rounds": 3}"#.into())).expect_err("a non-stringify text is refused");
    assert!(refusal.message.contains("does not survive"), "{}", refusal.message);
}

#[test]
fn a_module_session_restored_at_its_head_has_the_live_digest() {
    checkpoint_support::use_games(ports());
    let options = checkpoint_support::options_for(
        "conformance/hilo",
        &gaos_json::parse(r#"{"handSize":6,"maxCard":9}"#).expect("json"),
        "restored-hilo",
        gaos_kernel::SessionLimits::default(),
    );
    let mut player = checkpoint_support::Player::new(Arc::clone(&options), 7);
    player.play(60, Some(2), None);
    let last = player.kernel.transition_revision();
    let stored = player.checkpoints.last().expect("the player checkpointed").clone();
    let checkpoint = gaos_kernel::KernelCheckpoint::from_json(&stored.json).expect("reads back");
    let tail = checkpoint_support::between(&player.store, stored.revision, last);
    let restored = SessionKernel::restore(options, &checkpoint, tail, None).expect("restores");
    assert_eq!(restored.digest(), player.kernel.digest());
}
