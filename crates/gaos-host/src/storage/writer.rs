//! Group commit: one writer thread owns the write connection and commits the
//! batches of many sessions together, so throughput is not one fsync per
//! request. A caller's future resolves only after its batch is durable.
//!
//! The persist latency metric is measured with `Instant` (a monotonic
//! duration, not a time of day): the host clock stays the only wall clock.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use super::store::{StoreError, StoreWriter, WriteBatch};
use crate::metrics::Metrics;

/// Most batches committed in one transaction.
const MAX_GROUP: usize = 512;
/// Queue bound: callers wait (asynchronously) beyond this.
const QUEUE: usize = 8192;

struct Job {
    batch: WriteBatch,
    reply: oneshot::Sender<Result<(), StoreError>>,
    enqueued: Instant,
}

/// Handle to the writer thread.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Job>,
}

impl Writer {
    /// Start the writer thread over `store`.
    pub fn spawn(mut store: Box<dyn StoreWriter>, metrics: Arc<Metrics>) -> Writer {
        let (tx, mut rx) = mpsc::channel::<Job>(QUEUE);
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
                    let batches: Vec<WriteBatch> = group.iter_mut().map(|j| std::mem::take(&mut j.batch)).collect();
                    let results = store.apply_group(&batches);
                    metrics.record_group(batches.len());
                    for (job, result) in group.drain(..).zip(results) {
                        metrics.observe_persist(job.enqueued.elapsed());
                        let _ = job.reply.send(result);
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
