//! Arguments are passed as they are (SCRIPT-FORMAT.md §4, issue 13 item 3):
//! wrongly typed or out-of-domain values reach the kernel's own checks, which
//! decide the error: an undeclared seat is `range` for observe/snapshot, a
//! number beyond the safe-integer range is refused at its own step, a view
//! outside the value domain is `advance`/`invalid_view` (not a reducer
//! failure), and a mapper's malformed commitment envelope is `conflict`.

// `Prepared` is not `Debug`, so `expect_err` is not available.
#![allow(clippy::err_expect)]

use std::sync::Arc;

use gaos_json::{Map, Value, obj, parse_lenient};
use gaos_kernel::{
    Cadence, CommandSubmission, GameError, GameRef, HostTime, KernelOptions, SeedPolicy, SessionKernel, SessionLimits,
    SubmittedAction, TickRate, TickReducer, seed_from_value,
};

/// Sums every input's `index` like JavaScript; the view shows the total.
struct Sum;

impl TickReducer for Sum {
    type State = f64;
    fn init(&self, _level: &Value, _seed: u32) -> Result<f64, GameError> {
        Ok(0.0)
    }
    fn advance(&self, total: f64, inputs: &[SubmittedAction]) -> Result<f64, GameError> {
        Ok(inputs.iter().filter_map(|i| i.index).fold(total, |t, i| t + i))
    }
    fn view(&self, total: &f64) -> Value {
        obj! { "status" => "playing", "hud" => obj! { "actionsUsed" => 0u32 }, "total" => Value::Number(*total) }.into()
    }
}

/// Commands are the actions themselves, except that envelope fields whose
/// shape the typed envelope cannot hold travel in `extra` (as the sealed
/// game's mapper does).
fn map_command(command: &Value) -> Result<SubmittedAction, GameError> {
    let mut fields = command.as_object().cloned().unwrap_or_default();
    let mut odd = Map::new();
    for key in ["commit", "reveal"] {
        if let Some(v) = fields.remove(key) {
            odd.insert(key.into(), v);
        }
    }
    let mut action: SubmittedAction =
        gaos_json::from_value(Value::Object(fields)).map_err(|e| GameError::new(e.to_string()))?;
    action.extra.append(&mut odd);
    Ok(action)
}

fn kernel(cadence: Cadence) -> SessionKernel<Sum> {
    SessionKernel::new(KernelOptions {
        session_id: "args".into(),
        game: GameRef::conventional("tests/arguments"),
        level_id: "only".into(),
        level_version: None,
        reducer: Sum,
        level: Value::Null,
        seed: 0,
        seed_policy: SeedPolicy::Explicit,
        seats: vec!["a".into(), "b".into()],
        cadence,
        host_time: HostTime::None,
        dmath: None,
        command_to_action: Arc::new(|command, _| map_command(command)),
        timeout_to_action: None,
        limits: SessionLimits::default(),
        state_isolation: None,
        signing: None,
        timeout_policy: None,
    })
    .expect("valid options")
}

fn json(text: &str) -> Value {
    parse_lenient(text).expect("test JSON")
}

fn code(e: &gaos_kernel::KernelError) -> (&'static str, &'static str) {
    (e.kind(), e.code())
}

#[test]
fn an_undeclared_seat_is_a_range_error_for_observe_and_snapshot() {
    let k = kernel(Cadence::Turns);
    assert_eq!(code(&k.observe("zed").unwrap_err()), ("argument", "range"));
    assert_eq!(code(&k.snapshot("zed", None).unwrap_err()), ("argument", "range"));
    assert_eq!(code(&k.snapshot("zed", Some(0)).unwrap_err()), ("argument", "range"));
    assert_eq!(code(&k.view_revision("zed").unwrap_err()), ("argument", "range"));
}

#[test]
fn snapshot_without_after_means_zero() {
    let k = kernel(Cadence::Turns);
    assert_eq!(k.snapshot("a", None).unwrap(), k.snapshot("a", Some(0)).unwrap());
    assert_eq!(code(&k.snapshot("a", Some(1)).unwrap_err()), ("argument", "range"));
}

