//! The initial views and kernel digests of `vectors/digests.json`, recomputed
//! from the games' reducers.

use gaos_games::GameRegistry;
use gaos_json::{Map, Value, canonical_json, fnv1a32};
use gaos_kernel::run_level_seed;
use gaos_testkit::{array_field, read_conformance_json, str_field};

fn u64_field(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or_else(|| panic!("missing integer field {key}"))
}

#[test]
fn initial_views_and_kernel_digests_match_the_reference() {
    let vectors = read_conformance_json("vectors/digests.json");
    let examples = array_field(&vectors, "examples");
    assert!(examples.len() >= 5, "suspiciously few digest examples");
    let registry = GameRegistry::builtin();
    let mut games_seen = std::collections::BTreeSet::new();
    for example in examples {
        let game_id = str_field(example, "game");
        games_seen.insert(game_id.to_owned());
        let kernel = example.get("kernel").expect("kernel");
        let session = str_field(kernel, "sessionId");
        let seed = u32::try_from(u64_field(kernel, "seed")).expect("u32 seed");
        let init_seed = match str_field(kernel, "seedPolicy") {
            "explicit" => seed,
            "gaos.run-level-seed.v1" => run_level_seed(seed, 0).expect("level 0"),
            other => panic!("{session}: unknown seed policy {other}"),
        };
        let game = registry.get(game_id).unwrap_or_else(|| panic!("{session}: no game {game_id}"));
        let reducer = game.reducer();
        let state = reducer
            .init(kernel.get("level").expect("level"), init_seed)
            .unwrap_or_else(|e| panic!("{session}: init failed: {e}"));

        let expected_views = array_field(example, "views");
        let seats: Vec<&str> = array_field(kernel, "seats").iter().map(|s| s.as_str().expect("seat")).collect();
        assert_eq!(expected_views.len(), seats.len(), "{session}: one view per seat");
        for expected in expected_views {
            let seat = str_field(expected, "seat");
            let text = canonical_json(&reducer.view_for(&state, seat));
            assert_eq!(text, str_field(expected, "canonicalView"), "{session}/{seat}");
            assert_eq!(u64::from(fnv1a32(&text)), u64_field(expected, "viewDigest"), "{session}/{seat}");
        }

        // Map keys iterate in code-point order, as the kernel digest requires.
        let views: Map = seats.iter().map(|seat| ((*seat).to_owned(), reducer.view_for(&state, seat))).collect();
        let preimage = canonical_json(&gaos_json::obj! { "cursor" => 0u32, "tick" => 0u32, "views" => views }.into());
        assert_eq!(preimage, str_field(example, "kernelDigestPreimage"), "{session}");
        assert_eq!(u64::from(fnv1a32(&preimage)), u64_field(example, "kernelDigest"), "{session}");
        assert_eq!(str_field(example, "tickId"), format!("{session}:0"));
    }
    // Every conformance game has reference vectors; product games (gaos/maze) have none.
    for game in registry.list().into_iter().filter(|g| g.game_ref().id.starts_with("conformance/")) {
        assert!(games_seen.contains(&game.game_ref().id), "no digest example for {}", game.game_ref().id);
    }
}
