//! `gaos kernel-bench --compact-every N`: compaction as the bench goes, and
//! the memory readings that show whether the kernel's footprint stays flat.
//!
//! The bench has no store, so it stands in for one: events are counted and
//! dropped once committed (a host writes them to SQLite), the compacted
//! checkpoint's text is kept (the latest only, as a host keeps the latest),
//! and the history lookup answers from the bench's own submission ids
//! (`<seat>-<round>`, one per seat per round, accepted in round order), so
//! it stays constant-size like a store-backed lookup and unlike
//! [`gaos_kernel::MemoryHistory`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use gaos_kernel::{
    CompactRequest, DynReducer, HistoryLookup, KernelCheckpoint, KernelError, KernelOptions, SessionKernel,
};

/// Resident set size now and at its peak, in KiB (`/proc/self/status`
/// `VmRSS` / `VmHWM`); `None` off Linux.
pub(crate) fn rss_kib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status.lines().find_map(|line| line.strip_prefix(name)?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Answers "was `<seat>-<round>` accepted at or below the floor?" from the
/// rounds completed when the floor was set: each round's two ingests come
/// before its advance, so every round below `rounds_at_floor` was accepted.
#[derive(Debug, Default)]
struct BenchHistory {
    rounds_at_floor: AtomicU64,
}

impl HistoryLookup for BenchHistory {
    fn was_accepted(&self, participant_id: &str, submission_id: &str, _floor: u64) -> Result<bool, String> {
        let round = submission_id
            .strip_prefix(participant_id)
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|n| n.parse::<u64>().ok());
        Ok(round.is_some_and(|round| round < self.rounds_at_floor.load(Ordering::Relaxed)))
    }
}

/// The bench's stand-in for a host's checkpoint store.
pub(crate) struct Compactor {
    every: u64,
    history: Arc<BenchHistory>,
    /// The latest stored checkpoint text.
    latest: Option<String>,
    pub(crate) compactions: u64,
    /// Largest stored checkpoint, in bytes.
    pub(crate) max_checkpoint_bytes: usize,
}

impl Compactor {
    pub(crate) fn new(every: u64) -> Self {
        Compactor {
            every: every.max(1),
            history: Arc::new(BenchHistory::default()),
            latest: None,
            compactions: 0,
            max_checkpoint_bytes: 0,
        }
    }

    /// After round `rounds_done` committed: compact when `every` transitions
    /// have passed since the floor.
    pub(crate) fn after_round(
        &mut self,
        kernel: &mut SessionKernel<DynReducer>,
        rounds_done: u64,
    ) -> Result<(), KernelError> {
        if kernel.transition_revision() - kernel.retention_floor() < self.every {
            return Ok(());
        }
        let checkpoint = kernel.compacted_checkpoint()?;
        let text = checkpoint.to_json();
        self.max_checkpoint_bytes = self.max_checkpoint_bytes.max(text.len());
        self.latest = Some(text);
        self.history.rounds_at_floor.store(rounds_done, Ordering::Relaxed);
        let request = CompactRequest {
            checkpoint_digest: checkpoint.integrity_digest(),
            checkpoint_durably_committed: true,
            history_durably_committed: true,
        };
        let history: Arc<dyn HistoryLookup> = self.history.clone();
        kernel.compact(&checkpoint, request, history)?;
        self.compactions += 1;
        Ok(())
    }

    /// A restart: the latest stored checkpoint read back, plus the kernel's
    /// tail (the events a store holds after it).
    pub(crate) fn restore(
        &self,
        options: Arc<KernelOptions<DynReducer>>,
        kernel: &SessionKernel<DynReducer>,
    ) -> Result<SessionKernel<DynReducer>, KernelError> {
        let tail = kernel.events().to_vec();
        let Some(text) = &self.latest else {
            return SessionKernel::rehydrate(options, None, tail);
        };
        let checkpoint = KernelCheckpoint::from_json(text)?;
        let history: Arc<dyn HistoryLookup> = self.history.clone();
        SessionKernel::restore(options, &checkpoint, tail, Some(history))
    }
}

#[cfg(test)]
mod tests {
    use gaos_games::GameRegistry;

    use crate::kernel_bench::run;

    #[test]
    fn compacting_as_it_goes_keeps_a_bounded_tail_and_restores_to_the_same_kernel() {
        let registry = GameRegistry::builtin();
        // `run` asserts that the restored kernel's digest equals the live one.
        let report = run(3_000, &registry, Some(90)).expect("the bench runs");
        assert_eq!(report.compactions, 3_000 / 90);
        assert!(report.live_events < 4 * 90, "at most one interval of events is held: {}", report.live_events);
        assert_eq!(report.events, 4_000, "4 events per round of 3 transitions");
        assert!(report.checkpoint_bytes > 0);
        assert_eq!(report.tenths.len(), 10);
        let plain = run(3_000, &registry, None).expect("the bench runs");
        assert_eq!(plain.live_events, plain.events, "without compaction the kernel holds every event");
        assert_eq!(plain.events, report.events);
    }
}
