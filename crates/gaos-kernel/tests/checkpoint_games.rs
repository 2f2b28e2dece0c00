//! Restoring from a checkpoint plus the events after it equals rehydrating
//! the full log, for every conformance game at many seeded crash points;
//! compacting as a session goes produces the same events as never
//! compacting, and a kernel restored from a compacted checkpoint answers
//! like the uncompacted one.

mod checkpoint_support;

use std::sync::Arc;

use checkpoint_support::{Player, between, conformance_games, observable, options_for, prefix, without_salts};
use gaos_kernel::{KernelCheckpoint, SessionKernel, SessionLimits};

/// Crash points per game (spread over several seeded sessions).
const CRASH_POINTS: usize = 50;

#[test]
fn restore_from_checkpoint_and_tail_equals_full_rehydrate_at_random_crash_points() {
    for (game_id, level) in conformance_games() {
        let mut checked = 0;
        let mut seed = 11u32;
        while checked < CRASH_POINTS {
            seed += 1;
            let options = options_for(game_id, &level, &format!("crash-{seed}"), SessionLimits::default());
            let mut player = Player::new(Arc::clone(&options), seed);
            player.play(400, Some(3), None);
            let last = player.kernel.transition_revision();
            assert!(last > 2, "{game_id} seed {seed}: the session made progress ({last} transitions)");
            // A few crash points per session, each at a transition boundary.
            for _ in 0..5 {
                let crash = 1 + u64::from(player.random(last as u32));
                let full = SessionKernel::rehydrate(Arc::clone(&options), None, prefix(&player.store, crash))
                    .unwrap_or_else(|e| panic!("{game_id} seed {seed}: full rehydrate at {crash}: {e}"));
                let Some(stored) = player.checkpoints.iter().rev().find(|c| c.revision <= crash) else {
                    continue;
                };
                let checkpoint = KernelCheckpoint::from_json(&stored.json).expect("a stored checkpoint reads back");
                let tail = between(&player.store, stored.revision, crash);
                let restored =
                    SessionKernel::restore(Arc::clone(&options), &checkpoint, tail, None).unwrap_or_else(|e| {
                        panic!("{game_id} seed {seed}: restore {} + tail to {crash}: {e}", stored.revision)
                    });
                let retries = &player.accepted;
                assert_eq!(
                    observable(&restored, 0, retries),
                    observable(&full, 0, retries),
                    "{game_id} seed {seed}: checkpoint {} + tail to {crash} differs from the full log",
                    stored.revision
                );
                // Everything a checkpoint records (receipts, identity index,
                // commitments, rejections, view revisions) is equal too.
                assert_eq!(
                    without_salts(&restored.checkpoint().expect("checkpoint")),
                    without_salts(&full.checkpoint().expect("checkpoint")),
                    "{game_id} seed {seed}: the protocol state after {crash} differs"
                );
                checked += 1;
            }
        }
    }
}

#[test]
fn compacting_as_the_session_goes_gives_the_same_events_as_never_compacting() {
    for (game_id, level) in conformance_games() {
        for seed in [3u32, 17, 99] {
            let session = format!("compact-{seed}");
            let options = options_for(game_id, &level, &session, SessionLimits::default());
            let mut plain = Player::new(Arc::clone(&options), seed);
            plain.play(400, None, None);
            let mut compacting = Player::new(Arc::clone(&options), seed);
            compacting.play(400, None, Some(4));
            let text = |p: &Player| p.store.iter().map(|e| e.canonical()).collect::<Vec<_>>();
            assert_eq!(text(&compacting), text(&plain), "{game_id} seed {seed}: compaction changed the events");
            assert!(compacting.kernel.retention_floor() > 0, "{game_id} seed {seed}: compaction happened");
            assert!(
                compacting.kernel.events().len() < 4 * 8,
                "{game_id} seed {seed}: the live log is a bounded tail ({} events)",
                compacting.kernel.events().len()
            );
            let retries = &plain.accepted;
            // Rejection notices at or below the floor are gone by design.
            let floor = compacting.kernel.retention_floor();
            let expected = observable(&plain.kernel, floor, retries);
            assert_eq!(observable(&compacting.kernel, floor, retries), expected, "{game_id} seed {seed}");
            // Restart from the latest compacted checkpoint plus its tail.
            let stored = compacting.checkpoints.last().expect("a checkpoint").clone();
            let checkpoint = KernelCheckpoint::from_json(&stored.json).expect("reads back");
            let tail = between(&compacting.store, stored.revision, u64::MAX);
            let history: Arc<dyn gaos_kernel::HistoryLookup> = compacting.history.clone();
            let restored = SessionKernel::restore(Arc::clone(&options), &checkpoint, tail, Some(history))
                .unwrap_or_else(|e| panic!("{game_id} seed {seed}: restore of a compacted checkpoint: {e}"));
            assert_eq!(observable(&restored, floor, retries), expected, "{game_id} seed {seed}: restored");
        }
    }
}

/// What a compacted kernel holds is bounded by the window, receipt
/// retention and open commitments: its checkpoint (everything the kernel
/// keeps besides the event tail) is no larger after 6,000 transitions than
/// after 3,000 (both well past receipt retention), and the tail never
/// outgrows the compaction interval.
#[test]
fn a_compacted_kernel_does_not_grow_with_history() {
    let level = gaos_json::parse(r#"{"rounds":100000}"#).expect("json");
    let options = options_for("conformance/counter", &level, "flat", SessionLimits::default());
    let mut player = Player::new(options, 8);
    let mut sizes = Vec::new();
    let mut max_tail = 0;
    while player.kernel.transition_revision() < 6_000 {
        player.play(30, None, None);
        max_tail = max_tail.max(player.kernel.events().len());
        player.compact();
        // Keep only the latest stored checkpoint, as a store would.
        let latest = player.checkpoints.pop().expect("just stored");
        sizes.push((latest.revision, latest.json.len()));
        player.checkpoints.clear();
        player.store.clear();
    }
    let at = |revision: u64| sizes.iter().find(|(r, _)| *r >= revision).expect("reached").1;
    let (early, late) = (at(3_000), at(6_000));
    // Ids, ticks and totals gain a digit now and then (a few hundred
    // bytes); keeping even one entry per round would add ~30 KB here.
    assert!(late <= early + early / 20, "checkpoint grew from {early} to {late} bytes: {sizes:?}");
    assert!(max_tail <= 30 * 2, "the tail holds at most one interval of events ({max_tail})");
    let history_keys = player.kernel.checkpoint().expect("checkpoint").to_value();
    let keys = history_keys.get("protocol").and_then(|p| p.get("historicalSubmissionKeys")).expect("keys");
    assert_eq!(keys.as_array().map(Vec::len), Some(0), "identities below the floor live in the history lookup");
}
