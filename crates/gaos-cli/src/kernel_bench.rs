//! `gaos kernel-bench`: committed transitions per second of the session
//! kernel on the counter game, with the cost of rehydrating, finalizing and
//! verifying the resulting transcript, and the process's resident memory
//! per tenth of the run. `--compact-every N` compacts as it goes
//! (`kernel_bench_memory`): memory then stays flat, and the bench restores
//! from the latest checkpoint instead of rehydrating (there is no full
//! transcript to finalize).

use std::sync::Arc;
use std::time::{Duration, Instant};

use gaos_games::GameRegistry;
use gaos_json::{Map, Value};
use gaos_kernel::replay::{FinalizeOptions, VerifyOptions, finalize_replay, verify_replay};
use gaos_kernel::{Cadence, CommandSubmission, Game, GameRef, KernelError, KernelOptions, SeedPolicy, SessionKernel};

use crate::kernel_bench_memory::{Compactor, rss_kib};

/// Measurements of one run.
#[derive(Debug, Clone)]
pub struct BenchReport {
    /// RFC-010 signed ingest: every submission signed and checked.
    pub signed: bool,
    pub transitions: u64,
    pub rounds: u64,
    pub total: Duration,
    /// Transitions per second in each tenth of the run.
    pub tenths: Vec<f64>,
    pub rehydrate: Duration,
    pub finalize: Duration,
    pub verify: Option<Duration>,
    pub replay_bytes: usize,
    pub events: usize,
    /// `--compact-every`, when given.
    pub compact_every: Option<u64>,
    pub compactions: u64,
    /// Largest compacted checkpoint stored, in bytes.
    pub checkpoint_bytes: usize,
    /// Events the kernel held at the end (all of them without compaction).
    pub live_events: usize,
    /// Resident set size (KiB) at the end of each tenth; empty off Linux.
    pub rss_tenths_kib: Vec<u64>,
    /// Peak resident set size (KiB) of the process.
    pub peak_rss_kib: Option<u64>,
}

impl BenchReport {
    pub fn rate(&self) -> f64 {
        self.transitions as f64 / self.total.as_secs_f64()
    }

    /// Rate of the last tenth relative to the first.
    pub fn flatness(&self) -> f64 {
        match (self.tenths.first(), self.tenths.last()) {
            (Some(first), Some(last)) if *first > 0.0 => last / first,
            _ => 1.0,
        }
    }

    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("transitions".into(), self.transitions.into());
        map.insert("signed".into(), self.signed.into());
        map.insert("rounds".into(), self.rounds.into());
        map.insert("events".into(), self.events.into());
        map.insert("seconds".into(), Value::Number(self.total.as_secs_f64()));
        map.insert("transitionsPerSecond".into(), Value::Number(self.rate().round()));
        map.insert(
            "tenthsPerSecond".into(),
            Value::Array(self.tenths.iter().map(|r| Value::Number(r.round())).collect()),
        );
        map.insert("lastTenthOverFirst".into(), Value::Number((self.flatness() * 1000.0).round() / 1000.0));
        map.insert("rehydrateSeconds".into(), Value::Number(self.rehydrate.as_secs_f64()));
        map.insert("finalizeSeconds".into(), Value::Number(self.finalize.as_secs_f64()));
        map.insert("verifySeconds".into(), self.verify.map_or(Value::Null, |d| Value::Number(d.as_secs_f64())));
        map.insert("replayBytes".into(), self.replay_bytes.into());
        map.insert("compactEvery".into(), self.compact_every.map_or(Value::Null, Value::from));
        map.insert("compactions".into(), self.compactions.into());
        map.insert("checkpointBytes".into(), self.checkpoint_bytes.into());
        map.insert("liveEvents".into(), self.live_events.into());
        map.insert("rssTenthsKiB".into(), Value::Array(self.rss_tenths_kib.iter().map(|&k| k.into()).collect()));
        map.insert("peakRssKiB".into(), self.peak_rss_kib.map_or(Value::Null, Value::from));
        Value::Object(map)
    }

    pub fn table(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "kernel-bench: {} committed transitions ({} rounds of ingest a, ingest b, advance) on conformance/counter{}\n\n",
            self.transitions,
            self.rounds,
            if self.signed { ", signed (RFC-010: every chain link and Ed25519 signature checked)" } else { "" }
        ));
        out.push_str(&format!("{:<28} {:>14}\n", "phase", "value"));
        out.push_str(&format!("{:<28} {:>14.0}\n", "transitions/s (overall)", self.rate()));
        for (i, rate) in self.tenths.iter().enumerate() {
            out.push_str(&format!("{:<28} {:>14.0}\n", format!("transitions/s tenth {}", i + 1), rate));
        }
        out.push_str(&format!("{:<28} {:>13.1}%\n", "last tenth / first tenth", self.flatness() * 100.0));
        out.push_str(&format!("{:<28} {:>13.3}s\n", "run", self.total.as_secs_f64()));
        let compacting = self.compact_every.is_some();
        let restart = if compacting { "restore (checkpoint + tail)" } else { "rehydrate" };
        out.push_str(&format!("{:<28} {:>13.3}s\n", restart, self.rehydrate.as_secs_f64()));
        if compacting {
            out.push_str(&format!("{:<28} {:>14}\n", "finalize", "skipped"));
        } else {
            out.push_str(&format!("{:<28} {:>13.3}s\n", "finalize", self.finalize.as_secs_f64()));
        }
        match self.verify {
            Some(v) => out.push_str(&format!("{:<28} {:>13.3}s\n", "verify", v.as_secs_f64())),
            None => out.push_str(&format!("{:<28} {:>14}\n", "verify", "skipped")),
        }
        out.push_str(&format!("{:<28} {:>14}\n", "events", self.events));
        if !compacting {
            out.push_str(&format!("{:<28} {:>14}\n", "replay bytes", self.replay_bytes));
        }
        if let Some(every) = self.compact_every {
            out.push_str(&format!("{:<28} {:>14}\n", "compact every (transitions)", every));
            out.push_str(&format!("{:<28} {:>14}\n", "compactions", self.compactions));
            out.push_str(&format!("{:<28} {:>14}\n", "checkpoint bytes (max)", self.checkpoint_bytes));
        }
        out.push_str(&format!("{:<28} {:>14}\n", "events held at the end", self.live_events));
        for (i, kib) in self.rss_tenths_kib.iter().enumerate() {
            out.push_str(&format!("{:<28} {:>11.1}MiB\n", format!("RSS after tenth {}", i + 1), *kib as f64 / 1024.0));
        }
        if let Some(peak) = self.peak_rss_kib {
            out.push_str(&format!("{:<28} {:>11.1}MiB\n", "peak RSS", peak as f64 / 1024.0));
        }
        out
    }
}

