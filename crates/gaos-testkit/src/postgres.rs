//! A real PostgreSQL server for the tests of the PostgreSQL store and of
//! clusters: `GAOS_TEST_POSTGRES` (a `postgres://` URL of a server the tests
//! may create databases on, as `.ci/run` provides), else one this process
//! starts itself with Debian's `initdb` and `pg_ctl` on a free loopback
//! port, as the `postgres` user when running as root (PostgreSQL refuses
//! root). Each test gets a fresh database ([`TestPostgres::database`]).
//! A machine without PostgreSQL fails the test with what to install; it
//! never skips.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::server::TempDir;

/// A PostgreSQL server tests may create databases on.
pub struct TestPostgres {
    /// `postgres://USER@127.0.0.1:PORT` (no database).
    base: String,
    /// The server this process started (stopped when the process ends).
    _own: Option<OwnServer>,
}

struct OwnServer {
    data: PathBuf,
    run_as: Option<String>,
    _dir: TempDir,
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = pg_command("pg_ctl", &self.run_as)
            .args(["-D"])
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The server of this test process (started once).
pub fn server() -> &'static TestPostgres {
    static SERVER: OnceLock<TestPostgres> = OnceLock::new();
    SERVER.get_or_init(TestPostgres::start)
}

fn is_root() -> bool {
    // The effective uid, from /proc (no libc call needed).
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false)
}

fn pg_command(program: &str, run_as: &Option<String>) -> Command {
    match run_as {
        Some(user) => {
            let mut command = Command::new("runuser");
            command.args(["-u", user, "--", program]);
            command
        }
        None => Command::new(program),
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("an address").port()
}

impl TestPostgres {
    fn start() -> TestPostgres {
        if let Ok(url) = std::env::var("GAOS_TEST_POSTGRES")
            && !url.trim().is_empty()
        {
            return TestPostgres { base: url.trim().trim_end_matches('/').to_owned(), _own: None };
        }
        let run_as = is_root().then(|| "postgres".to_owned());
        let dir = TempDir::new("gaos-test-postgres");
        let data = dir.path().join("data");
        if let Some(user) = &run_as {
            let status = Command::new("chown").args(["-R", user]).arg(dir.path()).status();
            assert!(status.is_ok_and(|s| s.success()), "cannot hand {} to {user}", dir.path().display());
        }
        let initdb = pg_command("initdb", &run_as)
            .args(["-A", "trust", "-U", "gaos", "--no-sync", "-E", "UTF8", "-D"])
            .arg(&data)
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run initdb ({e}): the PostgreSQL tests need PostgreSQL 15's server binaries on the PATH \
                     (Debian: apt-get install postgresql) or GAOS_TEST_POSTGRES=postgres://USER@HOST:PORT"
                )
            });
        assert!(initdb.status.success(), "initdb failed: {}", String::from_utf8_lossy(&initdb.stderr));
        let port = free_port();
        let log = dir.path().join("postgres.log");
        let options = format!(
            "-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={} -c fsync=on \
             -c max_connections=300 -c shared_buffers=64MB",
            dir.path().display()
        );
        let started = pg_command("pg_ctl", &run_as)
            .args(["-D"])
            .arg(&data)
            .args(["-l"])
            .arg(&log)
            .args(["-o", &options, "-w", "-t", "30", "start"])
            .output()
            .expect("pg_ctl runs");
        assert!(
            started.status.success(),
            "pg_ctl start failed: {}\n{}",
            String::from_utf8_lossy(&started.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        TestPostgres {
            base: format!("postgres://gaos@127.0.0.1:{port}"),
            _own: Some(OwnServer { data, run_as, _dir: dir }),
        }
    }

    /// A fresh, empty database; returns its URL.
    pub fn database(&self, prefix: &str) -> String {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{}_{}_{}",
            prefix.replace(|c: char| !c.is_ascii_alphanumeric(), "_").to_ascii_lowercase(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let admin = format!("{}/postgres", self.base);
        let output = Command::new("psql")
            .args([admin.as_str(), "-v", "ON_ERROR_STOP=1", "-qc", &format!("CREATE DATABASE {name}")])
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run psql ({e}): install the PostgreSQL client (Debian: postgresql-client)")
            });
        assert!(output.status.success(), "CREATE DATABASE {name} failed: {}", String::from_utf8_lossy(&output.stderr));
        format!("{}/{name}", self.base)
    }

    /// Run `sql` on the database at `url` and return psql's unaligned output.
    pub fn query(url: &str, sql: &str) -> String {
        let output = Command::new("psql")
            .args([url, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
            .output()
            .unwrap_or_else(|e| panic!("cannot run psql: {e}"));
        assert!(output.status.success(), "psql {sql:?} failed: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}
