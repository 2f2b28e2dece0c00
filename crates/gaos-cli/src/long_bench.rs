//! `gaos long-bench`: the long-session benchmarks of issue 19, as commands
//! that print tables (BENCHMARKS.md quotes them; they are not timed tests).
//!
//! - `ticks`: one 20 Hz ticks session on an in-process host under a test
//!   clock, driven tick by tick for two hours of ticks (144,000); prints the
//!   process RSS every 10,000 ticks.
//! - `restart`: builds a database of at least `--events` events (counter
//!   sessions played on an in-process host), then starts `gaos serve` on it
//!   as a child process and prints how long `/healthz` and one session's
//!   first `GET /tick` took after the start.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, ExitCode, Stdio};
use std::time::{Duration, Instant};

use gaos_games::GameRegistry;
use gaos_host::auth::Caller;
use gaos_host::lease::Presented;
use gaos_host::requests::{ActRequest, CreateRequest};
use gaos_host::{Host, HostOptions};
use gaos_json::Value;

/// The create answer's extension holding the seat tokens.
const CREDENTIALS: &str = "gaos.host.credentials";

#[derive(clap::Subcommand, Debug, Clone)]
pub(crate) enum LongBench {
    /// A 20 Hz ticks session for --ticks ticks (test clock); RSS per 10,000 ticks.
    Ticks {
        /// Data directory for the database (a tmpfs such as /dev/shm keeps
        /// fsync out of the measurement).
        #[arg(long)]
        data: PathBuf,
        #[arg(long, default_value_t = 144_000)]
        ticks: u64,
        /// `--checkpoint-every` of the host (0: never, the old behaviour).
        #[arg(long, default_value_t = gaos_host::host::DEFAULT_CHECKPOINT_EVERY)]
        checkpoint_every: u64,
    },
    /// Build a database of --events events, restart `gaos serve` on it, time /healthz and a first /tick.
    Restart {
        /// Data directory (created; reused when it already holds the sessions file).
        #[arg(long)]
        data: PathBuf,
        #[arg(long, default_value_t = 1_000_000)]
        events: u64,
        #[arg(long, default_value_t = 200)]
        sessions: u64,
        #[arg(long, default_value_t = gaos_host::host::DEFAULT_CHECKPOINT_EVERY)]
        checkpoint_every: u64,
    },
}

/// This process's resident set size in MiB (Linux `/proc`).
pub(crate) fn rss_mib(pid: Option<u32>) -> Option<f64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let status = std::fs::read_to_string(path).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Samples a process's RSS every 5 s on its own thread (`gaos loadgen
/// --host-pid`).
pub(crate) struct RssSampler {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Vec<(f64, f64)>>,
}

impl RssSampler {
    pub(crate) fn start(pid: u32) -> Self {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut samples = Vec::new();
            loop {
                if let Some(rss) = rss_mib(Some(pid)) {
                    samples.push((started.elapsed().as_secs_f64(), rss));
                }
                match stopped.recv_timeout(Duration::from_secs(5)) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                    _ => break samples,
                }
            }
        });
        RssSampler { stop, thread }
    }

    /// Stop and render the samples as a table.
    pub(crate) fn finish(self) -> String {
        let _ = self.stop.send(());
        let samples = self.thread.join().unwrap_or_default();
        let mut out = format!("{:>7} | {:>9}\n{:->7}-+-{:->9}\n", "t (s)", "RSS MiB", "", "");
        for (t, rss) in &samples {
            out.push_str(&format!("{t:>7.1} | {rss:>9.1}\n"));
        }
        out
    }
}

pub(crate) fn run(bench: LongBench) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("gaos long-bench: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = match bench {
        LongBench::Ticks { data, ticks, checkpoint_every } => {
            runtime.block_on(ticks_bench(&data, ticks, checkpoint_every))
        }
        LongBench::Restart { data, events, sessions, checkpoint_every } => runtime
            .block_on(build_database(&data, events, sessions, checkpoint_every))
            .and_then(|probe| restart_bench(&data, &probe, checkpoint_every)),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gaos long-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

fn create_request(text: &str) -> Result<CreateRequest, String> {
    CreateRequest::from_value(json(text)).map_err(|e| e.message)
}

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("the bench's own JSON")
}

