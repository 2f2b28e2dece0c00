//! `prepare_ingest_and_resolve` (one write for an ingest and the resolution
//! it completes) is indistinguishable from ingest + advance committed one
//! after the other: same events, deltas, receipts, digests and views.

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::Value;
use gaos_kernel::{Cadence, CommandSubmission, DynReducer, KernelOptions, SeedPolicy, SessionKernel};

fn kernel(game: &str, level: &str, seats: &[&str]) -> SessionKernel<DynReducer> {
    let registry = GameRegistry::builtin();
    let game = registry.get(game).expect("built-in game");
    let options = KernelOptions::builder(&game, "compound")
        .level("level", gaos_json::parse(level).expect("level JSON"))
        .seed(7, SeedPolicy::Explicit)
        .seats(seats.iter().map(|s| s.to_string()).collect())
        .cadence(Cadence::Turns)
        .build();
    SessionKernel::from_shared(Arc::new(options)).expect("kernel")
}

fn submission(k: &SessionKernel<DynReducer>, seat: &str, id: &str, command: &str) -> CommandSubmission {
    CommandSubmission::new("compound", k.cursor(), seat, id, gaos_json::parse(command).expect("command JSON"))
}

/// Play `moves` both ways and compare everything observable.
fn compare(game: &str, level: &str, seats: &[&str], moves: &[(&str, &str)]) {
    let mut two_step = kernel(game, level, seats);
    let mut compound = kernel(game, level, seats);
    for (i, (seat, command)) in moves.iter().enumerate() {
        let id = format!("{seat}-{i}");
        // Two steps: ingest, commit, then advance once the window is complete.
        let mut p = two_step.prepare_ingest(&submission(&two_step, seat, &id, command)).expect("ingest");
        let mut expected_events: Vec<Value> = p.events().iter().map(|e| e.to_value()).collect();
        let receipt = p.receipt().cloned();
        two_step.commit(&mut p).expect("commit ingest");
        let mut expected_deltas = Vec::new();
        if two_step.awaiting_seats().is_empty() && !two_step.is_terminal() {
            let mut a = two_step.prepare_advance(None).expect("advance");
            expected_events.extend(a.events().iter().map(|e| e.to_value()));
            expected_deltas = a.deltas().iter().map(|d| d.to_value()).collect();
            two_step.commit(&mut a).expect("commit advance");
        }
        // One compound prepared transition.
        let mut c = compound.prepare_ingest_and_resolve(&submission(&compound, seat, &id, command)).expect("compound");
        let events: Vec<Value> = c.events().iter().map(|e| e.to_value()).collect();
        let deltas: Vec<Value> = c.deltas().iter().map(|d| d.to_value()).collect();
        assert_eq!(events, expected_events, "events of move {i}");
        assert_eq!(deltas, expected_deltas, "deltas of move {i}");
        assert_eq!(c.receipt().cloned(), receipt, "receipt of move {i}");
        compound.commit(&mut c).expect("commit compound");
        assert_eq!(compound.digest(), two_step.digest(), "digest after move {i}");
        assert_eq!(compound.transition_revision(), two_step.transition_revision());
        assert_eq!(compound.cursor(), two_step.cursor());
        for seat in seats {
            assert_eq!(compound.observe(seat).unwrap(), two_step.observe(seat).unwrap());
            assert_eq!(compound.view_revision(seat).unwrap(), two_step.view_revision(seat).unwrap());
        }
    }
    let a: Vec<Value> = compound.events().iter().map(|e| e.to_value()).collect();
    let b: Vec<Value> = two_step.events().iter().map(|e| e.to_value()).collect();
    assert_eq!(a, b, "transcripts");
    // The compound transcript rehydrates to the same kernel.
    let rehydrated =
        SessionKernel::rehydrate(Arc::clone(compound.options()), None, compound.events().to_vec()).expect("rehydrate");
    assert_eq!(rehydrated.digest(), compound.digest());
}

