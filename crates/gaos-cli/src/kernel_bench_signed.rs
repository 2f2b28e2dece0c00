//! `gaos kernel-bench --signed`: the signing roster of the benchmark's two
//! seats and their submissions, signed ahead of the run (signing is the
//! client's cost; the benchmark measures the kernel's checks).

use gaos_json::Value;
use gaos_kernel::signing::{Roster, SubmissionLink, chain_link, to_base64};
use gaos_kernel::{CommandSubmission, DynReducer, SessionKernel};
use gaos_runner::signing::SeatSigningKey;

const SEATS: [&str; 2] = ["a", "b"];

fn key(seat: usize) -> SeatSigningKey {
    SeatSigningKey::from_seed([seat as u8 + 1; 32])
}

/// Seats `a` and `b` with fixed keys, tier 1.
pub(crate) fn roster() -> Roster {
    let keys = SEATS.iter().enumerate().map(|(i, seat)| key(i).seat_key(seat, 1));
    Roster::from_value(&Value::Array(keys.collect())).expect("a valid roster")
}

/// Every submission of `rounds` rounds (a then b, round r at cursor r),
/// each signed on its seat's chain.
pub(crate) fn presign(
    kernel: &SessionKernel<DynReducer>,
    rounds: u64,
    commands: [&Value; 2],
) -> Vec<CommandSubmission> {
    let roster = roster();
    let mut heads: Vec<[u8; 32]> = SEATS.iter().map(|seat| roster.genesis("bench", seat).expect("genesis")).collect();
    let keys: Vec<SeatSigningKey> = (0..SEATS.len()).map(key).collect();
    let commands: Vec<String> = commands.iter().map(|c| gaos_json::canonical_json(c)).collect();
    let mut out = Vec::with_capacity(rounds as usize * 2);
    for round in 0..rounds {
        for (i, seat) in SEATS.iter().enumerate() {
            let id = format!("{seat}-{round}");
            let client_time = 1_785_000_000_000 + round;
            let link = SubmissionLink {
                session_id: "bench",
                seat,
                submission_id: &id,
                cursor: kernel.cursor() + round,
                tick: kernel.tick() + round,
                client_time,
                canonical_command: &commands[i],
                prev_chain_hash: &heads[i],
            };
            let preimage = link.preimage().expect("a valid link");
            let command = gaos_json::parse(&commands[i]).expect("canonical JSON");
            let mut submission = CommandSubmission::new("bench", kernel.cursor() + round, seat, &id, command);
            submission.client_time = Some(client_time.into());
            submission.prev_chain_hash = Some(to_base64(&heads[i]).into());
            submission.sig = Some(to_base64(&keys[i].sign(&preimage)).into());
            heads[i] = chain_link(&preimage);
            out.push(submission);
        }
    }
    out
}
