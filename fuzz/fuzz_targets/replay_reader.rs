//! The JSONL replay reader: arbitrary bytes never panic, the streaming and
//! the line-keeping readers agree, and whatever reads re-serializes into
//! canonical JSONL that reads back to the same artifact.
#![no_main]

use gaos_kernel::replay::{parse_replay_jsonl, read_replay};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let kept = parse_replay_jsonl(text);
    let streamed = read_replay(text);
    match (&kept, &streamed) {
        (Ok(_), Ok(_)) => {}
        (Err(a), Err(b)) => assert_eq!(a.problems, b.problems, "both readers report the same problems"),
        _ => panic!("the readers disagree: {:?} vs {:?}", kept.is_ok(), streamed.is_ok()),
    }
    if let Ok(artifact) = kept {
        let canonical = artifact.to_jsonl();
        let again = parse_replay_jsonl(&canonical).expect("canonical JSONL of a valid artifact reads back");
        assert_eq!(again, artifact, "canonical JSONL round-trips");
        assert_eq!(again.to_jsonl(), canonical, "canonical JSONL is a fixed point");
        assert_eq!(read_replay(&canonical).expect("reads"), streamed.expect("read above"));
    }
});
