//! `gaos arena run`'s progress on stderr, with live standings: an indicatif
//! bar on a terminal (standings printed above it every twentieth of the
//! tournament), plain lines otherwise (`start ID`, `attach ID`, `done ID
//! RANKING steps N ms M [k/n]`, and `standings after k/n: …` every tenth).
//! Live standings are those of the matches completed so far, computed as
//! the bundle's are (ratings with their intervals).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use std::sync::Arc;

use gaos_runner::arena::{ArenaManifest, ArenaObserver, MatchPlan, MatchRecord, standings};
use indicatif::ProgressBar;

/// The progress display (see the module docs).
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    manifest: Arc<ArenaManifest>,
    total: AtomicUsize,
    done: AtomicUsize,
    /// Matches completed by this run.
    pub(crate) completed: AtomicUsize,
    running: AtomicUsize,
    records: Mutex<Vec<MatchRecord>>,
}

impl Progress {
    /// A display for the tournament of `manifest`.
    pub(crate) fn new(manifest: Arc<ArenaManifest>) -> Self {
        Progress {
            bar: crate::run_support::progress_bar("matches"),
            manifest,
            total: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            completed: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            records: Mutex::new(Vec::new()),
        }
    }

    fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    /// `entrant rating [low–high] (W-D-L)` for every entrant, best first.
    fn standings(&self) -> String {
        let records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        let table = standings(&self.manifest, &records);
        let parts: Vec<String> = table
            .entrants
            .iter()
            .map(|s| {
                let r = s.rating;
                format!("{} {:.0} [{:.0}–{:.0}] ({}-{}-{})", s.id, r.rating, r.low, r.high, s.wins, s.draws, s.losses)
            })
            .collect();
        parts.join(", ")
    }

    fn message(&self) -> String {
        format!("{} running", self.running.load(Ordering::SeqCst))
    }

    /// Stop the bar.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_with_message(self.message());
        }
    }
}

fn ranking_text(record: &MatchRecord) -> String {
    let parts: Vec<String> = record
        .result
        .ranking
        .iter()
        .map(|(seat, rank)| {
            let forfeit = if record.result.forfeits.contains(seat) { " (forfeit)" } else { "" };
            format!("#{rank} {}{forfeit}", record.entrant(seat).unwrap_or(seat))
        })
        .collect();
    parts.join(" ")
}

impl ArenaObserver for Progress {
    fn planned(&self, total: usize, completed: &[MatchRecord], in_progress: usize) {
        self.total.store(total, Ordering::SeqCst);
        self.done.store(completed.len(), Ordering::SeqCst);
        self.records.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(completed);
        match &self.bar {
            Some(bar) => {
                bar.set_length(total as u64);
                bar.set_position(completed.len() as u64);
                bar.reset_eta();
                bar.set_message(self.message());
                bar.enable_steady_tick(Duration::from_millis(200));
            }
            None => self.line(format!(
                "planned {total} matches: {} already complete, {in_progress} in progress to attach",
                completed.len()
            )),
        }
    }

    fn match_started(&self, plan: &MatchPlan, attached: bool) {
        self.running.fetch_add(1, Ordering::SeqCst);
        match &self.bar {
            Some(bar) => bar.set_message(self.message()),
            None => self.line(format!("{} {}", if attached { "attach" } else { "start" }, plan.id)),
        }
    }

    fn match_completed(&self, record: &MatchRecord) {
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.completed.fetch_add(1, Ordering::SeqCst);
        self.records.lock().unwrap_or_else(PoisonError::into_inner).push(record.clone());
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        let total = self.total.load(Ordering::SeqCst);
        let every = |parts: usize| done == total || done.is_multiple_of(total.div_ceil(parts).max(1));
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(self.message());
                if every(20) {
                    self.line(format!("standings after {done}/{total}: {}", self.standings()));
                }
            }
            None => {
                self.line(format!(
                    "done {} {} steps {} ms {} [{done}/{total}]",
                    record.id,
                    ranking_text(record),
                    record.result.steps,
                    record.wall_clock_ms
                ));
                if every(10) {
                    self.line(format!("standings after {done}/{total}: {}", self.standings()));
                }
            }
        }
    }

    fn match_failed(&self, plan: &MatchPlan, error: &str) {
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.line(format!("failed {}: {error}", plan.id));
    }
}
