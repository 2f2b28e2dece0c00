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

/// `scripts/host-ab` (BENCHMARKS.md): runs of the two sides interleaved
/// A B B A, each against a host of its own, then the medians side by side.
#[test]
fn host_ab_interleaves_the_two_sides_and_prints_medians() {
    let python = std::env::var("GAOS_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/host-ab");
    let output = Command::new(&python)
        .args([script, GAOS, GAOS, "--rounds", "1", "--sessions", "2", "--duration", "0.5", "--warmup", "0.2"])
        .args(["--env-b", "GAOS_AB_SIDE=b"])
        .output()
        .expect("run scripts/host-ab");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "host-ab failed: {}\n{stdout}\n{stderr}", output.status);
    let sides: Vec<&str> =
        stderr.lines().filter(|l| l.starts_with("run ")).filter_map(|l| l.split_whitespace().nth(2)).collect();
    assert_eq!(sides, ["A", "B", "B", "A"], "{stderr}");
    for row in ["acks/s", "host CPU per ack (µs)", "p99 (ms)"] {
        let line = stdout.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("no {row} row in\n{stdout}"));
        let medians: Vec<f64> =
            line[row.len()..].split_whitespace().take(3).map(|x| x.parse().expect("a number")).collect();
        assert!(medians.iter().all(|x| *x > 0.0), "{line}");
    }
    assert!(stdout.contains("GAOS_AB_SIDE=b"), "B's settings are named: {stdout}");

    let missing =
        Command::new(&python).args([script, "/nonexistent/gaos", GAOS]).output().expect("run scripts/host-ab");
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("is not an executable"));
}
