//! Attach receipts carried by a session's finalized replay (lifecycle spec
//! §3: receipts are part of the session's record).
//!
//! A host that issued receipts puts the session's whole chain, oldest
//! first, in the replay header:
//! `extensions["gaos.session.attach"] = {"receipts": [r0, r1, ...]}`, with
//! `"mode": "unlinked"` added when it issues unlinked receipts. They sit in
//! the header, not in the records: a record is a kernel event, and an event
//! would move the transition revision, which an attach must never do.
//!
//! [`verify_session_replay`] is the kernel's replay verifier followed by the
//! receipt check; `gaos replay verify`, `gaos bench verify` and a host's
//! official evaluation all call it. An absent key is fine (most sessions
//! issue no receipts); a product that requires receipts checks the key is
//! there itself.

use gaos_json::{Map, Value};
use gaos_kernel::replay::{
    GameResolver, ReplaySource, ReplayedLevel, Stage, Verdict, VerifyOptions, VerifyReport, verify_replay,
};

use crate::extensions::EXT_ATTACH;
use crate::receipts::{AttachReceipt, ReceiptError, ReceiptLinks};

/// The `mode` a header writes for unlinked receipts (absent means chained).
const MODE_UNLINKED: &str = "unlinked";

/// Where the receipts sit, for problem messages.
const FIELD: &str = "header.extensions[\"gaos.session.attach\"]";

/// The header extension value carrying `receipts` (oldest first), or `None`
/// when there are none, so a session without receipts keeps its replay
/// bytes. Fails like [`AttachReceipt::to_value`].
pub fn replay_attach_extension(receipts: &[AttachReceipt], links: ReceiptLinks) -> Result<Option<Value>, ReceiptError> {
    if receipts.is_empty() {
        return Ok(None);
    }
    let mut ext = Map::new();
    if links == ReceiptLinks::Unlinked {
        ext.insert("mode".into(), MODE_UNLINKED.into());
    }
    let values = receipts.iter().map(AttachReceipt::to_value).collect::<Result<Vec<_>, _>>()?;
    ext.insert("receipts".into(), Value::Array(values));
    Ok(Some(Value::Object(ext)))
}

/// What a replay header says about attach receipts, once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CarriedReceipts {
    /// The header carries no `gaos.session.attach` key.
    Absent,
    /// The chain of this many receipts verifies.
    Verified(usize),
}

/// Why a replay's receipts are refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptsRefused {
    /// The extension does not have its shape (not an object, `receipts` not
    /// an array, an unknown `mode` or member).
    Malformed(String),
    /// The chain does not verify, or does not belong to this replay; one
    /// line per problem, each naming the receipt's index.
    Invalid(Vec<String>),
}

/// The revision of a replay's last transition, as the host numbered it
/// (the `revision` of envelopes and receipts): a level's revisions are its
/// resolutions, and a run's next level starts one past the previous
/// level's last (gaos-host's `episodes.rs`). `None` before re-simulation.
pub fn final_revision(levels: &[ReplayedLevel]) -> Option<u64> {
    let (last, earlier) = levels.split_last()?;
    Some(earlier.iter().map(|level| level.resolutions + 1).sum::<u64>() + last.resolutions)
}

