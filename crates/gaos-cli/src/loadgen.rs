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

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gaos_client::{ClientError, Cursor, SessionClient, SubmitOptions, TickResult};
use gaos_json::{Map, Value};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// Sessions created concurrently during setup.
const CREATE_CONCURRENCY: usize = 16;
/// How long a pending seat waits for another seat's answer before it asks
/// the host for the cursor itself.
const PENDING_WAIT: Duration = Duration::from_secs(1);
/// Pause after an error that a fresh cursor did not fix.
const ERROR_PAUSE: Duration = Duration::from_millis(50);

/// Arguments of `gaos loadgen`.
#[derive(clap::Args, Debug, Clone)]
pub struct LoadgenArgs {
    /// Base URL of a running host, e.g. http://127.0.0.1:8899. The operator
    /// token comes from the GAOS_OPERATOR_TOKEN environment variable.
    #[arg(long)]
    host: String,
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
    /// Sample this process's RSS (the host's pid, Linux /proc) every 5 s
    /// from the start and print the samples after the run.
    #[arg(long, value_name = "PID")]
    host_pid: Option<u32>,
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
    let sampler = args.host_pid.map(crate::long_bench::RssSampler::start);
    let outcome = runtime.block_on(load(&args, &token));
    if let Some(sampler) = sampler {
        print!("{}", sampler.finish());
    }
    match outcome {
        Ok(report) => {
            if args.json {
                println!("{}", gaos_json::canonical_json(&report.to_json()));
            } else {
                print!("{}", report.table());
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
    let operator = SessionClient::builder(&args.host)
        .token(token)
        .timeout(timeout)
        .http_client(http.clone())
        .build()
        .map_err(|e| e.to_string())?;
    let seats = seat_names(args.seats);
    let request = Arc::new(create_request(&seats, args.rounds));

    let setup_started = Instant::now();
    let sessions = create_sessions(&operator, &request, &seats, args.sessions as usize).await?;
    let setup = setup_started.elapsed();

    let duration = Duration::from_secs_f64(args.duration);
    let measure_from = Instant::now() + Duration::from_secs_f64(args.warmup);
    let deadline = measure_from + duration;
    // Open loop: each seat's actions are due every `interval`; sessions
    // start at evenly spread phases so the offered load is smooth.
    let interval = args.rate.map(|rate| Duration::from_secs_f64(sessions.len() as f64 * args.seats as f64 / rate));
    let schedule_start = Instant::now();
    let session_count = sessions.len().max(1);
    let mut tasks = JoinSet::new();
    for (index, session) in sessions.into_iter().enumerate() {
        let schedule = interval.map(|interval| Schedule {
            next_due: schedule_start + interval.mul_f64(index as f64 / session_count as f64),
            interval,
        });
        let (cursor_tx, cursor_rx) = watch::channel(session.start.clone());
        let cursor_tx = Arc::new(cursor_tx);
        let id: Arc<str> = session.id.into();
        for (seat, seat_token) in session.seats {
            let client = SessionClient::builder(&args.host)
                .token(seat_token)
                .participant_id(&seat)
                .timeout(timeout)
                .http_client(http.clone())
                .build()
                .map_err(|e| e.to_string())?;
            let driver = SeatDriver {
                client,
                session_id: Arc::clone(&id),
                seat,
                cursor: session.start.clone(),
                published: Arc::clone(&cursor_tx),
                updates: cursor_rx.clone(),
                measure_from,
                deadline,
                schedule,
                stats: SeatStats::default(),
            };
            tasks.spawn(driver.run());
        }
    }
    tokio::time::sleep_until(measure_from.into()).await;
    let host_before = HostMetrics::fetch(&http, operator.base_url()).await;
    let mut total = SeatStats::default();
    while let Some(joined) = tasks.join_next().await {
        let stats = joined.map_err(|e| format!("a seat task failed: {e}"))?;
        total.merge(stats);
    }
    let host_after = HostMetrics::fetch(&http, operator.base_url()).await;
    Ok(Report {
        host: operator.base_url().to_owned(),
        sessions: args.sessions as usize,
        seats: args.seats as usize,
        threads: args.threads as usize,
        setup,
        warmup: Duration::from_secs_f64(args.warmup),
        measured: duration,
        rate: args.rate,
        stats: total,
        host_metrics: host_before.zip(host_after).map(|(before, after)| after.since(&before)),
    })
}

async fn create_sessions(
    operator: &SessionClient,
    request: &Arc<Value>,
    seats: &[String],
    count: usize,
) -> Result<Vec<LoadSession>, String> {
    let gate = Arc::new(Semaphore::new(CREATE_CONCURRENCY));
    let mut creating = JoinSet::new();
    for _ in 0..count {
        let operator = operator.clone();
        let request = Arc::clone(request);
        let gate = Arc::clone(&gate);
        creating.spawn(async move {
            let _permit = gate.acquire_owned().await.map_err(|e| e.to_string())?;
            operator.create_session(&request).await.map_err(|e| format!("creating a session failed: {e}"))
        });
    }
    let mut sessions = Vec::with_capacity(count);
    while let Some(joined) = creating.join_next().await {
        let created = joined.map_err(|e| format!("a create task failed: {e}"))??;
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
        sessions.push(LoadSession { id: created.session_id, seats: seat_tokens, start });
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
    }
}

/// One seat's loop: submit at the current window, then learn the next one.
struct SeatDriver {
    client: SessionClient,
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
            let options = SubmitOptions { submission_id: None, cursor: Some(self.cursor.clone()) };
            let sent = Instant::now();
            let answer = self.client.submit_command(&self.session_id, &self.seat, command.clone(), options).await;
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
        let observed: TickResult = self.client.observe(&self.session_id).await?;
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
        if let Err(again) = &refreshed {
            *self.stats.errors.entry(format!("resync:{}", again.label())).or_default() += 1;
        }
        // A transport failure or a repeated error: do not spin.
        if refreshed.is_err() || error.is_transport_failure() {
            tokio::time::sleep(ERROR_PAUSE).await;
        }
    }
}

/// Latency histogram in microseconds with 64 linear sub-buckets per power
/// of two above 128 µs (exact below): at most 1.6 % relative error, 2,304
/// counters, merged at the end (no shared state while measuring).
#[derive(Clone)]
struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max_us: u64,
}

const LINEAR: u64 = 128;
const SUB_BUCKETS: u64 = 64;
const BUCKETS: usize = (LINEAR + 34 * SUB_BUCKETS) as usize;

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; BUCKETS], total: 0, max_us: 0 }
    }
}