#[test]
fn a_view_outside_the_value_domain_is_invalid_view_not_a_reducer_failure() {
    let mut k = kernel(Cadence::Turns);
    for (seat, n) in [("a", "9007199254740991"), ("b", "1")] {
        let sub = CommandSubmission::new(
            "args",
            0,
            seat,
            &format!("{seat}-1"),
            json(&format!(r#"{{"id":"Action 1","index":{n}}}"#)),
        );
        let p = k.prepare_ingest(&sub).expect("a safe index is accepted");
        k.apply_now(p).expect("commits");
    }
    let e = k.prepare_advance(None).err().expect("the total passes 2^53");
    assert_eq!(code(&e), ("advance", "invalid_view"));
    assert_eq!(k.cursor(), 0, "nothing resolved");
}

#[test]
fn an_unsafe_integer_in_a_command_is_invalid_submission() {
    let k = kernel(Cadence::Turns);
    let sub = CommandSubmission::new("args", 0, "a", "a-1", json(r#"{"id":"Action 1","index":9007199254740993}"#));
    assert_eq!(code(&k.prepare_ingest(&sub).err().expect("refused")), ("intent", "invalid_submission"));
}

#[test]
fn an_unsafe_integer_in_an_extension_record_is_a_type_error() {
    let k = kernel(Cadence::Turns);
    let e = k.prepare_extension("notes", &json(r#"{"n":9007199254740993}"#)).err().expect("refused");
    assert_eq!(code(&e), ("argument", "type"));
}

#[test]
fn an_unsafe_or_wrongly_typed_target_is_invalid_target() {
    let k = kernel(Cadence::Ticks(TickRate::new(10.0).unwrap()));
    for target in [9007199254740994.0, f64::NAN, 0.5, -1.0] {
        assert_eq!(code(&k.prepare_advance(Some(target)).err().expect("refused")), ("advance", "invalid_target"));
    }
}

#[test]
fn a_malformed_commitment_envelope_from_the_mapper_is_conflict() {
    let k = kernel(Cadence::Turns);
    for command in [
        r#"{"id":"Action 1","commit":{"commitmentId":0,"scheme":"gaos.commit.sha256.v1","hash":5}}"#,
        r#"{"id":"Action 1","commit":7}"#,
        r#"{"id":"Action 1","reveal":{"commitmentId":0,"salt":7,"payload":{}}}"#,
    ] {
        let sub = CommandSubmission::new("args", 0, "a", "a-1", json(command));
        assert_eq!(code(&k.prepare_ingest(&sub).err().expect("refused")), ("conflict", "conflict"), "{command}");
    }
}

#[test]
fn a_seed_must_be_a_u32() {
    assert_eq!(seed_from_value(&json("4294967295")).unwrap(), u32::MAX);
    for bad in ["4294967296", "9007199254740993", "-1", "1.5", "\"7\"", "null"] {
        assert_eq!(code(&seed_from_value(&json(bad)).unwrap_err()), ("argument", "type"), "{bad}");
    }
}

#[test]
fn value_entry_points_let_wrong_types_reach_the_kernels_checks() {
    let k = kernel(Cadence::Ticks(TickRate::new(10.0).unwrap()));
    assert_eq!(code(&k.observe_value(&json("5")).unwrap_err()), ("argument", "range"));
    assert_eq!(code(&k.observe_value(&Value::Null).unwrap_err()), ("argument", "range"));
    assert_eq!(code(&k.snapshot_value(&json("5"), None).unwrap_err()), ("argument", "range"));
    assert_eq!(k.snapshot_value(&json("\"a\""), Some(&Value::Null)).unwrap(), k.snapshot("a", Some(0)).unwrap());
    assert_eq!(code(&k.snapshot_value(&json("\"a\""), Some(&json("\"0\""))).unwrap_err()), ("argument", "range"));
    for target in ["\"1\"", "true", "9007199254740993"] {
        let e = k.prepare_advance_value(Some(&json(target))).err().expect("refused");
        assert_eq!(code(&e), ("advance", "invalid_target"), "{target}");
    }
    assert!(k.prepare_advance_value(None).is_ok());
    assert_eq!(code(&k.prepare_extension_value(&json("5"), &json("{}")).err().expect("refused")), ("argument", "type"));
    assert_eq!(
        code(&k.prepare_extension_value(&json("\"n\""), &Value::Null).err().expect("refused")),
        ("argument", "type")
    );
}
