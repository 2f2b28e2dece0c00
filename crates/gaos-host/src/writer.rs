//! Group commit: one writer thread owns the write connection and commits the
//! batches of many sessions together, so throughput is not one fsync per
//! request. A caller's future resolves only after its batch is durable.
//!
//! When the store supports it ([`StoreWriter::deferred_sync`]) the commit is
//! pipelined: the writer thread applies group *n + 1* while a syncer thread
//! makes group *n* durable (one fsync covers every group applied before it
//! started), and callers are answered by the syncer. Durability is the same;
//! the disk wait no longer serializes with the database work.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use crate::metrics::Metrics;
use crate::store::{StoreError, StoreSync, StoreWriter, WriteBatch};

/// Most batches committed in one transaction.
const MAX_GROUP: usize = 512;
/// Queue bound: callers wait (asynchronously) beyond this.
const QUEUE: usize = 8192;

struct Job {
    batch: WriteBatch,
    reply: oneshot::Sender<Result<(), StoreError>>,
    enqueued: Instant,
}

/// A group applied to the store and waiting for its sync.
struct Applied {
    jobs: Vec<Job>,
    results: Vec<Result<(), StoreError>>,
}

/// Handle to the writer thread.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Job>,
}

fn answer(metrics: &Metrics, applied: Applied, synced: &Result<(), StoreError>) {
    for (job, result) in applied.jobs.into_iter().zip(applied.results) {
        let result = match (result, synced) {
            (Ok(()), Err(e)) => Err(e.clone()),
            (result, _) => result,
        };
        metrics.observe_persist(job.enqueued.elapsed());
        let _ = job.reply.send(result);
    }
}

/// The syncer thread: wait for applied groups, sync once for all of them,
/// answer their callers. After a failed sync nothing is trusted any more:
/// `poisoned` makes the writer refuse every later batch.
fn run_syncer(
    mut sync: Box<dyn StoreSync>,
    applied: std::sync::mpsc::Receiver<Applied>,
    poisoned: Arc<AtomicBool>,
    metrics: Arc<Metrics>,
) {
    let mut pending: Vec<Applied> = Vec::new();
    while let Ok(first) = applied.recv() {
        pending.push(first);
        pending.extend(applied.try_iter());
        let synced = if poisoned.load(Ordering::Acquire) {
            Err(poison_error())
        } else {
            sync.sync().map_err(|e| {
                poisoned.store(true, Ordering::Release);
                tracing::error!(error = %e, "syncing the store failed; the host refuses writes until it restarts");
                StoreError::Backend(format!("the store could not be synced to disk ({e}); restart the host"))
            })
        };
        for group in pending.drain(..) {
            answer(&metrics, group, &synced);
        }
    }
}

fn poison_error() -> StoreError {
    StoreError::Backend("an earlier sync of the store failed; restart the host to recover from what is durable".into())
}

impl Writer {
    /// Start the writer thread over `store` (and a syncer thread when the
    /// store defers its syncs).
    pub fn spawn(mut store: Box<dyn StoreWriter>, metrics: Arc<Metrics>) -> Writer {
        let (tx, mut rx) = mpsc::channel::<Job>(QUEUE);
        let poisoned = Arc::new(AtomicBool::new(false));
        let syncer = match store.deferred_sync() {
            Ok(Some(sync)) => {
                let (applied_tx, applied_rx) = std::sync::mpsc::channel::<Applied>();
                let (poisoned, metrics) = (Arc::clone(&poisoned), Arc::clone(&metrics));
                std::thread::Builder::new()
                    .name("gaos-syncer".into())
                    .spawn(move || run_syncer(sync, applied_rx, poisoned, metrics))
                    .expect("the syncer thread can be spawned");
                Some(applied_tx)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e, "pipelined commits are unavailable; every commit syncs on its own");
                None
            }
        };
        std::thread::Builder::new()
            .name("gaos-writer".into())
            .spawn(move || {
                let mut group: Vec<Job> = Vec::with_capacity(MAX_GROUP);
                while let Some(first) = rx.blocking_recv() {
                    group.push(first);
                    while group.len() < MAX_GROUP {
                        match rx.try_recv() {
                            Ok(job) => group.push(job),
                            Err(_) => break,
                        }
                    }
                    let jobs = std::mem::replace(&mut group, Vec::with_capacity(MAX_GROUP));
                    if poisoned.load(Ordering::Acquire) {
                        let results = jobs.iter().map(|_| Err(poison_error())).collect();
                        answer(&metrics, Applied { jobs, results }, &Ok(()));
                        continue;
                    }
                    let mut jobs = jobs;
                    let batches: Vec<WriteBatch> = jobs.iter_mut().map(|j| std::mem::take(&mut j.batch)).collect();
                    let results = store.apply_group(&batches);
                    metrics.record_group(batches.len());
                    let applied = Applied { jobs, results };
                    match &syncer {
                        Some(syncer) => {
                            if let Err(unsent) = syncer.send(applied) {
                                // The syncer is gone: nothing can be made durable.
                                answer(&metrics, unsent.0, &Err(poison_error()));
                            }
                        }
                        None => answer(&metrics, applied, &Ok(())),
                    }
                }
            })
            .expect("the writer thread can be spawned");
        Writer { tx }
    }

    /// Persist `batch` durably.
    pub async fn write(&self, batch: WriteBatch) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let (reply, wait) = oneshot::channel();
        self.tx
            .send(Job { batch, reply, enqueued: Instant::now() })
            .await
            .map_err(|_| StoreError::Backend("the writer thread has stopped".into()))?;
        wait.await.map_err(|_| StoreError::Backend("the writer thread dropped a batch".into()))?
    }
}