impl Histogram {
    fn index(us: u64) -> usize {
        if us < LINEAR {
            return us as usize;
        }
        let exp = 63 - u64::from(us.leading_zeros()); // >= 7
        let shift = exp - 6;
        let mantissa = us >> shift; // in [64, 128)
        let index = LINEAR + (exp - 7) * SUB_BUCKETS + (mantissa - SUB_BUCKETS);
        (index as usize).min(BUCKETS - 1)
    }

    /// Upper bound (µs) of bucket `index`.
    fn upper(index: usize) -> u64 {
        let index = index as u64;
        if index < LINEAR {
            return index;
        }
        let exp = (index - LINEAR) / SUB_BUCKETS + 7;
        let mantissa = (index - LINEAR) % SUB_BUCKETS + SUB_BUCKETS;
        let shift = exp - 6;
        ((mantissa + 1) << shift) - 1
    }

    fn record(&mut self, latency: Duration) {
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.counts[Self::index(us)] += 1;
        self.total += 1;
        self.max_us = self.max_us.max(us);
    }

    fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.total += other.total;
        self.max_us = self.max_us.max(other.max_us);
    }

    /// The `q` quantile in microseconds (bucket upper bound, capped at the max).
    fn quantile_us(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Self::upper(index).min(self.max_us);
            }
        }
        self.max_us
    }
}

/// Host-side counters from `GET /metrics` (Prometheus text).
#[derive(Debug, Clone, Copy, Default)]
struct HostMetrics {
    groups: f64,
    batches: f64,
    persist_sum_s: f64,
    persist_count: f64,
    transitions: f64,
}

impl HostMetrics {
    async fn fetch(http: &gaos_client::reqwest::Client, base: &str) -> Option<HostMetrics> {
        let text = http.get(format!("{base}/metrics")).send().await.ok()?.text().await.ok()?;
        let mut metrics = HostMetrics::default();
        for line in text.lines() {
            let Some((name, value)) = line.split_once(' ') else { continue };
            let Ok(value) = value.trim().parse::<f64>() else { continue };
            match name {
                "gaos_persist_groups_total" => metrics.groups = value,
                "gaos_persist_batches_total" => metrics.batches = value,
                "gaos_persist_latency_seconds_sum" => metrics.persist_sum_s = value,
                "gaos_persist_latency_seconds_count" => metrics.persist_count = value,
                "gaos_committed_transitions_total" => metrics.transitions = value,
                _ => {}
            }
        }
        Some(metrics)
    }

    fn since(&self, before: &HostMetrics) -> HostMetrics {
        HostMetrics {
            groups: self.groups - before.groups,
            batches: self.batches - before.batches,
            persist_sum_s: self.persist_sum_s - before.persist_sum_s,
            persist_count: self.persist_count - before.persist_count,
            transitions: self.transitions - before.transitions,
        }
    }
}

