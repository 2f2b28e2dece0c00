//! The salt book (kernel spec §4.12 "Salt book", issue 13 item 1): a salt
//! reused by another (seat, commitmentId) identity is a `salt_reuse` warning
//! with a fixed message, consulted before each reveal's hash check in
//! canonical input order; a mismatching reveal's salt is still recorded and
//! the warnings gathered before it come with the rejection; rehydration
//! rebuilds the book from resolution inputs and rejections' attempted
//! reveals, first seen winning.

use std::sync::Arc;

use gaos_json::{Value, obj};
use gaos_kernel::commitment::{CommitmentBinding, commitment_hash};
use gaos_kernel::{AdvanceSummary, CommandSubmission, KernelOptions, SessionKernel, SessionWarning};

mod support;
use support::{Rounds, rounds_options};

const SESSION: &str = "salts";
const SALT_1: &str = "11111111111111111111111111111111";
const SALT_2: &str = "22222222222222222222222222222222";
const SALT_3: &str = "33333333333333333333333333333333";
const MESSAGE: &str = "commitment salt was reused within this session";

fn options() -> Arc<KernelOptions<Rounds>> {
    rounds_options(SESSION, "tests/salt-book")
}

fn payload(seat: &str) -> Value {
    obj! { "bid" => seat }.into()
}

/// A commit of `seat`'s payload with `salt`, recorded by the resolution at `tick`.
fn commit(seat: &str, id: u32, tick: u64, salt: &str) -> Value {
    let binding = CommitmentBinding { session_id: SESSION, seat, commitment_id: id, window_ref: tick };
    let hash = commitment_hash(&binding, salt, &payload(seat)).expect("hashable");
    obj! { "id" => "Action 1", "commit" => obj! { "commitmentId" => id, "scheme" => "gaos.commit.sha256.v1", "hash" => hash } }
        .into()
}

fn reveal(seat: &str, id: u32, salt: &str, honest: bool) -> Value {
    let payload = if honest { payload(seat) } else { obj! { "bid" => "forged" }.into() };
    obj! { "id" => "Action 1", "reveal" => obj! { "commitmentId" => id, "salt" => salt, "payload" => payload } }.into()
}

fn noop() -> Value {
    obj! { "id" => "Action 1" }.into()
}

/// Submit `commands` (seat, command) in order, then resolve the window.
fn round(kernel: &mut SessionKernel<Rounds>, commands: &[(&str, Value)]) -> AdvanceSummary {
    let cursor = kernel.cursor();
    for (seat, command) in commands {
        let id = format!("{seat}-{cursor}-{}", kernel.transition_revision());
        let sub = CommandSubmission::new(SESSION, cursor, seat, &id, command.clone());
        let prepared = kernel.prepare_ingest(&sub).expect("accepted");
        kernel.apply_now(prepared).expect("commits");
    }
    let prepared = kernel.prepare_advance(None).expect("the window is complete");
    let summary = prepared.summary().cloned().expect("an advance has a summary");
    kernel.apply_now(prepared).expect("commits");
    summary
}

fn warning(seat: &str, id: u32) -> SessionWarning {
    SessionWarning {
        code: "salt_reuse".into(),
        message: MESSAGE.into(),
        participant_id: seat.into(),
        commitment_id: id,
    }
}

fn committed_kernel(salt_a: &str, salt_b: &str) -> SessionKernel<Rounds> {
    let mut kernel = SessionKernel::from_shared(options()).expect("kernel");
    let summary = round(&mut kernel, &[("a", commit("a", 0, 0, salt_a)), ("b", commit("b", 0, 0, salt_b))]);
    assert!(summary.warnings.is_empty());
    kernel
}

#[test]
fn a_salt_reused_by_another_identity_warns_with_the_fixed_message() {
    let mut kernel = committed_kernel(SALT_1, SALT_1);
    let summary = round(&mut kernel, &[("a", reveal("a", 0, SALT_1, true)), ("b", reveal("b", 0, SALT_1, true))]);
    assert!(summary.rejections.is_empty());
    // Canonical input order is a before b: a records the salt, b reuses it.
    assert_eq!(summary.warnings, vec![warning("b", 0)]);
}

#[test]
fn distinct_salts_warn_nothing() {
    let mut kernel = committed_kernel(SALT_1, SALT_2);
    let summary = round(&mut kernel, &[("a", reveal("a", 0, SALT_1, true)), ("b", reveal("b", 0, SALT_2, true))]);
    assert!(summary.warnings.is_empty());
}

#[test]
fn warnings_gathered_before_a_mismatch_come_with_the_rejection() {
    let mut kernel = committed_kernel(SALT_1, SALT_1);
    let summary = round(&mut kernel, &[("a", reveal("a", 0, SALT_1, true)), ("b", reveal("b", 0, SALT_1, false))]);
    assert_eq!(summary.rejections.len(), 2, "every seat is notified of b's rejection");
    assert_eq!(summary.warnings, vec![warning("b", 0)]);
}

#[test]
fn the_salt_of_a_mismatching_reveal_is_recorded() {
    // a commits with SALT_1 but reveals (wrongly) with SALT_2; b uses SALT_2.
    let mut kernel = committed_kernel(SALT_1, SALT_2);
    let rejected = round(&mut kernel, &[("a", reveal("a", 0, SALT_2, false)), ("b", noop())]);
    assert!(!rejected.rejections.is_empty());
    assert!(rejected.warnings.is_empty());
    // a's rejected intent is gone; b's noop still holds its seat.
    let summary = round(&mut kernel, &[("a", reveal("a", 0, SALT_1, true))]);
    assert!(summary.warnings.is_empty(), "SALT_1 is new");
    let summary = round(&mut kernel, &[("a", noop()), ("b", reveal("b", 0, SALT_2, true))]);
    assert_eq!(summary.warnings, vec![warning("b", 0)], "SALT_2 was first seen in a's rejected reveal");
}

#[test]
fn rehydrate_rebuilds_the_salt_book_from_resolutions_and_rejections() {
    let mut live = SessionKernel::from_shared(options()).expect("kernel");
    round(&mut live, &[("a", commit("a", 0, 0, SALT_1)), ("b", commit("b", 0, 0, SALT_2))]);
    round(&mut live, &[("a", commit("a", 1, 1, SALT_3)), ("b", commit("b", 1, 1, SALT_1))]);
    // A rejection records SALT_2 under (a, 0), then a resolution SALT_1 under (a, 0).
    round(&mut live, &[("a", reveal("a", 0, SALT_2, false)), ("b", noop())]);
    round(&mut live, &[("a", reveal("a", 0, SALT_1, true))]);
    let mut rehydrated = SessionKernel::rehydrate(options(), None, live.events().to_vec()).expect("rehydrates");
    assert_eq!(rehydrated.digest(), live.digest());
    for kernel in [&mut live, &mut rehydrated] {
        let summary = round(kernel, &[("a", reveal("a", 1, SALT_3, true)), ("b", reveal("b", 0, SALT_2, true))]);
        assert_eq!(summary.warnings, vec![warning("b", 0)], "SALT_2 belongs to a's rejected reveal");
        let summary = round(kernel, &[("a", noop()), ("b", reveal("b", 1, SALT_1, true))]);
        assert_eq!(summary.warnings, vec![warning("b", 1)], "SALT_1 belongs to (a, 0)");
    }
    assert_eq!(rehydrated.digest(), live.digest());
}
