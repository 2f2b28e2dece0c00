//! Issue 26, item 6, against the real `gaos serve --bench-reports DIR`:
//! `/bench/` (served without a token) reads only regular files whose
//! canonical path stays under the canonical reports directory and the run.
//! An unpacked bundle whose episode file or `scores.svg` is a symbolic link to
//! the host's `operator-token` or `host-key`, or a run directory that is a
//! link to somewhere else, publishes nothing.

use std::os::unix::fs::symlink;

mod bench_support;

use bench_support::one_episode_run;
use gaos_testkit::http::get;
use gaos_testkit::server::{TempDir, TestServer};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

#[test]
fn symbolic_links_out_of_a_run_publish_none_of_the_hosts_secrets() {
    let reports = TempDir::new("gaos-linked-reports");
    let run = one_episode_run(GAOS, reports.path(), "run1");
    let server = TestServer::start_with(GAOS, &["--bench-reports", reports.path().to_str().unwrap()]);
    let base = server.base_url().to_owned();
    let secrets =
        [server.operator_token().to_owned(), std::fs::read_to_string(server.data_dir().join("host-key")).unwrap()];
    let leaks = |body: &str| secrets.iter().any(|s| body.contains(s.trim()));

    // A chart that leads to the host key: the report shows no chart.
    std::fs::remove_file(run.join("scores.svg")).unwrap();
    symlink(server.data_dir().join("host-key"), run.join("scores.svg")).unwrap();
    let report = get(&base, "/bench/run1/", None);
    assert_eq!(report.status, 200, "{}", report.text());
    assert!(!leaks(&report.text()), "the report inlined a secret: {}", report.text());

    // An episode file that leads to the operator token.
    let episodes = run.join("bundle/episodes");
    let own_replays: Vec<String> =
        std::fs::read_dir(&episodes).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
    symlink(server.data_dir().join("operator-token"), episodes.join("token.gaos-replay.jsonl")).unwrap();
    let answer = get(&base, "/bench/run1/bundle/episodes/token.gaos-replay.jsonl", None);
    assert_eq!(answer.status, 404, "{}", answer.text());
    assert!(!leaks(&answer.text()));

    // A run directory that is a link to a directory outside DIR.
    let elsewhere = TempDir::new("gaos-elsewhere");
    std::fs::create_dir_all(elsewhere.path().join("bundle/episodes")).unwrap();
    std::fs::write(elsewhere.path().join("bundle/episodes/x.gaos-replay.jsonl"), "outside the reports").unwrap();
    symlink(elsewhere.path(), reports.path().join("linked")).unwrap();
    assert_eq!(get(&base, "/bench/linked/bundle/episodes/x.gaos-replay.jsonl", None).status, 404);
    assert_eq!(get(&base, "/bench/linked/", None).status, 404);
    let listing = get(&base, "/bench/", None).text();
    assert!(listing.contains("run1") && !listing.contains("linked"), "{listing}");

    // The run's own files are still served.
    let own = get(&base, &format!("/bench/run1/bundle/episodes/{}", own_replays[0]), None);
    assert_eq!(own.status, 200, "{}", own.text());
}