struct Report {
    host: String,
    sessions: usize,
    seats: usize,
    threads: usize,
    setup: Duration,
    warmup: Duration,
    measured: Duration,
    /// Offered actions/s (open loop), if any.
    rate: Option<f64>,
    stats: SeatStats,
    host_metrics: Option<HostMetrics>,
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl Report {
    fn rate(&self) -> f64 {
        self.stats.acknowledged as f64 / self.measured.as_secs_f64()
    }

    fn table(&self) -> String {
        let s = &self.stats;
        let l = &s.latency;
        let mut out = String::new();
        let _ = writeln!(out, "gaos loadgen: conformance/counter on {}", self.host);
        let mut row = |label: &str, value: String| {
            let _ = writeln!(out, "  {label:<28} {value:>14}");
        };
        row("sessions", self.sessions.to_string());
        row("seats per session", self.seats.to_string());
        row("loadgen threads", self.threads.to_string());
        row("load", self.rate.map_or("closed loop".to_owned(), |r| format!("open, {r:.0}/s")));
        row("setup (s)", format!("{:.2}", self.setup.as_secs_f64()));
        row("warmup (s)", format!("{:.2}", self.warmup.as_secs_f64()));
        row("duration (s)", format!("{:.2}", self.measured.as_secs_f64()));
        row("acknowledged actions", s.acknowledged.to_string());
        row("actions/s", format!("{:.0}", self.rate()));
        row("ack latency p50 (ms)", format!("{:.2}", ms(l.quantile_us(0.50))));
        row("ack latency p90 (ms)", format!("{:.2}", ms(l.quantile_us(0.90))));
        row("ack latency p99 (ms)", format!("{:.2}", ms(l.quantile_us(0.99))));
        row("ack latency max (ms)", format!("{:.2}", ms(l.max_us)));
        if self.rate.is_some() {
            let d = &s.scheduled_latency;
            row("from schedule p50 (ms)", format!("{:.2}", ms(d.quantile_us(0.50))));
            row("from schedule p99 (ms)", format!("{:.2}", ms(d.quantile_us(0.99))));
            row("from schedule max (ms)", format!("{:.2}", ms(d.max_us)));
        }
        row("cursor resyncs (GET /tick)", s.resyncs.to_string());
        if let Some(h) = &self.host_metrics {
            row("host transitions", format!("{:.0}", h.transitions));
            row("host group commits", format!("{:.0}", h.groups));
            if h.groups > 0.0 {
                row("host batches per commit", format!("{:.1}", h.batches / h.groups));
            }
            if h.persist_count > 0.0 {
                row("host mean persist (ms)", format!("{:.2}", 1000.0 * h.persist_sum_s / h.persist_count));
            }
        }
        let errors: u64 = s.errors.values().sum();
        let _ = writeln!(out, "  {:<28} {:>14}", "errors", errors);
        for (code, n) in &s.errors {
            let _ = writeln!(out, "    {code:<26} {n:>14}");
        }
        out
    }

    fn to_json(&self) -> Value {
        let s = &self.stats;
        let l = &s.latency;
        let mut m = Map::new();
        m.insert("host".into(), self.host.clone().into());
        m.insert("sessions".into(), self.sessions.into());
        m.insert("seats".into(), self.seats.into());
        m.insert("threads".into(), self.threads.into());
        m.insert("durationSeconds".into(), json_number(self.measured.as_secs_f64()));
        m.insert("acknowledgedActions".into(), s.acknowledged.into());
        m.insert("actionsPerSecond".into(), json_number(self.rate()));
        m.insert("p50Ms".into(), json_number(ms(l.quantile_us(0.50))));
        m.insert("p90Ms".into(), json_number(ms(l.quantile_us(0.90))));
        m.insert("p99Ms".into(), json_number(ms(l.quantile_us(0.99))));
        m.insert("maxMs".into(), json_number(ms(l.max_us)));
        if let Some(rate) = self.rate {
            let d = &s.scheduled_latency;
            m.insert("offeredPerSecond".into(), json_number(rate));
            m.insert("fromScheduleP50Ms".into(), json_number(ms(d.quantile_us(0.50))));
            m.insert("fromScheduleP99Ms".into(), json_number(ms(d.quantile_us(0.99))));
            m.insert("fromScheduleMaxMs".into(), json_number(ms(d.max_us)));
        }
        m.insert("resyncs".into(), s.resyncs.into());
        let errors: Map = s.errors.iter().map(|(k, v)| (k.clone(), Value::from(*v))).collect();
        m.insert("errors".into(), Value::Object(errors));
        Value::Object(m)
    }
}

fn json_number(x: f64) -> Value {
    Value::number(x).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_bound_the_relative_error() {
        for us in [0u64, 1, 127, 128, 129, 1000, 4095, 4096, 65_537, 10_000_000, 1 << 39] {
            let index = Histogram::index(us);
            let upper = Histogram::upper(index);
            assert!(upper >= us, "{us} -> bucket {index} upper {upper}");
            assert!((upper - us) as f64 <= us as f64 / 60.0 + 1.0, "{us} -> {upper}");
            if index > 0 {
                assert!(Histogram::upper(index - 1) < us, "{us} is above the previous bucket");
            }
        }
    }

    #[test]
    fn quantiles_walk_the_buckets() {
        let mut h = Histogram::default();
        for us in 1..=1000u64 {
            h.record(Duration::from_micros(us));
        }
        let p50 = h.quantile_us(0.5);
        assert!((500..=508).contains(&p50), "{p50}");
        let p99 = h.quantile_us(0.99);
        assert!((990..=1000).contains(&p99), "{p99}");
        assert_eq!(h.quantile_us(1.0), 1000);
        assert_eq!(h.max_us, 1000);
    }

    #[test]
    fn seats_are_named_by_letter() {
        assert_eq!(seat_names(3), ["a", "b", "c"]);
    }
}
