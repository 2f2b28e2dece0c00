//! Arena ratings: synthetic tournaments between entrants of known
//! Bradley–Terry strength are rated back within their 95 % intervals, the
//! same matches always give the same numbers to the last bit, and the
//! standings count a two-seat match as one game and a bigger one pairwise.

use std::collections::{BTreeMap, BTreeSet};

use gaos_json::canonical_json;
use gaos_kernel::seed::Mulberry32;
use gaos_runner::arena::{ArenaManifest, MatchRecord, MatchResult, Rating, rate, standings};

/// Play `games` games between every pair of entrants whose true ratings
/// (Elo scale) are `truth`: `i` beats `j` with probability
/// `1 / (1 + 10^((rⱼ − rᵢ)/400))`, and a game within `draw_band` of ½ of
/// that probability is a draw. One game per match.
fn synthetic(truth: &[f64], games: usize, draw_band: f64, seed: u32) -> Vec<Vec<(usize, usize, f64)>> {
    let mut rng = Mulberry32::new(seed);
    let mut matches = Vec::new();
    for i in 0..truth.len() {
        for j in i + 1..truth.len() {
            let p = 1.0 / (1.0 + 10f64.powf((truth[j] - truth[i]) / 400.0));
            for game in 0..games {
                let draw = rng.next_f64();
                let score = if (draw - p).abs() < draw_band / 2.0 {
                    0.5
                } else if draw < p {
                    1.0
                } else {
                    0.0
                };
                // Alternate who is listed first, as seat rotation would.
                matches.push(if game % 2 == 0 { vec![(i, j, score)] } else { vec![(j, i, 1.0 - score)] });
            }
        }
    }
    matches
}

fn centered(truth: &[f64]) -> Vec<f64> {
    let mean = truth.iter().sum::<f64>() / truth.len() as f64;
    truth.iter().map(|t| t - mean + 1000.0).collect()
}

/// A tournament that went exactly as the true ratings say it should:
/// between every pair, `games` games of which `i` won its expected share
/// (rounded), shuffled into matches in a seeded order.
fn as_expected(truth: &[f64], games: usize, seed: u32) -> Vec<Vec<(usize, usize, f64)>> {
    let mut matches = Vec::new();
    for i in 0..truth.len() {
        for j in i + 1..truth.len() {
            let p = 1.0 / (1.0 + 10f64.powf((truth[j] - truth[i]) / 400.0));
            let wins = (p * games as f64).round() as usize;
            for game in 0..games {
                matches.push(vec![(i, j, if game < wins { 1.0 } else { 0.0 })]);
            }
        }
    }
    let order = gaos_kernel::seed::seeded_permutation(matches.len(), seed);
    order.into_iter().map(|k| matches[k].clone()).collect()
}

#[test]
fn a_tournament_of_known_strengths_is_rated_back_within_its_intervals() {
    let truth = centered(&[1250.0, 1120.0, 1000.0, 940.0, 690.0]);
    let ratings = rate(truth.len(), &as_expected(&truth, 200, 2024), 1.0, 300, 7);
    for (i, (rating, truth)) in ratings.iter().zip(&truth).enumerate() {
        assert!(
            rating.low <= *truth && *truth <= rating.high,
            "entrant {i}: true rating {truth} outside its interval {rating:?}"
        );
        assert!((rating.rating - truth).abs() < 6.0, "entrant {i}: rated {rating:?}, truly {truth}");
        assert!(rating.high - rating.low < 160.0, "entrant {i}: the interval is too wide to mean much: {rating:?}");
    }
}

#[test]
fn the_intervals_cover_the_truth_about_as_often_as_they_claim() {
    // 30 independent tournaments of 4 entrants, with draws: a 95 % interval
    // should miss the true rating in about 1 case of 20 (6 of 120); the
    // percentile bootstrap of a small tournament runs a little narrow, so
    // allow up to 15 misses, and no estimate far off.
    let truth = centered(&[1180.0, 1060.0, 990.0, 770.0]);
    let mut misses = 0;
    for seed in 0..30u32 {
        let matches = synthetic(&truth, 40, 0.15, 9_000 + seed);
        let ratings = rate(truth.len(), &matches, 1.0, 200, seed);
        for (rating, truth) in ratings.iter().zip(&truth) {
            if !(rating.low <= *truth && *truth <= rating.high) {
                misses += 1;
            }
            assert!((rating.rating - truth).abs() < 150.0, "seed {seed}: {rating:?} vs {truth}");
        }
    }
    assert!(misses <= 15, "{misses} of 120 intervals missed the true rating");
}

