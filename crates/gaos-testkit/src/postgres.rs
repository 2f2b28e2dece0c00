//! A real PostgreSQL server for the tests of the PostgreSQL store and of
//! clusters: `GAOS_TEST_POSTGRES` (a `postgres://` URL of a server the tests
//! may create databases on; `scripts/test` starts one and sets it), else a
//! server shared by every test process of this machine, started once with
//! Debian's `initdb` and `pg_ctl` on a free loopback port under
//! `<tmp>/gaos-test-postgres-<uid>` (as the `postgres` user when running as
//! root: PostgreSQL refuses root) and left running for the next run. Each
//! test gets a fresh database ([`TestPostgres::database`]). A machine
//! without PostgreSQL fails the test with what to install; it never skips.

use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Start a server in `dir` (initdb on first use) on a free port.
fn start_server(dir: &std::path::Path) -> String {
    let run_as = is_root().then(|| "postgres".to_owned());
    let data = dir.join("data");
    if let Some(user) = &run_as {
        let status = Command::new("chown").args(["-R", user]).arg(dir).status();
        assert!(status.is_ok_and(|s| s.success()), "cannot hand {} to {user}", dir.display());
    }
    if !data.join("PG_VERSION").is_file() {
        let _ = std::fs::remove_dir_all(&data);
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
    }
    // A server left by a killed run holds a stale pid file: stop it first.
    let _ = pg_command("pg_ctl", &run_as).arg("-D").arg(&data).args(["-m", "immediate", "stop"]).output();
    let port = free_port();
    let log = dir.join("postgres.log");
    let options = format!(
        "-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={} -c max_connections=400 \
         -c shared_buffers=64MB",
        dir.display()
    );
    let started = pg_command("pg_ctl", &run_as)
        .arg("-D")
        .arg(&data)
        .arg("-l")
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
    format!("postgres://gaos@127.0.0.1:{port}")
}

/// A PostgreSQL server tests may create databases on.
pub struct TestPostgres {
    /// `postgres://USER@127.0.0.1:PORT` (no database).
    base: String,
}

/// The server of this test run (found or started once per process).
pub fn server() -> &'static TestPostgres {
    static SERVER: OnceLock<TestPostgres> = OnceLock::new();
    SERVER.get_or_init(TestPostgres::find_or_start)
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

fn answers(base: &str) -> bool {
    Command::new("psql")
        .args([&format!("{base}/postgres"), "-qAtc", "SELECT 1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Hold an exclusive lock on `path` while `f` runs (another test process
/// starting the shared server at the same moment waits here).
fn with_lock<T>(path: &std::path::Path, f: impl FnOnce() -> T) -> T {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    file.lock().unwrap_or_else(|e| panic!("cannot lock {}: {e}", path.display()));
    let out = f();
    drop(file);
    out
}

impl TestPostgres {
    fn find_or_start() -> TestPostgres {
        if let Ok(url) = std::env::var("GAOS_TEST_POSTGRES")
            && !url.trim().is_empty()
        {
            return TestPostgres { base: url.trim().trim_end_matches('/').to_owned() };
        }
        let uid = std::fs::read_to_string("/proc/self/loginuid").unwrap_or_default();
        let dir = std::env::temp_dir().join(format!("gaos-test-postgres-{}", uid.trim()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        let lock = dir.join("start.lock");
        with_lock(&lock, || {
            let port_file = dir.join("port");
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                let base = format!("postgres://gaos@127.0.0.1:{}", port.trim());
                if answers(&base) {
                    return TestPostgres { base };
                }
            }
            let base = start_server(&dir);
            std::fs::write(&port_file, base.rsplit(':').next().expect("a port")).expect("the port file");
            TestPostgres { base }
        })
    }

    /// A fresh, empty database; returns its URL.
    pub fn database(&self, prefix: &str) -> String {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        // The server outlives test processes, whose ids come round again:
        // the time makes a name no earlier run used.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() % 1_000_000_000_000)
            .unwrap_or(0);
        let name = format!(
            "{}_{}_{}_{nanos}",
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
