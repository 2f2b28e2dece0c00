//! Prometheus text metrics: live sessions, committed transitions, persist
//! latency, open streams.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (seconds) of the persist latency histogram buckets.
const BUCKETS: [f64; 12] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 5.0];

/// Host counters; all lock-free.
#[derive(Debug, Default)]
pub struct Metrics {
    pub live_sessions: AtomicU64,
    pub committed_transitions: AtomicU64,
    pub open_streams: AtomicU64,
    pub http_requests: AtomicU64,
    /// Entries of the host's session map (live or loading).
    session_slots: AtomicU64,
    /// Sessions read from the store (record and state).
    store_session_loads: AtomicU64,
    /// Event rows read from the store (rehydrates).
    store_event_rows: AtomicU64,
    persist_buckets: [AtomicU64; BUCKETS.len()],
    persist_count: AtomicU64,
    persist_sum_micros: AtomicU64,
    groups: AtomicU64,
    grouped_batches: AtomicU64,
    /// Writes the store refused because another host owns the session now.
    fenced_writes: AtomicU64,
    /// Sessions this host took over from a host whose membership lapsed.
    claims: AtomicU64,
    /// Requests this host forwarded to the host that owns their session.
    proxy_hops: AtomicU64,
}

impl Metrics {
    pub fn observe_persist(&self, latency: Duration) {
        let secs = latency.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.persist_buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.persist_count.fetch_add(1, Ordering::Relaxed);
        self.persist_sum_micros.fetch_add(latency.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn record_group(&self, batches: usize) {
        self.groups.fetch_add(1, Ordering::Relaxed);
        self.grouped_batches.fetch_add(batches as u64, Ordering::Relaxed);
    }

    pub fn set_session_slots(&self, n: usize) {
        self.session_slots.store(n as u64, Ordering::Relaxed);
    }

    pub fn add_store_loads(&self, sessions: u64, event_rows: u64) {
        self.store_session_loads.fetch_add(sessions, Ordering::Relaxed);
        self.store_event_rows.fetch_add(event_rows, Ordering::Relaxed);
    }

    pub fn add_transitions(&self, n: u64) {
        self.committed_transitions.fetch_add(n, Ordering::Relaxed);
    }

    pub fn add_fenced_write(&self) {
        self.fenced_writes.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add_claim(&self) {
        self.claims.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add_proxy_hop(&self) {
        self.proxy_hops.fetch_add(1, Ordering::Relaxed);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let gauge = |out: &mut String, name: &str, help: &str, kind: &str, value: u64| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        };
        gauge(
            &mut out,
            "gaos_live_sessions",
            "Sessions with a live actor.",
            "gauge",
            self.live_sessions.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_session_slots",
            "Entries of the session map (live or loading sessions).",
            "gauge",
            self.session_slots.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_store_session_loads_total",
            "Sessions read from the store (record and state).",
            "counter",
            self.store_session_loads.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_store_event_rows_total",
            "Event rows read from the store to rehydrate sessions.",
            "counter",
            self.store_event_rows.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_committed_transitions_total",
            "Kernel transitions committed after their events were durable.",
            "counter",
            self.committed_transitions.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_open_streams",
            "Open observation streams.",
            "gauge",
            self.open_streams.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_http_requests_total",
            "HTTP requests served.",
            "counter",
            self.http_requests.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_persist_groups_total",
            "Group commits (one durable transaction each).",
            "counter",
            self.groups.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_persist_batches_total",
            "Write batches committed (one per transition or answer).",
            "counter",
            self.grouped_batches.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_fenced_writes_total",
            "Writes refused by the store because another host owns their session now.",
            "counter",
            self.fenced_writes.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_session_claims_total",
            "Sessions taken over from a host whose membership lapsed (cluster mode).",
            "counter",
            self.claims.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "gaos_proxy_hops_total",
            "Requests forwarded to the host that owns their session (cluster mode).",
            "counter",
            self.proxy_hops.load(Ordering::Relaxed),
        );
        let name = "gaos_persist_latency_seconds";
        let _ = writeln!(out, "# HELP {name} Time from enqueueing a write batch to its durable commit.");
        let _ = writeln!(out, "# TYPE {name} histogram");
        for (bound, bucket) in BUCKETS.iter().zip(&self.persist_buckets) {
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {}", bucket.load(Ordering::Relaxed));
        }
        let count = self.persist_count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.persist_sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
        out
    }
}
