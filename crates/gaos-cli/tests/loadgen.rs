//! `gaos loadgen` against a real `gaos serve`: both load shapes report
//! acknowledged actions without errors, and bad arguments are usage errors.

use std::process::{Command, Output};

use gaos_json::Value;
use gaos_testkit::server::TestServer;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

fn loadgen(server: &TestServer, extra: &[&str]) -> Output {
    let mut args = vec!["loadgen", "--host", server.base_url(), "--sessions", "3", "--seats", "2", "--json"];
    args.extend_from_slice(extra);
    Command::new(GAOS).args(&args).env("GAOS_OPERATOR_TOKEN", server.operator_token()).output().expect("run loadgen")
}

fn report(output: &Output) -> Value {
    assert!(output.status.success(), "loadgen failed: {}\n{}", output.status, String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout.clone()).expect("UTF-8");
    gaos_json::parse(text.trim()).expect("one JSON object")
}

fn number(report: &Value, key: &str) -> f64 {
    report.get(key).and_then(Value::as_f64).unwrap_or_else(|| panic!("{key} in {report:?}"))
}

#[test]
fn closed_and_open_loop_runs_report_acknowledged_actions() {
    let server = TestServer::start(GAOS);

    let closed = report(&loadgen(&server, &["--duration", "1", "--warmup", "0.2"]));
    assert!(number(&closed, "acknowledgedActions") > 0.0, "{closed:?}");
    assert!(number(&closed, "p99Ms") >= number(&closed, "p50Ms"));
    assert_eq!(closed.get("errors"), Some(&Value::Object(Default::default())), "{closed:?}");
    assert!(closed.get("offeredPerSecond").is_none(), "closed loop offers no rate");

    // Open loop: 60 actions/s offered over 3 sessions × 2 seats (one action per
    // seat every 100 ms); the achieved rate follows the offer, not the host's speed.
    let open = report(&loadgen(&server, &["--duration", "2", "--warmup", "0.2", "--rate", "60"]));
    assert_eq!(number(&open, "offeredPerSecond"), 60.0);
    let rate = number(&open, "actionsPerSecond");
    assert!((30.0..=70.0).contains(&rate), "open loop at 60/s achieved {rate}/s: {open:?}");
    assert!(number(&open, "fromScheduleP99Ms") >= number(&open, "fromScheduleP50Ms"));
    assert_eq!(open.get("errors"), Some(&Value::Object(Default::default())), "{open:?}");
}

#[test]
fn bad_arguments_are_usage_errors() {
    let server = TestServer::start(GAOS);
    for extra in [&["--rate", "0"][..], &["--rate", "nan"], &["--duration", "-1"]] {
        let output = loadgen(&server, extra);
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
    let output = Command::new(GAOS)
        .args(["loadgen", "--host", server.base_url(), "--duration", "1"])
        .env_remove("GAOS_OPERATOR_TOKEN")
        .output()
        .expect("run loadgen");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("GAOS_OPERATOR_TOKEN"));
}