fn options(checkpoint_every: u64) -> HostOptions {
    HostOptions { test_clock: true, checkpoint_every, ..HostOptions::new(GameRegistry::builtin()) }
}

async fn ticks_bench(data: &Path, ticks: u64, checkpoint_every: u64) -> Result<(), String> {
    let host = gaos_host::handle::open_local_host(data, options(checkpoint_every)).await.map_err(|e| e.message)?;
    let create = r#"{"game":"conformance/counter","level":{"rounds":1000000000},
        "cadence":{"mode":"ticks","ticksPerSecond":20}}"#;
    let created = host.create(&Caller::Operator, create_request(create)?).await.map_err(|e| e.message)?;
    let id = at(&json(&created.body), &["sessionId"]).and_then(Value::as_str).ok_or("no sessionId")?.to_owned();
    println!("20 Hz ticks session {id}, {ticks} ticks, checkpoint every {checkpoint_every} transitions");
    println!("{:>8} | {:>9} | {:>8} | {:>10}", "ticks", "RSS MiB", "round", "ticks/s");
    println!("{:->8}-+-{:->9}-+-{:->8}-+-{:->10}", "", "", "", "");
    let started = Instant::now();
    let mut last = Instant::now();
    let seat = Caller::Seat { session_id: id.clone(), seat: "a".into() };
    for done in 1..=ticks {
        host.advance_clock(&Caller::Operator, 50).await.map_err(|e| e.message)?;
        // A seat acts now and then, so the log holds intents too.
        if done % 10 == 0 {
            let observed = host.observe(&seat, &id).await.map_err(|e| e.message)?;
            act_on(&host, &seat, &id, &observed.body).await?;
        }
        if done % 10_000 == 0 || done == ticks {
            let observed = json(&host.observe(&seat, &id).await.map_err(|e| e.message)?.body);
            let tick = at(&observed, &["tick", "round"]).cloned().unwrap_or(Value::Null);
            let rate = 10_000.0 / last.elapsed().as_secs_f64();
            last = Instant::now();
            println!(
                "{done:>8} | {:>9.1} | {:>8} | {rate:>10.0}",
                rss_mib(None).unwrap_or(f64::NAN),
                gaos_json::canonical_json(&tick)
            );
        }
    }
    println!("{ticks} ticks in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Submit `{"n":1}` at the window an observation names. A refusal is
/// expected (a tick may close the window first); a host that cannot store
/// the act is not.
async fn act_on(host: &Host, seat: &Caller, id: &str, observation: &str) -> Result<(), String> {
    let envelope = json(observation);
    let tick_id = at(&envelope, &["binding", "tickId"]).and_then(Value::as_str);
    let revision = at(&envelope, &["binding", "revision"]).and_then(Value::as_u64);
    let (Some(tick_id), Some(revision)) = (tick_id, revision) else { return Ok(()) };
    let Caller::Seat { seat: name, .. } = seat else { return Ok(()) };
    let body = format!(
        r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"{id}","tickId":"{tick_id}","revision":{revision},
            "participantId":"{name}","submissionId":"{name}:{revision}","command":{{"n":1}}}}"#
    );
    match host.act(seat, id, Presented::default(), ActRequest::from_value(json(&body))).await {
        Err(refused) if refused.status.is_server_error() => Err(refused.message),
        _ => Ok(()),
    }
}

/// A session to probe after the restart: its id and seat `a`'s token.
struct Probe {
    session: String,
    token: String,
}

