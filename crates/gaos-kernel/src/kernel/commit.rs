//! Completion: `commit` applies a prepared transition's patch to live
//! state, `abort` drops it.

use std::collections::BTreeMap;

use gaos_json::Value;

use super::ingest::StoredReceipt;
use super::prepared::{Completion, Prepared};
use super::resolve::RejectionRecord;
use super::{Live, SeatView, SessionKernel};
use crate::action::SubmittedAction;
use crate::commitment::CommitmentBook;
use crate::error::{KernelError, LifecycleCode};
use crate::event::SessionEvent;
use crate::protocol::{Intent, IntentWindow};
use crate::reducer::TickReducer;

/// The changes a prepared transition applies on commit.
pub(super) enum Patch<S> {
    Noop,
    Ingest(Box<IngestPatch>),
    Extension,
    Advance(Box<AdvancePatch<S>>),
    /// Consecutive transitions prepared together (persisted in one write),
    /// each with its transition revision.
    Chain(Vec<(u64, Patch<S>)>),
}

pub(super) struct IngestPatch {
    pub(super) seat: String,
    pub(super) intent: Intent,
    pub(super) action: SubmittedAction,
    pub(super) receipt_key: String,
    pub(super) receipt: StoredReceipt,
}

pub(super) struct AdvancePatch<S> {
    pub(super) state: Option<S>,
    pub(super) cursor: u64,
    pub(super) tick: u64,
    pub(super) window: IntentWindow,
    pub(super) window_actions: BTreeMap<String, SubmittedAction>,
    pub(super) full_view: Value,
    pub(super) seat_views: Vec<SeatView>,
    /// The resolution's commitment changes, layered over the live book.
    pub(super) commitments: CommitmentBook<String>,
    pub(super) removed_receipts: Vec<String>,
    pub(super) rejections: Vec<RejectionRecord>,
    pub(super) last_checkpoint_tick: u64,
    pub(super) evict: bool,
}

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    pub(super) fn discard_patch(&self, patch: Option<Patch<R::State>>) {
        match patch {
            Some(Patch::Advance(advance)) => {
                if let Some(draft) = advance.state {
                    self.isolation.discard(draft);
                }
            }
            Some(Patch::Chain(links)) => {
                for (_, link) in links {
                    self.discard_patch(Some(link));
                }
            }
            _ => {}
        }
    }

    /// `commit(prepared)`: publish a prepared transition. A transition
    /// prepared against an older revision is aborted and reported `stale`.
    pub fn commit(&mut self, prepared: &mut Prepared<R::State>) -> Result<(), KernelError> {
        if prepared.owner != self.id {
            return Err(KernelError::lifecycle(
                LifecycleCode::Foreign,
                "this transition was prepared by another kernel",
            ));
        }
        if prepared.completion != Completion::Open {
            return Err(KernelError::lifecycle(
                LifecycleCode::AlreadyCompleted,
                "this transition was already completed",
            ));
        }
        if prepared.base != self.live.transition_revision {
            prepared.completion = Completion::Aborted;
            self.discard_patch(prepared.patch.take());
            return Err(KernelError::lifecycle(
                LifecycleCode::Stale,
                format!(
                    "prepared at revision {}, but the kernel is at {}; it was aborted",
                    prepared.base, self.live.transition_revision
                ),
            ));
        }
        prepared.completion = Completion::Committed;
        let patch = prepared.patch.take().expect("an open transition holds its patch");
        // The events move into the transcript; the host persisted them already.
        let events = std::mem::take(&mut prepared.events);
        self.apply(patch, events, prepared.next);
        Ok(())
    }

    /// `abort(prepared)`: drop an open transition (idempotent after abort).
    pub fn abort(&mut self, prepared: &mut Prepared<R::State>) -> Result<(), KernelError> {
        if prepared.owner != self.id {
            return Err(KernelError::lifecycle(
                LifecycleCode::Foreign,
                "this transition was prepared by another kernel",
            ));
        }
        match prepared.completion {
            Completion::Committed => {
                Err(KernelError::lifecycle(LifecycleCode::AlreadyCompleted, "this transition was already committed"))
            }
            Completion::Aborted => Ok(()),
            Completion::Open => {
                prepared.completion = Completion::Aborted;
                self.discard_patch(prepared.patch.take());
                Ok(())
            }
        }
    }

    /// Prepare and commit in one step (for callers without persistence).
    pub fn apply_now(&mut self, mut prepared: Prepared<R::State>) -> Result<Prepared<R::State>, KernelError> {
        self.commit(&mut prepared)?;
        Ok(prepared)
    }

    pub(super) fn apply(&mut self, patch: Patch<R::State>, mut events: Vec<SessionEvent>, next: u64) {
        if let Patch::Chain(links) = patch {
            for (revision, link) in links {
                let split = events.iter().position(|e| e.transition_revision != revision).unwrap_or(events.len());
                let rest = events.split_off(split);
                self.apply(link, std::mem::replace(&mut events, rest), revision);
            }
            return;
        }
        let live = &mut self.live;
        match patch {
            Patch::Chain(..) => unreachable!("chains are split above"),
            Patch::Noop => {}
            Patch::Extension => {}
            Patch::Ingest(ingest) => {
                let IngestPatch { seat, intent, action, receipt_key, receipt } = *ingest;
                live.window.intents.insert(seat.clone(), intent);
                live.window_actions.insert(seat, action);
                live.accepted.insert(receipt_key.clone());
                live.receipt_order.push_back((receipt.revision, receipt_key.clone()));
                live.receipts.insert(receipt_key, receipt);
            }
            Patch::Advance(patch) => {
                let AdvancePatch {
                    state,
                    cursor,
                    tick,
                    window,
                    window_actions,
                    full_view,
                    seat_views,
                    commitments,
                    removed_receipts,
                    rejections,
                    last_checkpoint_tick,
                    evict,
                } = *patch;
                if let Some(state) = state {
                    let previous = std::mem::replace(&mut live.state, state);
                    self.isolation.retire(previous);
                }
                live.cursor = cursor;
                live.tick = tick;
                live.window = window;
                live.window_actions = window_actions;
                live.full_view = full_view;
                live.seat_views = seat_views;
                live.commitments.absorb(commitments);
                for key in removed_receipts {
                    live.receipts.remove(&key);
                }
                live.rejections.extend(rejections);
                live.last_checkpoint_tick = last_checkpoint_tick;
                if evict {
                    Self::evict_receipts(live, self.limits.receipt_retention);
                }
            }
        }
        if !events.is_empty() {
            if let Some(chains) = &mut live.chains {
                for event in &events {
                    chains.absorb(&self.options.session_id, &event.body);
                }
            }
            live.transition_revision = next;
            live.events.extend(events);
        }
    }

    /// Move receipts older than the retention window out (their identities
    /// stay in the permanent index).
    pub(super) fn evict_receipts(live: &mut Live<R::State>, retention: u64) {
        while let Some((cursor, _)) = live.receipt_order.front() {
            if cursor + retention >= live.cursor {
                break;
            }
            let (_, key) = live.receipt_order.pop_front().expect("front exists");
            live.receipts.remove(&key);
        }
    }
}
