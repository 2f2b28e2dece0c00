//! The store the host suite runs on is the one `GAOS_TEST_STORE` names:
//! `scripts/test` runs every test of a real `gaos serve` twice, on SQLite
//! and on PostgreSQL, and this test fails if the second run were SQLite
//! again (a switch that did nothing would leave PostgreSQL untested).

use gaos_testkit::http::*;
use gaos_testkit::server::{TEST_STORE_VAR, TestServer};
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

#[test]
fn the_servers_of_the_host_suite_run_on_the_store_the_run_names() {
    let on_postgres = std::env::var(TEST_STORE_VAR).is_ok_and(|v| v.trim() == "postgres");
    let mut server = TestServer::start(GAOS);
    let sqlite_file = server.data_dir().join("gaos.sqlite3");
    let created = create_session(server.base_url(), server.operator_token(), &json!({"game": "conformance/tictactoe"}));
    let tick = get(server.base_url(), &created.path("tick"), Some(created.token("x")));
    assert_eq!(tick.status, 200, "{}", tick.text());
    let node = tick.header("gaos-node").expect("every answer names its node").to_owned();
    if on_postgres {
        assert!(!sqlite_file.exists(), "a PostgreSQL host keeps no SQLite database in its data directory");
        assert!(node.starts_with("test-"), "the node id the test store gave: {node}");
    } else {
        assert!(sqlite_file.is_file(), "the embedded store is in the data directory");
    }
    // A restart finds the same session on the same store.
    server.restart();
    let again = get(server.base_url(), &created.path("tick"), Some(created.token("x")));
    assert_eq!(again.status, 200, "{}", again.text());
    if on_postgres {
        assert_eq!(again.header("gaos-node"), Some(node.as_str()), "the same node of the same store again");
    }
}
