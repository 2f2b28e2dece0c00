//! A fault-injecting store: the second implementation of [`StoreWriter`],
//! wrapped around a real one, for tests and simulation. It fails chosen
//! batches before they are written, loses the acknowledgement of batches it
//! did write (the crash between commit and answer), or fences a session's
//! batches as a store would once another host owned it.
//!
//! ```no_run
//! # fn demo(writer: gaos_host::storage::sqlite::SqliteWriter) {
//! use gaos_host::storage::faults::FaultyStore;
//! let (store, faults) = FaultyStore::wrap(writer);
//! faults.fail_next(1); // the next batch fails; nothing of it is written
//! # let _ = store;
//! # }
//! ```

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use super::store::{StoreError, StoreWriter, WriteBatch};

/// Picks the batches a rule applies to.
type BatchFilter = Box<dyn Fn(&WriteBatch) -> bool + Send>;

#[derive(Default)]
struct Plan {
    /// Batches still to fail before they are written.
    fail: usize,
    /// Batches still to write and then report as failed.
    lose_ack: usize,
    /// Sessions whose fenced batches are refused as `Fenced`.
    fenced: HashSet<String>,
    /// Every batch this matches fails without being written.
    fail_matching: Option<BatchFilter>,
    /// Batches written so far (acknowledged or not).
    written: u64,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("fail", &self.fail)
            .field("lose_ack", &self.lose_ack)
            .field("fenced", &self.fenced)
            .field("fail_matching", &self.fail_matching.is_some())
            .field("written", &self.written)
            .finish()
    }
}

/// What a test tells a [`FaultyStore`] (cheap to clone; shared with it).
#[derive(Debug, Clone, Default)]
pub struct Faults {
    plan: Arc<Mutex<Plan>>,
}

impl Faults {
    fn plan(&self) -> std::sync::MutexGuard<'_, Plan> {
        self.plan.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next `n` batches fail without being written.
    pub fn fail_next(&self, n: usize) {
        self.plan().fail = n;
    }

    /// The next `n` batches are written, then reported as failed.
    pub fn lose_ack_next(&self, n: usize) {
        self.plan().lose_ack = n;
    }

    /// From now on, every fenced batch of `session_id` is refused as
    /// [`StoreError::Fenced`] (another host took the session over).
    pub fn fence(&self, session_id: &str) {
        self.plan().fenced.insert(session_id.to_owned());
    }

    /// From now on every batch `filter` picks fails without being written
    /// (`None` stops it).
    pub fn fail_matching(&self, filter: Option<BatchFilter>) {
        self.plan().fail_matching = filter;
    }

    /// Batches written so far.
    pub fn written(&self) -> u64 {
        self.plan().written
    }
}

/// A [`StoreWriter`] that injects the [`Faults`] into `W`.
pub struct FaultyStore<W> {
    inner: W,
    faults: Faults,
}

impl<W: StoreWriter> FaultyStore<W> {
    /// Wrap `inner`; the [`Faults`] steer it.
    pub fn wrap(inner: W) -> (Self, Faults) {
        let faults = Faults::default();
        (FaultyStore { inner, faults: faults.clone() }, faults)
    }
}

enum Fate {
    Write,
    Fail,
    LoseAck,
    Fenced,
}

impl<W: StoreWriter> StoreWriter for FaultyStore<W> {
    fn apply_group(&mut self, batches: &[WriteBatch]) -> Vec<Result<(), StoreError>> {
        let fates: Vec<Fate> = {
            let mut plan = self.faults.plan();
            batches
                .iter()
                .map(|batch| {
                    let fenced = batch.fence.as_ref().is_some_and(|f| plan.fenced.contains(&f.session_id));
                    if fenced {
                        Fate::Fenced
                    } else if plan.fail_matching.as_ref().is_some_and(|picks| picks(batch)) {
                        Fate::Fail
                    } else if plan.fail > 0 {
                        plan.fail -= 1;
                        Fate::Fail
                    } else if plan.lose_ack > 0 {
                        plan.lose_ack -= 1;
                        Fate::LoseAck
                    } else {
                        Fate::Write
                    }
                })
                .collect()
        };
        let to_write: Vec<WriteBatch> = batches
            .iter()
            .zip(&fates)
            .filter(|(_, fate)| matches!(fate, Fate::Write | Fate::LoseAck))
            .map(|(batch, _)| batch.clone())
            .collect();
        let mut written = self.inner.apply_group(&to_write).into_iter();
        self.faults.plan().written += to_write.len() as u64;
        batches
            .iter()
            .zip(fates)
            .map(|(batch, fate)| match fate {
                Fate::Write => written.next().expect("one result per written batch"),
                Fate::LoseAck => {
                    written.next().expect("one result per written batch")?;
                    Err(StoreError::Backend("injected fault: the batch was written but its answer was lost".into()))
                }
                Fate::Fail => Err(StoreError::Backend("injected fault: the batch was not written".into())),
                Fate::Fenced => {
                    let fence = batch.fence.as_ref().expect("a fenced batch has a fence");
                    Err(StoreError::Fenced {
                        session_id: fence.session_id.clone(),
                        owner: fence.owner.clone(),
                        epoch: fence.epoch,
                        now: "another host (injected)".into(),
                    })
                }
            })
            .collect()
    }
}