#[test]
fn the_same_matches_give_the_same_numbers_to_the_last_bit() {
    let truth = centered(&[1100.0, 1000.0, 900.0]);
    let matches = synthetic(&truth, 30, 0.1, 5);
    let bits = |ratings: &[Rating]| -> Vec<[u64; 3]> {
        ratings.iter().map(|r| [r.rating.to_bits(), r.low.to_bits(), r.high.to_bits()]).collect()
    };
    let first = rate(3, &matches, 1.0, 100, 11);
    assert_eq!(bits(&first), bits(&rate(3, &matches, 1.0, 100, 11)));
    // The seed changes the intervals, never the fit.
    let reseeded = rate(3, &matches, 1.0, 100, 12);
    assert_eq!(
        first.iter().map(|r| r.rating.to_bits()).collect::<Vec<_>>(),
        reseeded.iter().map(|r| r.rating.to_bits()).collect::<Vec<_>>()
    );
    assert_ne!(bits(&first), bits(&reseeded));
    // Ratings are centered on 1000 and every interval holds its rating.
    let mean = first.iter().map(|r| r.rating).sum::<f64>() / 3.0;
    assert!((mean - 1000.0).abs() < 1e-9, "{mean}");
    assert!(first.iter().all(|r| r.low <= r.rating && r.rating <= r.high));
}

fn record(id: &str, seats: &[(&str, &str, u64)]) -> MatchRecord {
    MatchRecord {
        id: id.into(),
        level_id: "default".into(),
        seed: 1,
        seats: seats.iter().map(|(s, e, _)| ((*s).to_owned(), (*e).to_owned())).collect(),
        result: MatchResult {
            ranking: seats.iter().map(|(s, _, r)| ((*s).to_owned(), *r)).collect(),
            forfeits: BTreeSet::new(),
            substitutions: BTreeMap::new(),
            steps: 4,
            seat_keys: BTreeMap::new(),
        },
        faults: BTreeMap::new(),
        replay: format!("replays/{id}.gaos-replay.jsonl"),
        replay_sha256: String::new(),
        wall_clock_ms: 1,
    }
}

#[test]
fn standings_count_two_seat_matches_once_and_bigger_ones_pairwise() {
    let manifest = ArenaManifest::parse(
        r#"{"schema":"gaos.arena-manifest.v1","arena":{"id":"t","version":"1","adapter":"g"},
        "levels":[{"id":"default","seeds":[1]}],
        "entrants":[{"id":"a","driver":"random"},{"id":"b","driver":"random"},{"id":"c","driver":"random"}],
        "rating":{"bootstrap":20,"seed":3}}"#,
    )
    .expect("valid");
    let records = [
        record("m1", &[("x", "a", 1), ("o", "b", 2)]),
        record("m2", &[("x", "b", 1), ("o", "a", 1)]),
        // Three seats: a first, b and c tied second: a beats both, b draws c.
        record("m3", &[("p", "a", 1), ("q", "b", 2), ("r", "c", 2)]),
    ];
    let table = standings(&manifest, &records);
    let by_id: BTreeMap<&str, _> = table.entrants.iter().map(|s| (s.id.as_str(), s)).collect();
    let a = by_id["a"];
    assert_eq!((a.matches, a.wins, a.draws, a.losses, a.score), (3, 3, 1, 0, 3.5));
    let b = by_id["b"];
    assert_eq!((b.matches, b.wins, b.draws, b.losses, b.score), (3, 0, 2, 2, 1.0));
    let c = by_id["c"];
    assert_eq!((c.matches, c.wins, c.draws, c.losses), (1, 0, 1, 1));
    assert_eq!(table.entrants[0].id, "a");
    let head = table.pairwise["a"]["b"];
    assert_eq!((head.wins, head.draws, head.losses, head.games()), (2, 1, 0, 3));
    assert!((head.win_rate() - 2.5 / 3.0).abs() < 1e-12);
    let value = table.to_value();
    assert_eq!(canonical_json(&value), canonical_json(&standings(&manifest, &records).to_value()));
    let first = value.get("entrants").and_then(|e| e.as_array()).and_then(|e| e.first()).expect("entrants");
    assert_eq!(first.get("id").and_then(|id| id.as_str()), Some("a"));
    assert_eq!(value.get("method").and_then(|m| m.get("kind")).and_then(|k| k.as_str()), Some("bradley-terry"));
}
