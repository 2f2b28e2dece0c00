//! Below the retention floor: a retry of a submission accepted before the
//! floor is answered exactly as without compaction (its receipt while
//! retained, `unknown_submission` from the history lookup after), a
//! snapshot asked below the floor answers `resync_required` and a full
//! snapshot recovers, and compaction refuses to forget what is not durable.

mod checkpoint_support;

use std::sync::Arc;

use checkpoint_support::{Player, answer_of, options_for};
use gaos_json::{Value, obj};
use gaos_kernel::{
    CheckpointCode, CommandSubmission, CompactRequest, HistoryLookup, KernelCheckpoint, KernelError, ResyncRequired,
    SessionKernel, SessionLimits,
};

fn counter_pair(session: &str, retention: f64) -> (Player, Player) {
    let level = gaos_json::parse(r#"{"rounds":40}"#).expect("json");
    let limits = SessionLimits { receipt_retention: Some(retention), ..SessionLimits::default() };
    let options = options_for("conformance/counter", &level, session, limits);
    (Player::new(Arc::clone(&options), 21), Player::new(options, 21))
}

fn answer(kernel: &SessionKernel<gaos_kernel::DynReducer>, submission: &CommandSubmission) -> String {
    match kernel.prepare_ingest(submission) {
        Ok(prepared) => format!("ok {:?} events {}", prepared.result(), prepared.events().len()),
        Err(e) => answer_of(&e),
    }
}

/// `submission` again, same identity and command, addressed to the open
/// window: a reuse the permanent identity index must refuse.
fn reused(kernel: &SessionKernel<gaos_kernel::DynReducer>, submission: &CommandSubmission) -> CommandSubmission {
    CommandSubmission::new(
        kernel.session_id(),
        kernel.cursor(),
        &submission.participant_id,
        submission.submission_id.as_deref().expect("an id"),
        submission.command.clone().expect("a command"),
    )
}

#[test]
fn a_submission_accepted_before_the_floor_is_refused_or_answered_exactly_as_without_compaction() {
    let (mut plain, mut compacting) = counter_pair("floor-retry", 1.0);
    plain.play(60, None, None);
    compacting.play(60, None, Some(5));
    let floor = compacting.kernel.retention_floor();
    assert!(floor > 20, "compacted well past the first submissions (floor {floor})");
    let old: Vec<CommandSubmission> = compacting
        .accepted
        .iter()
        .filter(|s| s.revision_u64().expect("a cursor") + 3 < plain.kernel.cursor())
        .cloned()
        .collect();
    assert!(old.len() > 10, "submissions accepted long before the floor");
    for submission in &old {
        // The exact retry (old window) and the same identity in the open window.
        for probe in [submission.clone(), reused(&plain.kernel, submission)] {
            let expected = answer(&plain.kernel, &probe);
            assert_eq!(answer(&compacting.kernel, &probe), expected, "{:?}", probe.submission_id);
        }
        let reuse = answer(&compacting.kernel, &reused(&compacting.kernel, submission));
        assert!(
            reuse.starts_with("conflict unknown_submission"),
            "a pre-floor identity is never applicable again: {reuse}"
        );
        let (participant, id) = (&submission.participant_id, submission.submission_id.as_deref().expect("id"));
        assert!(compacting.kernel.was_accepted(participant, id));
    }
    // A fresh identity is still welcome.
    while compacting.kernel.awaiting_seats().is_empty() {
        compacting.step();
    }
    let seat = compacting.kernel.awaiting_seats()[0].clone();
    let fresh = CommandSubmission::new(
        compacting.kernel.session_id(),
        compacting.kernel.cursor(),
        &seat,
        "fresh",
        obj! { "n" => 1u32 }.into(),
    );
    assert!(answer(&compacting.kernel, &fresh).starts_with("ok"), "{}", answer(&compacting.kernel, &fresh));
    assert!(!compacting.kernel.was_accepted(&seat, "fresh"));
}

#[test]
fn an_exact_retry_within_receipt_retention_gets_its_receipt_after_compaction() {
    let (mut plain, mut compacting) = counter_pair("floor-receipt", 64.0);
    for player in [&mut plain, &mut compacting] {
        player.play(9, None, None);
        // One seat submits; compact (the second player) with the window half full.
        while player.kernel.awaiting_seats().len() == player.kernel.window().participants.len() {
            player.step();
        }
    }
    compacting.compact();
    assert_eq!(compacting.kernel.retention_floor(), compacting.kernel.transition_revision());
    assert!(compacting.kernel.events().is_empty(), "compaction dropped the log");
    for submission in &plain.accepted {
        let expected = answer(&plain.kernel, submission);
        assert!(expected.contains("Duplicate"), "retained: {expected}");
        assert_eq!(answer(&compacting.kernel, submission), expected);
    }
    // And after a restart from the compacted checkpoint.
    let stored = compacting.checkpoints.last().expect("stored").clone();
    let checkpoint = KernelCheckpoint::from_json(&stored.json).expect("reads");
    assert_eq!(checkpoint.retention_floor(), stored.revision);
    let history: Arc<dyn HistoryLookup> = compacting.history.clone();
    let restored = SessionKernel::restore(Arc::clone(&compacting.options), &checkpoint, Vec::new(), Some(history))
        .expect("restores");
    for submission in &plain.accepted {
        assert_eq!(answer(&restored, submission), answer(&plain.kernel, submission));
    }
    // A compacted checkpoint cannot be restored without its history.
    match SessionKernel::restore(Arc::clone(&compacting.options), &checkpoint, Vec::new(), None) {
        Err(KernelError::Checkpoint { code: CheckpointCode::Durability, .. }) => {}
        other => panic!("expected a durability refusal, got {:?}", other.err()),
    }
}

#[test]
fn a_snapshot_below_the_floor_answers_resync_required_and_a_full_snapshot_recovers() {
    let (mut plain, mut compacting) = counter_pair("floor-snapshot", 64.0);
    plain.play(30, None, None);
    compacting.play(30, None, Some(10));
    let floor = compacting.kernel.retention_floor();
    let live = compacting.kernel.transition_revision();
    assert!(floor > 0);
    for seat in ["a", "b"] {
        match compacting.kernel.snapshot(seat, Some(floor - 1)) {
            Err(KernelError::ResyncRequired(resync)) => {
                let expected = ResyncRequired {
                    requested_transition_revision: floor - 1,
                    retention_floor: floor,
                    current_transition_revision: live,
                };
                assert_eq!(resync, expected);
                let value = resync.to_value();
                assert_eq!(value.get("status").and_then(Value::as_str), Some("resync_required"));
                assert_eq!(value.get("retentionFloor").and_then(Value::as_u64), Some(floor));
            }
            other => panic!("expected resync_required, got {other:?}"),
        }
        let error = compacting.kernel.snapshot(seat, Some(0)).expect_err("below the floor");
        assert_eq!((error.kind(), error.code()), ("resync", "resync_required"));
        // The uncompacted kernel still answers from its full history.
        assert!(plain.kernel.snapshot(seat, Some(floor - 1)).is_ok());
        // The client resyncs: a full snapshot equals the uncompacted one after the floor.
        let recovered = compacting.kernel.snapshot(seat, None).expect("a full snapshot");
        assert_eq!(recovered, plain.kernel.snapshot(seat, Some(floor)).expect("the same snapshot"));
        assert_eq!(recovered, compacting.kernel.snapshot(seat, Some(floor)).expect("at the floor"));
        let applied = gaos_kernel::apply_observation_delta(None, &recovered).expect("a snapshot applies");
        assert_eq!(applied, *plain.kernel.observe(seat).expect("seat"));
        assert!(compacting.kernel.snapshot(seat, Some(live + 1)).is_err(), "beyond live is still a RangeError");
    }
}

/// A history that fails, and one that forgets: the kernel consults it and
/// refuses with no side effect.
struct Broken;

impl HistoryLookup for Broken {
    fn was_accepted(&self, _: &str, _: &str, _: u64) -> Result<bool, String> {
        Err("the store is closed".into())
    }
}

#[test]
fn compaction_needs_durability_and_a_checkpoint_of_the_live_state() {
    let (_, mut player) = counter_pair("floor-refusals", 1.0);
    player.play(12, None, None);
    let stale = player.store_checkpoint();
    player.play(3, None, None);
    let fresh = player.kernel.checkpoint().expect("checkpoint");
    let history: Arc<dyn HistoryLookup> = player.history.clone();
    let request = |digest| CompactRequest {
        checkpoint_digest: digest,
        checkpoint_durably_committed: true,
        history_durably_committed: true,
    };
    let code = |result: Result<gaos_kernel::CompactSummary, KernelError>| match result {
        Err(KernelError::Checkpoint { code, .. }) => code,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let not_durable = CompactRequest { checkpoint_durably_committed: false, ..request(fresh.integrity_digest()) };
    assert_eq!(code(player.kernel.compact(&fresh, not_durable, Arc::clone(&history))), CheckpointCode::Durability);
    let no_history = CompactRequest { history_durably_committed: false, ..request(fresh.integrity_digest()) };
    assert_eq!(code(player.kernel.compact(&fresh, no_history, Arc::clone(&history))), CheckpointCode::Durability);
    assert_eq!(code(player.kernel.compact(&fresh, request("00"), Arc::clone(&history))), CheckpointCode::Integrity);
    assert_eq!(
        code(player.kernel.compact(&stale, request(stale.integrity_digest()), Arc::clone(&history))),
        CheckpointCode::Watermark
    );
    assert_eq!(player.kernel.retention_floor(), 0, "nothing was compacted");
    let events = player.kernel.events().len();
    let summary = player.kernel.compact(&fresh, request(fresh.integrity_digest()), Arc::new(Broken)).expect("compacts");
    assert_eq!(summary.dropped_events, events);
    assert_eq!(summary.retention_floor, player.kernel.transition_revision());
    assert!(summary.dropped_identities > 0);
    // An identity the kernel no longer holds is asked of the history: it fails, nothing changes.
    let old = reused(&player.kernel, &player.accepted[0]);
    let revision = player.kernel.transition_revision();
    match player.kernel.prepare_ingest(&old) {
        Err(e @ KernelError::History { .. }) => {
            assert!(e.to_string().contains("the store is closed"), "{e}");
            assert_eq!((e.kind(), e.code()), ("history", "history_unavailable"));
        }
        other => panic!("expected a history failure, got {:?}", other.map(|p| p.events().len())),
    }
    assert_eq!(player.kernel.transition_revision(), revision);
    assert!(player.kernel.was_accepted(&old.participant_id, "never-seen"), "unknown when the store fails");
}
