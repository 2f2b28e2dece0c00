//! `gaos loadgen`: drive many `conformance/counter` sessions on a running
//! host and report acknowledged durable actions per second and ack latency.
//!
//! Design: the operator token creates N sessions (a very long level, so none
//! ends during the run). One tokio task per seat then submits `{"n": 1}` at
//! its current window through a [`SessionClient`] with that seat's token;
//! all clients share one `reqwest` connection pool. A window resolves when
//! its last seat submits: that seat's 200 answer carries the new cursor,
//! which it publishes on the session's `watch` channel; the seats that got
//! 202 (pending) wait on that channel instead of polling `GET /tick`, so the
//! host serves only actions. `GET /tick` is used only to recover after an
//! error or a missed publication.
//!
//! An acknowledged action is a 2xx answer to `POST .../actions` that
//! arrived inside the measured window (after `--warmup`, which absorbs
//! opening hundreds of connections, and before the deadline); its latency
//! runs from sending the request to having the checked envelope.
//!
//! Two load shapes:
//! - closed loop (default): every seat submits again as soon as its window
//!   allows, so the host runs at saturation and latency is what queueing at
//!   full load costs (Little's law: in-flight requests / throughput);
//! - open loop (`--rate R`): the seats together offer R actions/s on a fixed
//!   schedule (each seat one action every `sessions × seats / R` seconds,
//!   sessions spread evenly over the interval). Latency is then also
//!   reported from each action's *scheduled* time, so a host that falls
//!   behind is charged for the backlog it causes (no coordinated omission).

mod audit;
mod histogram;
mod host_cpu;
mod report;

use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gaos_client::{ClientError, Cursor, SessionClient, TickResult};
use gaos_json::{Map, Value};
use gaos_kernel::CommandSubmission;

use histogram::Histogram;
use report::{HostMetrics, Report};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// Sessions created concurrently during setup.
const CREATE_CONCURRENCY: usize = 16;
/// How long a pending seat waits for another seat's answer before it asks
/// the host for the cursor itself.
const PENDING_WAIT: Duration = Duration::from_secs(1);
/// A move acknowledged this long after it was first sent counts as an
/// outage of its session (`--audit`): far above the p99 of a loaded host.
const OUTAGE_AT_LEAST: Duration = Duration::from_secs(2);
/// Pause after an error that a fresh cursor did not fix.
const ERROR_PAUSE: Duration = Duration::from_millis(50);

/// Arguments of `gaos loadgen`.
#[derive(clap::Args, Debug, Clone)]
pub struct LoadgenArgs {
    /// Base URL of a running host, e.g. http://127.0.0.1:8899, or several
    /// hosts of a cluster separated by commas: sessions are spread over
    /// them, and a submission that gets no answer (or 503) is resent to the
    /// next host, with the same submission id. The operator token comes
    /// from the GAOS_OPERATOR_TOKEN environment variable.
    #[arg(long, value_delimiter = ',', required = true, value_name = "URL[,URL…]")]
    host: Vec<String>,
    /// Concurrent conformance/counter sessions.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    sessions: u32,
    /// Seats per session (named a, b, c, ...); a window resolves when all have acted.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=26))]
    seats: u32,
    /// Measured run time in seconds (after the sessions are created and the warmup).
    #[arg(long, default_value_t = 20.0)]
    duration: f64,
    /// Seconds of load before measuring starts (connections open, caches warm).
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Rounds of each counter session: large, so no session ends during the run.
    #[arg(long, default_value_t = 1_000_000)]
    rounds: u64,
    /// Worker threads of the load generator's runtime (it shares the
    /// machine with the host, so keep it small).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    threads: u32,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Offer this many actions per second in total on a fixed schedule
    /// (open loop) instead of submitting as fast as answers come back.
    #[arg(long)]
    rate: Option<f64>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// The host processes (Linux /proc): their CPU time over the measured
    /// window is reported per acknowledged action, and their RSS sampled
    /// every 5 s and printed after the run. Several pids separated by commas.
    #[arg(long, value_name = "PID[,PID…]", value_delimiter = ',')]
    host_pid: Vec<u32>,
    /// After the run, check every session's transcript: each acknowledged
    /// submission in it exactly once (none lost, none doubled), and report
    /// how long sessions were unavailable (a failover's cost: per session,
    /// its longest wait from a move's first send to its acknowledgement,
    /// resends included, when 2 s or more). Exits 1 when a submission was
    /// lost or doubled.
    #[arg(long)]
    audit: bool,
}