/// Run the benchmark for (at least) `transitions` committed transitions of
/// `registry`'s `conformance/counter` game.
#[cfg(test)]
pub fn run(transitions: u64, registry: &GameRegistry, compact_every: Option<u64>) -> Result<BenchReport, String> {
    run_signed(transitions, registry, compact_every, false)
}

/// [`run`], with every submission signed (RFC-010) when `signed`.
pub fn run_signed(
    transitions: u64,
    registry: &GameRegistry,
    compact_every: Option<u64>,
    signed: bool,
) -> Result<BenchReport, String> {
    let game = registry
        .get("conformance/counter")
        .ok_or("kernel-bench runs conformance/counter, and this gaos has no game of that id")?;
    if signed && compact_every.is_some() {
        return Err("--signed keeps the whole log (a signed session is not compacted); drop --compact-every".into());
    }
    run_game(transitions, &game, registry, compact_every, signed).map_err(|e| e.to_string())
}

/// [`run`], or the same benchmark on the game module `module` (loaded
/// under `limits`) when one is given.
pub fn run_with(
    transitions: u64,
    registry: &GameRegistry,
    module: Option<&std::path::Path>,
    limits: &crate::modules::ModuleLimitArgs,
    compact_every: Option<u64>,
    signed: bool,
) -> Result<BenchReport, String> {
    let Some(path) = module else { return run_signed(transitions, registry, compact_every, signed) };
    let mut registry = registry.clone();
    let id = crate::modules::add_module(&mut registry, path, &limits.limits()?)?;
    let game = registry.get(&id).ok_or("the module just loaded is registered")?;
    run_game(transitions, &game, &registry, compact_every, signed).map_err(|e| e.to_string())
}

