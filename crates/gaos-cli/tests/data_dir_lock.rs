//! One host per data directory (issue 15, item 7): a second `gaos serve` on
//! a directory a running host owns refuses at once, naming the owner's
//! process, before it reads anything (no session is rehydrated twice), and
//! the first host keeps serving. Once the owner is gone, even killed, the
//! directory can be served again.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// Run a second `gaos serve` on `dir`; it must exit on its own within 20 s.
fn second_serve(dir: &std::path::Path) -> (Option<i32>, String, String) {
    let mut child = Command::new(GAOS)
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(dir)
        .env_remove("GAOS_OPERATOR_TOKEN")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a second gaos serve");
    let started = Instant::now();
    while child.try_wait().expect("poll the second serve").is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the second gaos serve on a locked directory did not stop");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("its output");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_second_host_on_the_same_data_directory_refuses_and_names_the_owner() {
    let dir = TempDir::new("gaos-data-dir-lock");
    let mut first = TestServer::start_in(GAOS, dir.path(), &[]);
    let session = create_session(&first.base_url, &first.operator_token, &json!({"game": "conformance/hilo"}));
    let owner: u32 = std::fs::read_to_string(dir.path().join("lock"))
        .expect("the lock file")
        .trim()
        .parse()
        .expect("the lock file holds the owner's pid");
    let cmdline = std::fs::read(format!("/proc/{owner}/cmdline")).unwrap_or_default();
    assert!(String::from_utf8_lossy(&cmdline).contains("serve"), "the pid is the running gaos serve");

    let (code, stdout, stderr) = second_serve(dir.path());
    assert_ne!(code, Some(0), "the second host fails");
    assert!(stderr.contains(&format!("in use by process {owner}")), "the refusal names the owner: {stderr}");
    assert!(!stdout.contains("listening"), "it never listens: {stdout}");
    assert!(
        !stderr.contains("session rehydrated") && !stdout.contains("rehydrated"),
        "nothing was rehydrated: {stdout}{stderr}"
    );

    // The owner is untouched.
    let tick = get(&first.base_url, &session.path("tick"), Some(session.token("alice")));
    assert_eq!(tick.status, 200, "{}", tick.text());

    // A killed owner leaves its lock file behind but not its lock.
    first.kill();
    first.restart();
    let tick = get(&first.base_url, &session.path("tick"), Some(session.token("alice")));
    assert_eq!(tick.status, 200, "the directory is served again after the owner died: {}", tick.text());
}
