//! Signed entrants in `gaos arena` through the real binary: an entrant with
//! a `seatKey` (a `gaos keygen` file beside the manifest) plays every match
//! as a signed session; its replays verify `accepted-signed` with its
//! public key in the roster, the other matches stay unsigned, `gaos arena
//! verify` accepts the bundle and refuses it when the manifest claims a key
//! for an entrant whose matches were not signed.

use std::path::Path;
use std::process::{Command, Output};

use gaos_testkit::server::TempDir;
use serde_json::Value;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// A scratch directory (removed on drop) with a `keys/` directory.
struct Scratch(TempDir);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = TempDir::new(&format!("gaos-arena-{name}"));
        std::fs::create_dir_all(dir.path().join("keys")).expect("keys/");
        Scratch(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.path().join(name).to_str().expect("UTF-8 path").to_owned()
    }
}

fn gaos(args: &[&str]) -> Output {
    Command::new(GAOS).args(args).output().expect("run gaos")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn manifest(keyed: &[&str]) -> String {
    let entrant = |id: &str, driver: &str| {
        let key = if keyed.contains(&id) { format!(r#", "seatKey": "keys/{id}.json""#) } else { String::new() };
        format!(r#"{{"id": "{id}", "driver": "{driver}"{key}}}"#)
    };
    format!(
        r#"{{"schema": "gaos.arena-manifest.v1",
  "arena": {{"id": "signed-test", "version": "1", "adapter": "conformance/hilo"}},
  "levels": [{{"id": "default", "seeds": [1, 2]}}],
  "entrants": [{}, {}, {}],
  "illegalMoves": {{"retries": 0, "then": "random"}},
  "rating": {{"bootstrap": 40, "seed": 3}}}}"#,
        entrant("alice", "first-legal"),
        entrant("random", "random"),
        entrant("first", "first-legal"),
    )
}

fn matches(out: &str) -> Vec<Value> {
    std::fs::read_to_string(Path::new(out).join("bundle/matches.jsonl"))
        .expect("matches.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn a_keyed_entrant_signs_every_move_of_its_matches() {
    let scratch = Scratch::new("signed");
    let key = scratch.path("keys/alice.json");
    let made = gaos(&["keygen", "--seat", "alice", "--out", &key]);
    assert!(made.status.success(), "keygen: {}", text(&made.stderr));
    let roster: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{key}.pub")).expect("the .pub file")).expect("JSON");
    let public_key = roster["publicKey"].as_str().expect("publicKey").to_owned();

    let manifest_file = scratch.path("arena.json");
    std::fs::write(&manifest_file, manifest(&["alice"])).expect("write the manifest");
    let out = scratch.path("out");
    let run = gaos(&["arena", "run", &manifest_file, "--out", &out, "--jobs", "2"]);
    assert!(run.status.success(), "arena run:\n{}\n{}", text(&run.stdout), text(&run.stderr));

    let lines = matches(&out);
    assert_eq!(lines.len(), 12, "3 pairings × 2 seat orders × 2 seeds");
    let (mut signed, mut unsigned) = (0, 0);
    for line in &lines {
        let seats = line["seats"].as_object().expect("seats");
        let replay = Path::new(&out).join("bundle").join(line["replay"].as_str().expect("replay"));
        let verified = gaos(&["replay", "verify", "--json", replay.to_str().expect("UTF-8")]);
        let report: Value = serde_json::from_str(text(&verified.stdout).trim()).expect("a JSON report");
        match seats.iter().find(|(_, entrant)| *entrant == "alice") {
            Some((seat, _)) => {
                signed += 1;
                assert_eq!(report["verdict"], "accepted-signed", "{}: {report}", line["match"]);
                assert_eq!(line["seatKeys"][seat], public_key.as_str(), "alice's own key: {line}");
                let other = seats.keys().find(|s| *s != seat).expect("two seats");
                assert_ne!(line["seatKeys"][other], public_key.as_str(), "the opponent signs with another key");
            }
            None => {
                unsigned += 1;
                assert_eq!(report["verdict"], "accepted-unsigned", "{}: {report}", line["match"]);
                assert!(line.get("seatKeys").is_none(), "an unsigned match names no keys: {line}");
            }
        }
    }
    assert_eq!((signed, unsigned), (8, 4));

    let verify = gaos(&["arena", "verify", &out, "--manifest", &manifest_file]);
    assert!(verify.status.success(), "arena verify:\n{}\n{}", text(&verify.stdout), text(&verify.stderr));

    // A manifest that says `first` signs too does not fit this bundle:
    // its matches with `random` were not signed.
    let claims = scratch.path("claims.json");
    std::fs::write(&claims, manifest(&["alice", "first"])).expect("write the manifest");
    std::fs::copy(&key, scratch.path("keys/first.json")).expect("a key for first");
    let refused = gaos(&["arena", "verify", &out, "--manifest", &claims]);
    let stdout = text(&refused.stdout);
    assert_eq!(refused.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("entrant first has a seatKey, and the match is not signed"), "{stdout}");
}

#[test]
fn a_seat_key_that_does_not_read_exits_2_naming_the_entrant() {
    let scratch = Scratch::new("signed-missing");
    let manifest_file = scratch.path("arena.json");
    std::fs::write(&manifest_file, manifest(&["alice"])).expect("write the manifest");
    let run = gaos(&["arena", "run", &manifest_file, "--out", &scratch.path("out")]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("entrants[0].seatKey") && stderr.contains("alice.json"), "{stderr}");
}