fn run_game(
    transitions: u64,
    game: &Arc<dyn Game>,
    registry: &GameRegistry,
    compact_every: Option<u64>,
    signed: bool,
) -> Result<BenchReport, KernelError> {
    let rounds = transitions.div_ceil(3).max(1);
    let transitions = rounds * 3;
    let mut level = Map::new();
    level.insert("rounds".into(), rounds.into());
    let options = Arc::new(
        KernelOptions::builder(game, "bench")
            .level("bench", Value::Object(level))
            .seed(1, SeedPolicy::Explicit)
            .seats(vec!["a".into(), "b".into()])
            .cadence(Cadence::Turns)
            .signing(signed.then(crate::kernel_bench_signed::roster))
            .build(),
    );
    let mut kernel = SessionKernel::from_shared(Arc::clone(&options))?;
    let mut compactor = compact_every.map(Compactor::new);
    let tenth = (transitions / 10).max(1);
    let mut tenths = Vec::with_capacity(10);
    let mut rss_tenths_kib = Vec::with_capacity(10);
    let mut done = 0u64;
    // Events persisted (a host would write them; with compaction the kernel drops them).
    let mut committed_events = 0usize;
    let mut command_a = Map::new();
    command_a.insert("n".into(), 1.into());
    let command_a = Value::Object(command_a);
    let mut command_b = Map::new();
    command_b.insert("n".into(), 2.into());
    let command_b = Value::Object(command_b);
    // Signing is the client's work: done before the clock starts.
    let mut presigned = if signed {
        crate::kernel_bench_signed::presign(&kernel, rounds, [&command_a, &command_b]).into_iter()
    } else {
        Vec::new().into_iter()
    };
    let start = Instant::now();
    let mut mark = start;
    for round in 0..rounds {
        for (seat, command) in [("a", &command_a), ("b", &command_b)] {
            let submission = match presigned.next() {
                Some(submission) => submission,
                None => {
                    let id = format!("{seat}-{round}");
                    CommandSubmission::new("bench", kernel.cursor(), seat, &id, command.clone())
                }
            };
            let mut prepared = kernel.prepare_ingest(&submission)?;
            committed_events += prepared.events().len();
            kernel.commit(&mut prepared)?;
        }
        let mut prepared = kernel.prepare_advance(None)?;
        committed_events += prepared.events().len();
        kernel.commit(&mut prepared)?;
        done += 3;
        if let Some(compactor) = &mut compactor {
            compactor.after_round(&mut kernel, round + 1)?;
        }
        if done % tenth < 3 && tenths.len() < 10 {
            let now = Instant::now();
            tenths.push(tenth as f64 / (now - mark).as_secs_f64());
            rss_tenths_kib.extend(rss_kib().map(|(now, _)| now));
            mark = now;
        }
    }
    let total = start.elapsed();
    let live_events = kernel.events().len();
    if let Some(compactor) = compactor {
        // No full transcript is held: restart from the latest checkpoint.
        let t = Instant::now();
        let restored = compactor.restore(Arc::clone(&options), &kernel)?;
        let rehydrate = t.elapsed();
        assert_eq!(restored.digest(), kernel.digest(), "the restored kernel must equal the live kernel");
        return Ok(BenchReport {
            signed,
            transitions,
            rounds,
            total,
            tenths,
            rehydrate,
            finalize: Duration::ZERO,
            verify: None,
            replay_bytes: 0,
            events: committed_events,
            compact_every,
            compactions: compactor.compactions,
            checkpoint_bytes: compactor.max_checkpoint_bytes,
            live_events,
            rss_tenths_kib,
            peak_rss_kib: rss_kib().map(|(_, peak)| peak),
        });
    }
    let transcript = kernel.live_transcript();
    let events = transcript.events.clone();
    let t = Instant::now();
    let rehydrated = SessionKernel::rehydrate(options, Some(&transcript.header), events)?;
    let rehydrate = t.elapsed();
    assert_eq!(rehydrated.digest(), kernel.digest(), "rehydrated kernel must equal the live kernel");
    let t = Instant::now();
    let artifact = finalize_replay(&transcript, &FinalizeOptions { perm: vec![0], ..FinalizeOptions::default() })?;
    let text = artifact.to_jsonl();
    let finalize = t.elapsed();
    // Verify the text as a third party would: parse, structure, re-simulation.
    let resolve = |game: &GameRef| -> Option<Arc<dyn Game>> { registry.by_adapter(&game.adapter.id) };
    let t = Instant::now();
    let report = verify_replay(text.as_str(), &resolve, &VerifyOptions::default());
    let verify = t.elapsed();
    if !report.is_accepted() {
        let mut problems = vec![format!("the finalized replay verified as {}", report.verdict)];
        problems.extend(report.problems.to_strings());
        return Err(KernelError::replay(problems));
    }
    Ok(BenchReport {
        signed,
        transitions,
        rounds,
        total,
        tenths,
        rehydrate,
        finalize,
        verify: Some(verify),
        replay_bytes: text.len(),
        events: transcript.events.len(),
        compact_every: None,
        compactions: 0,
        checkpoint_bytes: 0,
        live_events,
        rss_tenths_kib,
        peak_rss_kib: rss_kib().map(|(_, peak)| peak),
    })
}
