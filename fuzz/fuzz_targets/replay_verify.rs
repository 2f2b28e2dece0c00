//! The whole verifier with the built-in games: arbitrary bytes never panic,
//! problem lists stay bounded, and strict mode never accepts what default
//! mode does not.
#![no_main]

use std::sync::{Arc, OnceLock};

use gaos_games::GameRegistry;
use gaos_kernel::replay::{MAX_PROBLEMS, ReplaySource, Verdict, VerifyOptions, verify_replay};
use gaos_kernel::{Game, GameRef};
use libfuzzer_sys::fuzz_target;

fn registry() -> &'static GameRegistry {
    static REGISTRY: OnceLock<GameRegistry> = OnceLock::new();
    REGISTRY.get_or_init(GameRegistry::builtin)
}

fuzz_target!(|data: &[u8]| {
    let resolve = |game: &GameRef| -> Option<Arc<dyn Game>> { registry().by_adapter(&game.adapter.id) };
    let default = verify_replay(ReplaySource::Bytes(data), &resolve, &VerifyOptions::default());
    let strict = verify_replay(ReplaySource::Bytes(data), &resolve, &VerifyOptions { strict: true });
    assert!(default.problems.problems().len() <= MAX_PROBLEMS);
    assert_eq!(default.stage.is_none(), default.verdict == Verdict::AcceptedUnsigned);
    if strict.verdict == Verdict::AcceptedUnsigned {
        assert_eq!(default.verdict, Verdict::AcceptedUnsigned, "strict accepted what default mode did not");
    }
});