/// Run `gaos loadgen`.
pub fn run(args: LoadgenArgs) -> ExitCode {
    let token = match std::env::var("GAOS_OPERATOR_TOKEN") {
        Ok(token) if !token.trim().is_empty() => token.trim().to_owned(),
        _ => {
            eprintln!(
                "gaos loadgen: set GAOS_OPERATOR_TOKEN to the host's operator token, e.g. \
                 GAOS_OPERATOR_TOKEN=$(cat DATA/operator-token) gaos loadgen --host ..."
            );
            return ExitCode::from(2);
        }
    };
    if !(args.duration.is_finite() && args.duration > 0.0 && args.duration <= 86_400.0) {
        eprintln!("gaos loadgen: --duration must be a number of seconds in (0, 86400]");
        return ExitCode::from(2);
    }
    if !(args.warmup.is_finite() && (0.0..=3_600.0).contains(&args.warmup)) {
        eprintln!("gaos loadgen: --warmup must be a number of seconds in [0, 3600]");
        return ExitCode::from(2);
    }
    if let Some(rate) = args.rate
        && !(rate.is_finite() && rate > 0.0 && rate <= 10_000_000.0)
    {
        eprintln!("gaos loadgen: --rate must be a number of actions per second in (0, 10000000]");
        return ExitCode::from(2);
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 3_600.0) {
        eprintln!("gaos loadgen: --timeout must be a number of seconds in (0, 3600]");
        return ExitCode::from(2);
    }
    let runtime =
        match tokio::runtime::Builder::new_multi_thread().worker_threads(args.threads as usize).enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => {
                eprintln!("gaos loadgen: cannot start the async runtime: {e}");
                return ExitCode::from(2);
            }
        };
    let samplers: Vec<_> = args.host_pid.iter().map(|pid| crate::long_bench::RssSampler::start(*pid)).collect();
    let outcome = runtime.block_on(load(&args, &token));
    // With --json, stdout holds the one JSON object: the RSS tables go to stderr.
    for sampler in samplers {
        if args.json {
            eprint!("{}", sampler.finish());
        } else {
            print!("{}", sampler.finish());
        }
    }
    match outcome {
        Ok(report) => {
            if args.json {
                println!("{}", gaos_json::canonical_json(&report.to_json()));
            } else {
                print!("{}", report.table());
            }
            if report.audit.as_ref().is_some_and(|a| a.lost > 0 || a.doubled > 0) {
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gaos loadgen: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One session under load.
struct LoadSession {
    /// The index of the host it was created at.
    host: usize,
    id: String,
    /// (seat, token).
    seats: Vec<(String, String)>,
    start: Cursor,
}

fn seat_names(count: u32) -> Vec<String> {
    (0..count).map(|i| char::from(b'a' + i as u8).to_string()).collect()
}

fn create_request(seats: &[String], rounds: u64) -> Value {
    let mut level = Map::new();
    level.insert("rounds".into(), rounds.into());
    let mut request = Map::new();
    request.insert("game".into(), "conformance/counter".into());
    request.insert("level".into(), Value::Object(level));
    request.insert("seats".into(), Value::Array(seats.iter().map(Value::from).collect()));
    Value::Object(request)
}

async fn load(args: &LoadgenArgs, token: &str) -> Result<Report, String> {
    let pool = args.sessions as usize * args.seats as usize + CREATE_CONCURRENCY;
    let http = gaos_client::http_client_builder()
        .pool_max_idle_per_host(pool)
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let timeout = Duration::from_secs_f64(args.timeout);
    // One operator per host; session i is created at host i mod n.
    let operators: Vec<SessionClient> = args
        .host
        .iter()
        .map(|host| {
            SessionClient::builder(host.trim())
                .token(token)
                .timeout(timeout)
                .http_client(http.clone())
                .build()
                .map_err(|e| format!("--host {host}: {e}"))
        })
        .collect::<Result<_, _>>()?;
    let seats = seat_names(args.seats);
    let request = Arc::new(create_request(&seats, args.rounds));

    let setup_started = Instant::now();
    let sessions = create_sessions(&operators, &request, &seats, args.sessions as usize).await?;
    let setup = setup_started.elapsed();

    let duration = Duration::from_secs_f64(args.duration);
    let measure_from = Instant::now() + Duration::from_secs_f64(args.warmup);
    let deadline = measure_from + duration;
    // Open loop: each seat's actions are due every `interval`; sessions
    // start at evenly spread phases so the offered load is smooth.
    let interval = args.rate.map(|rate| Duration::from_secs_f64(sessions.len() as f64 * args.seats as f64 / rate));
    let schedule_start = Instant::now();
    let session_count = sessions.len().max(1);
    let mut ids = Vec::with_capacity(sessions.len());
    let mut tasks = JoinSet::new();
    for (index, session) in sessions.into_iter().enumerate() {
        let schedule = interval.map(|interval| Schedule {
            next_due: schedule_start + interval.mul_f64(index as f64 / session_count as f64),
            interval,
        });
        let (cursor_tx, cursor_rx) = watch::channel(session.start.clone());
        let cursor_tx = Arc::new(cursor_tx);
        let id: Arc<str> = session.id.into();
        ids.push(Arc::clone(&id));
        for (seat, seat_token) in session.seats {
            // The session's own host first, then the others in turn.
            let clients = (0..args.host.len())
                .map(|k| {
                    SessionClient::builder(args.host[(session.host + k) % args.host.len()].trim())
                        .token(&seat_token)
                        .participant_id(&seat)
                        .timeout(timeout)
                        .http_client(http.clone())
                        .build()
                        .map_err(|e| e.to_string())
                })
                .collect::<Result<Vec<_>, _>>()?;
            let driver = SeatDriver {
                clients,
                current: 0,
                session_id: Arc::clone(&id),
                seat,
                cursor: session.start.clone(),
                published: Arc::clone(&cursor_tx),
                updates: cursor_rx.clone(),
                measure_from,
                deadline,
                schedule,
                first_sent: None,
                stats: SeatStats::default(),
            };
            tasks.spawn(driver.run());
        }
    }
    tokio::time::sleep_until(measure_from.into()).await;
    let hosts_before = HostMetrics::fetch_all(&http, &args.host).await;
    let cpu_before = host_cpu::total(&args.host_pid);
    let mut total = SeatStats::default();
    while let Some(joined) = tasks.join_next().await {
        let stats = joined.map_err(|e| format!("a seat task failed: {e}"))?;
        total.merge(stats);
    }
    let cpu_used = host_cpu::total(&args.host_pid) - cpu_before;
    let hosts_after = HostMetrics::fetch_all(&http, &args.host).await;
    let audit = if args.audit {
        let transcripts =
            Transcripts { http: http.clone(), hosts: args.host.clone(), token: token.to_owned(), timeout };
        Some(audit::audit(&total.acked, &total.outages, |session| transcripts.fetch(session)).await)
    } else {
        None
    };
    Ok(Report {
        host: args.host.join(","),
        sessions: args.sessions as usize,
        seats: args.seats as usize,
        threads: args.threads as usize,
        setup,
        warmup: Duration::from_secs_f64(args.warmup),
        measured: duration,
        rate: args.rate,
        stats: total,
        host_metrics: hosts_before.zip(hosts_after).map(|(before, after)| after.since(&before)),
        host_cpu_seconds: (!args.host_pid.is_empty()).then_some(cpu_used),
        audit,
    })
}

/// Reads session transcripts for the audit, from whichever host answers.
struct Transcripts {
    http: gaos_client::reqwest::Client,
    hosts: Vec<String>,
    token: String,
    timeout: Duration,
}

impl Transcripts {
    async fn fetch(&self, session: Arc<str>) -> Result<String, String> {
        let mut last = String::from("no host");
        for host in &self.hosts {
            let url = format!("{}/v1/sessions/{}/transcript", host.trim().trim_end_matches('/'), session);
            let sent = self.http.get(&url).bearer_auth(&self.token).timeout(self.timeout * 4).send().await;
            match sent {
                Ok(response) if response.status().is_success() => {
                    return response.text().await.map_err(|e| format!("GET {url}: {e}"));
                }
                Ok(response) => last = format!("GET {url}: HTTP {}", response.status()),
                Err(e) => last = format!("GET {url}: {e}"),
            }
        }
        Err(last)
    }
}

async fn create_sessions(
    operators: &[SessionClient],
    request: &Arc<Value>,
    seats: &[String],
    count: usize,
) -> Result<Vec<LoadSession>, String> {
    let gate = Arc::new(Semaphore::new(CREATE_CONCURRENCY));
    let mut creating = JoinSet::new();
    for index in 0..count {
        let host = index % operators.len();
        let operator = operators[host].clone();
        let request = Arc::clone(request);
        let gate = Arc::clone(&gate);
        creating.spawn(async move {
            let _permit = gate.acquire_owned().await.map_err(|e| e.to_string())?;
            let created =
                operator.create_session(&request).await.map_err(|e| format!("creating a session failed: {e}"))?;
            Ok::<_, String>((host, created))
        });
    }
    let mut sessions = Vec::with_capacity(count);
    while let Some(joined) = creating.join_next().await {
        let (host, created) = joined.map_err(|e| format!("a create task failed: {e}"))??;
        let credentials = created.credentials.ok_or_else(|| {
            format!("the host did not hand out seat tokens for {} (gaos.host.credentials)", created.session_id)
        })?;
        let mut seat_tokens = Vec::with_capacity(seats.len());
        for seat in seats {
            let token = credentials
                .seat(seat)
                .ok_or_else(|| format!("the host handed out no token for seat {seat} of {}", created.session_id))?;
            seat_tokens.push((seat.clone(), token.to_owned()));
        }
        let start = Cursor { tick_id: created.envelope.tick_id.clone(), revision: created.envelope.revision };
        sessions.push(LoadSession { id: created.session_id, host, seats: seat_tokens, start });
    }
    Ok(sessions)
}

/// What one seat measured.
#[derive(Default)]
struct SeatStats {
    acknowledged: u64,
    latency: Histogram,
    /// Open loop only: from each action's scheduled time to its answer.
    scheduled_latency: Histogram,
    errors: BTreeMap<String, u64>,
    /// `GET /tick` recoveries (after errors or a missed publication).
    resyncs: u64,
    /// Every acknowledged `(seat, submission id)`, by session (the audit).
    acked: HashMap<Arc<str>, Vec<(String, String)>>,
    /// Per session: the longest time one of its seats went from a failed
    /// try to its next acknowledged action.
    outages: HashMap<Arc<str>, Duration>,
    /// Submissions resent to another host after no answer.
    failovers: u64,
}

impl SeatStats {
    fn merge(&mut self, other: SeatStats) {
        self.acknowledged += other.acknowledged;
        self.latency.merge(&other.latency);
        self.scheduled_latency.merge(&other.scheduled_latency);
        for (code, n) in other.errors {
            *self.errors.entry(code).or_default() += n;
        }
        self.resyncs += other.resyncs;
        self.failovers += other.failovers;
        for (session, acks) in other.acked {
            self.acked.entry(session).or_default().extend(acks);
        }
        for (session, outage) in other.outages {
            let longest = self.outages.entry(session).or_default();
            *longest = (*longest).max(outage);
        }
    }
}

/// One seat's loop: submit at the current window, then learn the next one.
struct SeatDriver {
    /// A client per host: the session's own first.
    clients: Vec<SessionClient>,
    /// The host this seat sends to now.
    current: usize,
    session_id: Arc<str>,
    seat: String,
    cursor: Cursor,
    /// Where this seat publishes a cursor it learned first.
    published: Arc<watch::Sender<Cursor>>,
    /// Cursors other seats of the session learned.
    updates: watch::Receiver<Cursor>,
    /// Answers count from here (the warmup ends) ...
    measure_from: Instant,
    /// ... to here (the run ends).
    deadline: Instant,
    /// Open loop: when this seat's next action is due.
    schedule: Option<Schedule>,
    /// When the submission now in flight was first sent (resends to other
    /// hosts keep it): its wait, if long, is an outage of the session.
    first_sent: Option<Instant>,
    stats: SeatStats,
}

/// A seat's open-loop schedule.
#[derive(Clone, Copy)]
struct Schedule {
    next_due: Instant,
    interval: Duration,
}

impl SeatDriver {
    async fn run(mut self) -> SeatStats {
        let mut command = Map::new();
        command.insert("n".into(), 1u32.into());
        let command = Value::Object(command);
        while Instant::now() < self.deadline {
            // Open loop: wait for the due time; a seat that is behind (its
            // window closed late) sends at once and keeps its schedule.
            let due = self.schedule.as_ref().map(|s| s.next_due);
            if let Some(due) = due {
                if due >= self.deadline {
                    break;
                }
                tokio::time::sleep_until(due.into()).await;
            }
            // The id names the seat and the window, so a resend of the same
            // move (to another host, after no answer) is the same submission.
            let submission_id = format!("{}.{}", self.seat, self.cursor.revision);
            let mut submission = CommandSubmission::new(
                &self.session_id,
                self.cursor.revision,
                &self.seat,
                &submission_id,
                command.clone(),
            );
            submission.tick_id = self.cursor.tick_id.clone();
            let sent = Instant::now();
            let first_sent = *self.first_sent.get_or_insert(sent);
            let answer = self.clients[self.current].send_submission(&submission).await;
            let answered = Instant::now();
            match answer {
                Ok(answer) => {
                    let scheduled = due.unwrap_or(sent);
                    if scheduled >= self.measure_from && answered <= self.deadline {
                        self.stats.acknowledged += 1;
                        self.stats.latency.record(answered - sent);
                        if due.is_some() {
                            self.stats.scheduled_latency.record(answered - scheduled);
                        }
                    }
                    self.stats
                        .acked
                        .entry(Arc::clone(&self.session_id))
                        .or_default()
                        .push((self.seat.clone(), submission_id));
                    // A move that waited long for its acknowledgement, over
                    // errors and resends (a killed host) or in one slow
                    // answer (a stopped owner, until another host claimed
                    // the session), is an outage of its session.
                    self.first_sent = None;
                    let waited = answered - first_sent;
                    if waited >= OUTAGE_AT_LEAST {
                        let outage = self.stats.outages.entry(Arc::clone(&self.session_id)).or_default();
                        *outage = (*outage).max(waited);
                    }
                    if let Some(schedule) = self.schedule.as_mut() {
                        schedule.next_due += schedule.interval;
                    }
                    if answer.is_pending() {
                        self.await_window_after(answer.envelope.revision).await;
                    } else {
                        self.adopt(answer.cursor());
                    }
                }
                Err(error) => {
                    if sent >= self.measure_from {
                        *self.stats.errors.entry(error.label()).or_default() += 1;
                    }
                    if self.clients.len() > 1 && is_unanswered(&error) {
                        // Resend the same submission to the next host.
                        self.current = (self.current + 1) % self.clients.len();
                        self.stats.failovers += 1;
                        tokio::time::sleep(ERROR_PAUSE).await;
                        continue;
                    }
                    self.recover(&error).await;
                }
            }
        }
        self.stats
    }

    /// Take `cursor` and tell the other seats, unless they already know a later one.
    fn adopt(&mut self, cursor: Cursor) {
        self.published.send_if_modified(|known| {
            if cursor.revision > known.revision {
                *known = cursor.clone();
                true
            } else {
                false
            }
        });
        if cursor.revision > self.cursor.revision {
            self.cursor = cursor;
        }
    }

    /// This seat's intent is in the window at `revision`: wait until another
    /// seat's answer closes it (or ask the host after [`PENDING_WAIT`]).
    async fn await_window_after(&mut self, revision: u64) {
        let wait_until = (Instant::now() + PENDING_WAIT).min(self.deadline);
        let waited = tokio::time::timeout_at(wait_until.into(), self.updates.wait_for(|c| c.revision > revision))
            .await
            .ok()
            .and_then(Result::ok)
            .map(|cursor| cursor.clone());
        match waited {
            Some(cursor) => {
                if cursor.revision > self.cursor.revision {
                    self.cursor = cursor;
                }
            }
            None if Instant::now() >= self.deadline => {}
            None => {
                let _ = self.resync().await;
            }
        }
    }

    /// Ask the host for the current cursor. If this seat already acted in
    /// that window, wait for it to close instead of submitting twice.
    async fn resync(&mut self) -> Result<(), ClientError> {
        self.stats.resyncs += 1;
        let observed: TickResult = self.clients[self.current].observe(&self.session_id).await?;
        let cursor = observed.cursor();
        let acted = observed.envelope.submitted_participants.as_ref().is_some_and(|s| s.contains(&self.seat));
        self.adopt(cursor.clone());
        self.cursor = cursor;
        if acted && Instant::now() < self.deadline {
            let revision = self.cursor.revision;
            let wait_until = (Instant::now() + PENDING_WAIT).min(self.deadline);
            let waited = tokio::time::timeout_at(wait_until.into(), self.updates.wait_for(|c| c.revision > revision))
                .await
                .ok()
                .and_then(Result::ok)
                .map(|cursor| cursor.clone());
            if let Some(cursor) = waited {
                self.cursor = cursor;
            }
        }
        Ok(())
    }

    async fn recover(&mut self, error: &ClientError) {
        let refreshed = self.resync().await;
        if refreshed.as_ref().is_err_and(is_unanswered) && self.clients.len() > 1 {
            self.current = (self.current + 1) % self.clients.len();
        }
        if let Err(again) = &refreshed {
            *self.stats.errors.entry(format!("resync:{}", again.label())).or_default() += 1;
        }
        // A transport failure or a repeated error: do not spin.
        if refreshed.is_err() || error.is_transport_failure() {
            tokio::time::sleep(ERROR_PAUSE).await;
        }
    }
}

/// No answer, or a host that cannot serve the session now (it is moving
/// between hosts): the same submission may go to another host.
fn is_unanswered(error: &ClientError) -> bool {
    error.is_transport_failure() || matches!(error.status(), Some(502..=504))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_are_named_by_letter() {
        assert_eq!(seat_names(3), ["a", "b", "c"]);
    }
}
