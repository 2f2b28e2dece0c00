//! Installed after the process opened a connection, the layer is refused with
//! a typed error naming why, and SQLite goes on with its own cache (its own
//! file: the order of first calls in the process is what is tested).

use gaos_sqlite_pagecache::InstallError;

#[test]
fn a_layer_asked_for_after_the_first_connection_is_refused_and_sqlite_goes_on() {
    let first = rusqlite::Connection::open_in_memory().expect("a connection");
    let refused = gaos_sqlite_pagecache::install().expect_err("SQLite is initialized already");
    assert_eq!(refused, InstallError::Refused(rusqlite::ffi::SQLITE_MISUSE));
    assert!(refused.to_string().contains("only before its first connection"), "{refused}");
    assert!(!gaos_sqlite_pagecache::installed());
    assert_eq!(gaos_sqlite_pagecache::install(), Err(refused), "later calls give the same answer");

    first.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2);").expect("SQLite still works");
    let sum: i64 = first.query_row("SELECT sum(x) FROM t", [], |row| row.get(0)).expect("a sum");
    assert_eq!(sum, 3);
    assert_eq!(gaos_sqlite_pagecache::truncations().skipped, 0, "no cache went through the layer");
}