/// Check the receipts `header` carries against the replay they are in:
/// the chain verifies under its mode (receipts chain rules, lifecycle spec
/// §3), it starts at sequence 0, every receipt names the replay's session,
/// and no receipt names a revision beyond `final_revision`.
pub fn check_replay_receipts(header: &Map, final_revision: u64) -> Result<CarriedReceipts, ReceiptsRefused> {
    let Some(ext) = header.get("extensions").and_then(|e| e.get(EXT_ATTACH)) else {
        return Ok(CarriedReceipts::Absent);
    };
    let malformed = |why: String| Err(ReceiptsRefused::Malformed(why));
    let Some(ext) = ext.as_object() else {
        return malformed(format!("must be an object {{\"receipts\": [...]}}, found {ext}"));
    };
    if let Some(key) = ext.keys().find(|k| !matches!(k.as_str(), "receipts" | "mode")) {
        return malformed(format!("unknown member {key:?} (a verifier that skipped it would vouch for it unread)"));
    }
    let links = match ext.get("mode") {
        None => ReceiptLinks::Chained,
        Some(Value::String(mode)) if mode == MODE_UNLINKED => ReceiptLinks::Unlinked,
        Some(Value::String(mode)) if mode == "chained" => ReceiptLinks::Chained,
        Some(other) => return malformed(format!("mode must be \"chained\" or \"unlinked\", found {other}")),
    };
    let receipts = match ext.get("receipts") {
        Some(Value::Array(receipts)) => receipts,
        Some(other) => return malformed(format!("receipts must be an array, found {other}")),
        None => return malformed("has no receipts array".into()),
    };
    let mut problems = links.verify(receipts).problems;
    let session_id = header.get("sessionId").and_then(Value::as_str);
    for (i, receipt) in receipts.iter().enumerate() {
        if let Some(named) = receipt.get("sessionId").and_then(Value::as_str)
            && Some(named) != session_id
        {
            problems.push(format!("receipt {i}: sessionId {named:?} is not the replay's session {session_id:?}"));
        }
        if let Some(revision) = receipt.get("revision").and_then(Value::as_u64)
            && revision > final_revision
        {
            problems.push(format!(
                "receipt {i}: revision {revision} is above the replay's final revision {final_revision}"
            ));
        }
    }
    // Later sequences are checked link by link against this one.
    if let Some(first) = receipts.first().and_then(|r| r.get("sequence")).and_then(Value::as_u64)
        && first != 0
    {
        problems.push(format!("receipt 0: sequence {first}, but a session numbers its receipts from 0"));
    }
    if problems.is_empty() {
        Ok(CarriedReceipts::Verified(receipts.len()))
    } else {
        Err(ReceiptsRefused::Invalid(problems))
    }
}

/// The header line of `source` as an object.
fn header_of(source: ReplaySource<'_>) -> Option<Map> {
    let first_line = |bytes: &[u8]| {
        let line = bytes.split(|&b| b == b'\n').next()?;
        let text = std::str::from_utf8(line).ok()?;
        gaos_json::parse(text.trim_end_matches('\r')).ok()?.as_object().cloned()
    };
    match source {
        ReplaySource::Bytes(bytes) => first_line(bytes),
        ReplaySource::Text(text) => first_line(text.as_bytes()),
        ReplaySource::Artifact(artifact) => Some(artifact.header.clone()),
    }
}