#[test]
fn compound_ingest_equals_ingest_then_advance_for_simultaneous_windows() {
    compare(
        "conformance/hilo",
        r#"{"handSize":3,"maxCard":9}"#,
        &["alice", "bob"],
        &[
            ("alice", r#"{"card":0}"#),
            ("bob", r#"{"card":1}"#),
            ("bob", r#"{"card":0}"#),
            ("alice", r#"{"card":1}"#),
            ("alice", r#"{"card":0}"#),
            ("bob", r#"{"card":0}"#),
        ],
    );
}

#[test]
fn compound_ingest_equals_ingest_then_advance_for_sequential_windows() {
    compare(
        "conformance/tictactoe",
        r#"{"board":".........","first":"x"}"#,
        &["x", "o"],
        &[
            ("x", r#"{"cell":0}"#),
            ("o", r#"{"cell":4}"#),
            ("x", r#"{"cell":1}"#),
            ("o", r#"{"cell":8}"#),
            ("x", r#"{"cell":2}"#),
        ],
    );
}

#[test]
fn a_mismatching_reveal_is_rejected_the_same_way() {
    let north = gaos_kernel::commitment::commitment_hash(
        &gaos_kernel::commitment::CommitmentBinding {
            session_id: "compound",
            seat: "north",
            commitment_id: 0,
            window_ref: 0,
        },
        "00112233445566778899aabbccddeeff",
        &gaos_json::parse(r#"{"bid":42}"#).unwrap(),
    )
    .unwrap();
    let south = gaos_kernel::commitment::commitment_hash(
        &gaos_kernel::commitment::CommitmentBinding {
            session_id: "compound",
            seat: "south",
            commitment_id: 0,
            window_ref: 0,
        },
        "ffeeddccbbaa99887766554433221100",
        &gaos_json::parse(r#"{"bid":57}"#).unwrap(),
    )
    .unwrap();
    let n_commit = format!(r#"{{"commit":"{north}"}}"#);
    let s_commit = format!(r#"{{"commit":"{south}"}}"#);
    compare(
        "conformance/sealed",
        r#"{"maxBid":100}"#,
        &["north", "south"],
        &[
            ("north", n_commit.as_str()),
            ("south", s_commit.as_str()),
            ("north", r#"{"reveal":{"salt":"00112233445566778899aabbccddeeff","bid":42}}"#),
            ("south", r#"{"reveal":{"salt":"ffeeddccbbaa99887766554433221100","bid":99}}"#),
        ],
    );
}

#[test]
fn a_batch_of_ingests_equals_committing_them_one_by_one() {
    use gaos_kernel::IngestOutcome;
    let level = r#"{"handSize":3,"maxCard":9}"#;
    let seats = ["alice", "bob"];
    let mut sequential = kernel("conformance/hilo", level, &seats);
    let mut batched = kernel("conformance/hilo", level, &seats);
    for round in 0..3 {
        let subs = [
            submission(&batched, "alice", &format!("a-{round}"), r#"{"card":0}"#),
            // Refused (bob has no card 7): changes nothing.
            submission(&batched, "bob", &format!("bad-{round}"), r#"{"card":7}"#),
            // An exact retry of alice's submission inside the batch.
            submission(&batched, "alice", &format!("a-{round}"), r#"{"card":0}"#),
            submission(&batched, "bob", &format!("b-{round}"), r#"{"card":0}"#),
            // After the window resolved: left for later.
            submission(&batched, "alice", &format!("late-{round}"), r#"{"card":0}"#),
        ];
        // Odd rounds hand the kernel the commands' canonical JSON, as a host
        // that read each body once does: the same batch either way.
        let canonical: Vec<String> =
            subs.iter().map(|s| gaos_json::canonical_json(s.command.as_ref().expect("a command"))).collect();
        let canonical: Vec<Option<&str>> = canonical.iter().map(|c| Some(c.as_str())).collect();
        let batch = if round % 2 == 1 {
            batched.prepare_ingest_batch_canonical(&subs, &canonical)
        } else {
            batched.prepare_ingest_batch(&subs)
        }
        .expect("no game failure");
        assert!(matches!(batch.outcomes[0], Ok(IngestOutcome::Accepted(_))));
        assert_eq!(batch.outcomes[1].as_ref().unwrap_err().code(), "illegal_command");
        assert!(
            matches!(&batch.outcomes[2], Ok(IngestOutcome::Duplicate(r)) if r.submission_id == format!("a-{round}"))
        );
        assert!(matches!(batch.outcomes[3], Ok(IngestOutcome::Accepted(_))));
        assert!(matches!(batch.outcomes[4], Ok(IngestOutcome::Deferred)));
        let mut prepared = batch.prepared.expect("two ingests and a resolution");
        let events: Vec<Value> = prepared.events().iter().map(|e| e.to_value()).collect();
        let deltas: Vec<Value> = prepared.deltas().iter().map(|d| d.to_value()).collect();
        batched.commit(&mut prepared).expect("commit batch");

        let mut expected = Vec::new();
        for (seat, id) in [("alice", format!("a-{round}")), ("bob", format!("b-{round}"))] {
            let mut p =
                sequential.prepare_ingest(&submission(&sequential, seat, &id, r#"{"card":0}"#)).expect("ingest");
            expected.extend(p.events().iter().map(|e| e.to_value()));
            sequential.commit(&mut p).expect("commit");
        }
        let mut a = sequential.prepare_advance(None).expect("advance");
        expected.extend(a.events().iter().map(|e| e.to_value()));
        let expected_deltas: Vec<Value> = a.deltas().iter().map(|d| d.to_value()).collect();
        sequential.commit(&mut a).expect("commit advance");
        assert_eq!(events, expected, "round {round}");
        assert_eq!(deltas, expected_deltas, "round {round}");
        assert_eq!(batched.digest(), sequential.digest());
        assert_eq!(batched.transition_revision(), sequential.transition_revision());
    }
    let rehydrated =
        SessionKernel::rehydrate(Arc::clone(batched.options()), None, batched.events().to_vec()).expect("rehydrate");
    assert_eq!(rehydrated.digest(), batched.digest());
}