async fn build_database(data: &Path, events: u64, sessions: u64, checkpoint_every: u64) -> Result<Probe, String> {
    let probe_file = data.join("long-bench-probe");
    if let Ok(text) = std::fs::read_to_string(&probe_file)
        && let Some((session, token)) = text.trim().split_once(' ')
    {
        println!("reusing the database in {}", data.display());
        return Ok(Probe { session: session.into(), token: token.into() });
    }
    let host = gaos_host::handle::open_local_host(data, options(checkpoint_every)).await.map_err(|e| e.message)?;
    let started = Instant::now();
    let mut ids = Vec::new();
    let mut token = String::new();
    for _ in 0..sessions {
        let created = host
            .create(
                &Caller::Operator,
                create_request(r#"{"game":"conformance/counter","level":{"rounds":1000000000}}"#)?,
            )
            .await
            .map_err(|e| e.message)?;
        let answer = json(&created.body);
        let id = at(&answer, &["sessionId"]).and_then(Value::as_str).ok_or("no sessionId")?.to_owned();
        if token.is_empty() {
            token = at(&answer, &["extensions", CREDENTIALS, "seats", "a"])
                .and_then(Value::as_str)
                .ok_or("no seat token")?
                .to_owned();
        }
        ids.push(id);
    }
    // Four stored events per counter round (measured: 1,250 rounds of 200
    // sessions store 1,000,000).
    let rounds = events.div_ceil(4 * sessions);
    let mut tasks = tokio::task::JoinSet::new();
    for id in ids.clone() {
        let host = host.clone();
        tasks.spawn(async move {
            for revision in 0..rounds {
                for name in ["a", "b"] {
                    let caller = Caller::Seat { session_id: id.clone(), seat: name.into() };
                    let body = format!(
                        r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"{id}","tickId":"{id}:{revision}",
                            "revision":{revision},"participantId":"{name}","submissionId":"{name}:{revision}","command":{{"n":1}}}}"#
                    );
                    let request = ActRequest::from_value(json(&body));
                    host.act(&caller, &id, Presented::default(), request).await.map_err(|e| e.message)?;
                }
            }
            Ok::<_, String>(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    println!(
        "built {} sessions x {rounds} rounds (~{} events) in {:.1} s",
        sessions,
        4 * rounds * sessions,
        started.elapsed().as_secs_f64()
    );
    let probe = Probe { session: ids[0].clone(), token };
    std::fs::write(&probe_file, format!("{} {}", probe.session, probe.token)).map_err(|e| e.to_string())?;
    Ok(probe)
}

/// One HTTP/1.1 GET; the status code.
fn get(address: &str, path: &str, token: Option<&str>) -> Result<u16, String> {
    let mut stream = TcpStream::connect(address).map_err(|e| e.to_string())?;
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Connection: close\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut text = String::new();
    stream.read_to_string(&mut text).map_err(|e| e.to_string())?;
    text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| format!("no HTTP status in {text:?}"))
}

fn restart_bench(data: &Path, probe: &Probe, checkpoint_every: u64) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut child = Process::new(exe)
        .args(["serve", "--listen", "127.0.0.1:0", "--checkpoint-every", &checkpoint_every.to_string(), "--data"])
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start gaos serve: {e}"))?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let address = loop {
        let line = lines.next().ok_or("gaos serve ended before listening")?.map_err(|e| e.to_string())?;
        if let Some(url) = line.strip_prefix("gaos serve: listening on http://") {
            break url.to_owned();
        }
    };
    let listening = started.elapsed();
    let healthz = loop {
        if get(&address, "/healthz", None) == Ok(200) {
            break started.elapsed();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let before_tick = Instant::now();
    let status = get(&address, &format!("/v1/sessions/{}/tick", probe.session), Some(&probe.token))?;
    let first_tick = before_tick.elapsed();
    let pass = loop {
        let line = lines.next().ok_or("gaos serve ended")?.map_err(|e| e.to_string())?;
        if line.starts_with("gaos serve: rehydrated") {
            break (started.elapsed(), line);
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let size = std::fs::metadata(data.join("gaos.sqlite3")).map(|m| m.len() as f64 / 1048576.0).unwrap_or(0.0);
    println!("restart of gaos serve over {} ({size:.0} MiB), checkpoint every {checkpoint_every}", data.display());
    println!("{:<40} | {:>10}", "step (from process start)", "ms");
    println!("{:-<40}-+-{:->10}", "", "");
    println!("{:<40} | {:>10.1}", "port open (listening line)", listening.as_secs_f64() * 1e3);
    println!("{:<40} | {:>10.1}", "/healthz answered 200", healthz.as_secs_f64() * 1e3);
    println!("{:<40} | {:>10.1}", format!("first GET /tick of a session ({status})"), first_tick.as_secs_f64() * 1e3);
    println!("{:<40} | {:>10.1}", "background restart pass done", pass.0.as_secs_f64() * 1e3);
    println!("{}", pass.1);
    Ok(())
}