/// Verify a session replay: [`verify_replay`], then, when it is accepted,
/// the attach receipts its header carries ([`check_replay_receipts`]). A
/// malformed extension makes the replay `malformed`, a chain that does not
/// verify `rejected`, both at stage `receipts`; a verified chain adds a note.
pub fn verify_session_replay<'a>(
    source: impl Into<ReplaySource<'a>>,
    resolver: &dyn GameResolver,
    options: &VerifyOptions,
) -> VerifyReport {
    let source = source.into();
    let mut report = verify_replay(source, resolver, options);
    if !report.is_accepted() {
        return report;
    }
    let checked = match (header_of(source), final_revision(&report.levels)) {
        (Some(header), Some(last)) => check_replay_receipts(&header, last),
        _ => Err(ReceiptsRefused::Malformed("the header could not be read for the receipt check".into())),
    };
    match checked {
        Ok(CarriedReceipts::Absent) => {}
        Ok(CarriedReceipts::Verified(count)) => {
            report.notes.push(format!("{count} attach receipt(s) in {FIELD} verify as the session's chain"))
        }
        Err(refused) => {
            let (verdict, problems) = match refused {
                ReceiptsRefused::Malformed(why) => (Verdict::Malformed, vec![why]),
                ReceiptsRefused::Invalid(problems) => (Verdict::Rejected, problems),
            };
            report.verdict = verdict;
            report.stage = Some(Stage::Receipts);
            for problem in problems {
                report.problems.at(1, FIELD, problem);
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipts::ReceiptBody;

    fn receipt(previous: Option<&AttachReceipt>, revision: u64) -> AttachReceipt {
        let body = match previous {
            None => ReceiptBody::new("s", "r0", 0, revision, "t".repeat(64), "d".repeat(64)),
            Some(p) => ReceiptBody::next(p, format!("r{}", p.sequence + 1), revision, "t".repeat(64), "d".repeat(64)),
        };
        AttachReceipt::new(body).expect("a receipt")
    }

    fn header(ext: Option<Value>) -> Map {
        let mut header = Map::new();
        header.insert("sessionId".into(), "s".into());
        if let Some(ext) = ext {
            let mut extensions = Map::new();
            extensions.insert(EXT_ATTACH.into(), ext);
            header.insert("extensions".into(), Value::Object(extensions));
        }
        header
    }

    fn level(resolutions: u64) -> ReplayedLevel {
        ReplayedLevel { index: 0, status: None, stars: None, actions_used: None, outcome: None, resolutions }
    }

    fn invalid(result: Result<CarriedReceipts, ReceiptsRefused>) -> Vec<String> {
        match result {
            Err(ReceiptsRefused::Invalid(problems)) => problems,
            other => panic!("expected an invalid chain, got {other:?}"),
        }
    }

    #[test]
    fn a_chain_round_trips_through_the_header_and_verifies() {
        let first = receipt(None, 0);
        let second = receipt(Some(&first), 3);
        let ext = replay_attach_extension(&[first.clone(), second], ReceiptLinks::Chained).expect("JSON");
        assert!(ext.as_ref().and_then(|e| e.get("mode")).is_none(), "chained is the default and is not written");
        assert_eq!(check_replay_receipts(&header(ext.clone()), 3), Ok(CarriedReceipts::Verified(2)));
        let problems = invalid(check_replay_receipts(&header(ext), 2));
        assert_eq!(problems, ["receipt 1: revision 3 is above the replay's final revision 2"]);
        assert_eq!(replay_attach_extension(&[], ReceiptLinks::Chained), Ok(None));
        assert_eq!(check_replay_receipts(&header(None), 0), Ok(CarriedReceipts::Absent));
    }

    #[test]
    fn unlinked_receipts_say_so_and_verify_without_links() {
        let first = receipt(None, 0);
        let mut body = ReceiptBody::new("s", "r1", 1, 1, "t".repeat(64), "d".repeat(64));
        body.attached_at = Some(5.0);
        let second = AttachReceipt::new(body).expect("a receipt");
        let ext = replay_attach_extension(&[first.clone(), second.clone()], ReceiptLinks::Unlinked).expect("JSON");
        assert_eq!(ext.as_ref().and_then(|e| e.get("mode")).and_then(Value::as_str), Some("unlinked"));
        assert_eq!(check_replay_receipts(&header(ext), 1), Ok(CarriedReceipts::Verified(2)));
        let chained = replay_attach_extension(&[first, second], ReceiptLinks::Chained).expect("JSON");
        let problems = invalid(check_replay_receipts(&header(chained), 1));
        assert!(problems[0].starts_with("receipt 1: previousReceiptDigest is missing; it must link"), "{problems:?}");
    }

    #[test]
    fn a_chain_of_another_session_or_not_from_zero_is_refused() {
        let mut body = ReceiptBody::new("other", "r0", 4, 0, "t".repeat(64), "d".repeat(64));
        body.attached_at = Some(1.0);
        let stray = AttachReceipt::new(body).expect("a receipt");
        let ext = replay_attach_extension(&[stray], ReceiptLinks::Chained).expect("JSON");
        let problems = invalid(check_replay_receipts(&header(ext), 9));
        assert_eq!(
            problems,
            [
                "receipt 0: sessionId \"other\" is not the replay's session Some(\"s\")",
                "receipt 0: sequence 4, but a session numbers its receipts from 0"
            ]
        );
    }

    #[test]
    fn a_misshapen_extension_is_malformed() {
        for (ext, why) in [
            (Value::from("x"), "must be an object"),
            (gaos_json::parse(r#"{"receipts":{}}"#).expect("JSON"), "receipts must be an array"),
            (gaos_json::parse(r#"{}"#).expect("JSON"), "has no receipts array"),
            (gaos_json::parse(r#"{"receipts":[],"mode":"loose"}"#).expect("JSON"), "mode must be"),
            (gaos_json::parse(r#"{"receipts":[],"extra":1}"#).expect("JSON"), "unknown member \"extra\""),
        ] {
            match check_replay_receipts(&header(Some(ext)), 0) {
                Err(ReceiptsRefused::Malformed(message)) => assert!(message.starts_with(why), "{message}"),
                other => panic!("expected malformed ({why}), got {other:?}"),
            }
        }
    }

    #[test]
    fn the_final_revision_of_a_run_counts_one_past_each_finished_level() {
        assert_eq!(final_revision(&[]), None);
        assert_eq!(final_revision(&[level(4)]), Some(4));
        // Levels of 2, 3 and 1 resolutions: revisions 0..=2, 3..=6, 7..=8.
        assert_eq!(final_revision(&[level(2), level(3), level(1)]), Some(8));
    }
}
