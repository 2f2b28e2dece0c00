//! What `gaos loadgen` prints: the table, or one JSON object.

use std::fmt::Write as _;
use std::time::Duration;

use gaos_json::{Map, Value};

use super::SeatStats;
use super::audit::Audit;

/// Host-side counters from `GET /metrics` (Prometheus text).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct HostMetrics {
    groups: f64,
    batches: f64,
    persist_sum_s: f64,
    persist_count: f64,
    transitions: f64,
}

impl HostMetrics {
    /// The counters of every host, summed (`None` when a host did not answer).
    pub(super) async fn fetch_all(http: &gaos_client::reqwest::Client, hosts: &[String]) -> Option<HostMetrics> {
        let mut sum = HostMetrics::default();
        for host in hosts {
            let one = Self::fetch(http, host.trim().trim_end_matches('/')).await?;
            sum = HostMetrics {
                groups: sum.groups + one.groups,
                batches: sum.batches + one.batches,
                persist_sum_s: sum.persist_sum_s + one.persist_sum_s,
                persist_count: sum.persist_count + one.persist_count,
                transitions: sum.transitions + one.transitions,
            };
        }
        Some(sum)
    }

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

    pub(super) fn since(&self, before: &HostMetrics) -> HostMetrics {
        HostMetrics {
            groups: self.groups - before.groups,
            batches: self.batches - before.batches,
            persist_sum_s: self.persist_sum_s - before.persist_sum_s,
            persist_count: self.persist_count - before.persist_count,
            transitions: self.transitions - before.transitions,
        }
    }
}

pub(super) struct Report {
    pub host: String,
    pub sessions: usize,
    pub seats: usize,
    pub threads: usize,
    pub setup: Duration,
    pub warmup: Duration,
    pub measured: Duration,
    /// Offered actions/s (open loop), if any.
    pub rate: Option<f64>,
    pub stats: SeatStats,
    pub host_metrics: Option<HostMetrics>,
    /// CPU seconds the `--host-pid` processes used over the measured window.
    pub host_cpu_seconds: Option<f64>,
    /// The transcripts check (`--audit`).
    pub audit: Option<Audit>,
}

pub(super) fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl Report {
    pub(super) fn rate(&self) -> f64 {
        self.stats.acknowledged as f64 / self.measured.as_secs_f64()
    }

    pub(super) fn table(&self) -> String {
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
        if s.failovers > 0 {
            row("resends to another host", s.failovers.to_string());
        }
        if let Some(cpu) = self.host_cpu_seconds {
            row("host CPU (s)", format!("{cpu:.2}"));
            if s.acknowledged > 0 {
                row("host CPU per ack (µs)", format!("{:.1}", 1e6 * cpu / s.acknowledged as f64));
            }
        }
        if let Some(a) = &self.audit {
            row("audited sessions", a.sessions.to_string());
            row("acknowledged, all time", a.acknowledged.to_string());
            row("lost", a.lost.to_string());
            row("doubled", a.doubled.to_string());
            row("sessions with an outage", a.outages.len().to_string());
            row("outage p50 (ms)", format!("{:.0}", a.outage(0.50).as_secs_f64() * 1000.0));
            row("outage p99 (ms)", format!("{:.0}", a.outage(0.99).as_secs_f64() * 1000.0));
            row("outage max (ms)", format!("{:.0}", a.outage(1.0).as_secs_f64() * 1000.0));
        }
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
        if let Some(problem) = self.audit.as_ref().and_then(|a| a.first_problem.as_ref()) {
            let _ = writeln!(out, "  first problem: {problem}");
        }
        let errors: u64 = s.errors.values().sum();
        let _ = writeln!(out, "  {:<28} {:>14}", "errors", errors);
        for (code, n) in &s.errors {
            let _ = writeln!(out, "    {code:<26} {n:>14}");
        }
        out
    }

    pub(super) fn to_json(&self) -> Value {
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
        m.insert("failovers".into(), s.failovers.into());
        if let Some(cpu) = self.host_cpu_seconds {
            m.insert("hostCpuSeconds".into(), json_number(cpu));
            if s.acknowledged > 0 {
                m.insert("hostCpuMicrosPerAck".into(), json_number(1e6 * cpu / s.acknowledged as f64));
            }
        }
        if let Some(a) = &self.audit {
            let mut audit = Map::new();
            audit.insert("sessions".into(), a.sessions.into());
            audit.insert("acknowledged".into(), a.acknowledged.into());
            audit.insert("lost".into(), a.lost.into());
            audit.insert("doubled".into(), a.doubled.into());
            audit.insert("sessionsWithOutage".into(), a.outages.len().into());
            for (key, q) in [("outageP50Ms", 0.5), ("outageP99Ms", 0.99), ("outageMaxMs", 1.0)] {
                audit.insert(key.into(), json_number(a.outage(q).as_secs_f64() * 1000.0));
            }
            if let Some(problem) = &a.first_problem {
                audit.insert("firstProblem".into(), problem.clone().into());
            }
            m.insert("audit".into(), Value::Object(audit));
        }
        let errors: Map = s.errors.iter().map(|(k, v)| (k.clone(), Value::from(*v))).collect();
        m.insert("errors".into(), Value::Object(errors));
        Value::Object(m)
    }
}

fn json_number(x: f64) -> Value {
    Value::number(x).unwrap_or(Value::Null)
}
