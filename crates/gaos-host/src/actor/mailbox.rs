//! The actor's mailbox: the messages it takes, the handle that sends them,
//! act batching, and the dispatch of every message to its room.

use std::sync::Arc;

use gaos_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use super::SessionActor;
use super::streams::Subscription;
use crate::answers::Answer;
use crate::error::HostError;
use crate::lease::{LeaseOp, Presented};
use crate::requests::{ActRequest, AttachRequest, FinalizeRequest, ResetRequest, SeatSignatureRequest};
use crate::storage::SessionStatus;

pub(crate) type Reply<T> = oneshot::Sender<Result<T, HostError>>;

/// Where a live session stands, for its row of `GET /v1/sessions` (the
/// rest of the row comes from the store).
#[derive(Debug, Clone)]
pub struct SessionSummary {
    pub status: SessionStatus,
    pub cursor: u64,
    pub tick: u64,
    pub seats: Vec<String>,
    /// The game's id.
    pub game: String,
    /// Some seat's progress is stopped (lease lapse or safety pause).
    pub paused: bool,
    pub seat_states: Vec<super::SeatState>,
}

/// Messages to a session actor.
pub enum Command {
    Observe {
        seat: Option<String>,
        reply: Reply<Answer>,
    },
    /// `POST /actions`; acts queued right behind each other are handled
    /// together (`take_act_batch`).
    Act(ActCall),
    Attach {
        seat: String,
        presented: Presented,
        request: AttachRequest,
        reply: Reply<Answer>,
    },
    /// `POST /seat-signature`: a seat's periodic signature over its chain head.
    SeatSignature {
        seat: String,
        request: SeatSignatureRequest,
        reply: Reply<Answer>,
    },
    /// A lease dispatch: renew, heartbeat, pause, resume, stop. With
    /// `operator`, the operator pauses `seat` (pause only).
    Lease {
        seat: String,
        presented: Presented,
        op: LeaseOp,
        operator: bool,
        reply: Reply<Answer>,
    },
    /// `GET /lease`.
    LeaseInfo {
        seat: String,
        presented: Presented,
        reply: Reply<Answer>,
    },
    /// Operator emergency stop (sent on the priority channel).
    EmergencyStop {
        reason: String,
        reply: Reply<Answer>,
    },
    /// The (test) clock moved: re-check deadlines now, then answer, so the
    /// clock route acknowledges a move only once every deadline it passed
    /// has fired (lapses recorded, timeouts resolved).
    ClockChanged {
        reply: Reply<()>,
    },
    Finalize {
        request: FinalizeRequest,
        reply: Reply<Answer>,
    },
    /// `POST /reset`: start the next level of a run that advances on reset.
    Reset {
        seat: String,
        presented: Presented,
        request: ResetRequest,
        reply: Reply<Answer>,
    },
    Snapshot {
        seat: String,
        after: Option<u64>,
        reply: Reply<Answer>,
    },
    Subscribe {
        seat: Option<String>,
        after: Option<u64>,
        reply: Reply<Subscription>,
    },
    Replay {
        reply: Reply<String>,
    },
    /// `GET /result`: the stored finalize answer.
    StoredResult {
        reply: Reply<Answer>,
    },
    /// `GET /receipts`: the attach receipt chain so far.
    ReceiptChain {
        reply: Reply<Value>,
    },
    Transcript {
        reply: Reply<String>,
    },
    Summary {
        reply: oneshot::Sender<SessionSummary>,
    },
    /// Host-level rows of the session (a seat's new credentials), written
    /// through the actor's fenced funnel in order with its other writes.
    Persist {
        ops: Vec<crate::storage::WriteOp>,
        reply: Reply<()>,
    },
    /// Answer for the creator seat right after creation (with credentials).
    CreatorEnvelope {
        extensions: Map,
        reply: Reply<Answer>,
    },
}

/// Handle to a running actor.
#[derive(Clone)]
pub struct ActorHandle {
    pub tx: mpsc::Sender<Command>,
    /// Work that must overtake queued commands (emergency stop).
    pub priority: mpsc::Sender<Command>,
    pub seats: Arc<Vec<String>>,
    /// When the session was created (host clock): retention counts from it.
    pub created_at_ms: i64,
    /// Set when the actor stopped after a failed or fenced write.
    pub(crate) stopped: Arc<std::sync::atomic::AtomicBool>,
}

impl ActorHandle {
    /// True once the actor stopped after a failed or fenced write: the host
    /// forgets this handle and loads the session again (from the store, or
    /// at the host that owns it now).
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Send a command and wait for its answer.
    pub async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Result<T, HostError> {
        let (reply, wait) = oneshot::channel();
        self.tx.send(make(reply)).await.map_err(|_| HostError::unavailable("the session actor has stopped"))?;
        wait.await.map_err(|_| HostError::unavailable("the session actor dropped the request"))?
    }

    /// Like [`ActorHandle::ask`], ahead of every queued command.
    pub async fn ask_first<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Result<T, HostError> {
        let (reply, wait) = oneshot::channel();
        self.priority.send(make(reply)).await.map_err(|_| HostError::unavailable("the session actor has stopped"))?;
        wait.await.map_err(|_| HostError::unavailable("the session actor dropped the request"))?
    }
}

/// One act: the seat, the lease it presented, its request and where its
/// answer goes.
pub struct ActCall {
    pub seat: String,
    pub presented: Presented,
    pub request: ActRequest,
    pub reply: Reply<Answer>,
}

/// Most acts handled as one batch.
const ACT_BATCH: usize = 64;

/// `first` and the acts queued right behind it (at most [`ACT_BATCH`]), so
/// they go through the kernel and the store together; also the first
/// other command met, which must be handled right after the batch.
pub(super) async fn take_act_batch(
    rx: &mut mpsc::Receiver<Command>,
    first: ActCall,
) -> (Vec<ActCall>, Option<Command>) {
    let mut acts = vec![first];
    if rx.is_empty() {
        // Let request tasks that are already running (the other seats of a
        // simultaneous window) hand over their acts, so one durable write
        // carries them all.
        tokio::task::yield_now().await;
    }
    while acts.len() < ACT_BATCH {
        match rx.try_recv() {
            Ok(Command::Act(call)) => acts.push(call),
            Ok(command) => return (acts, Some(command)),
            Err(_) => break,
        }
    }
    (acts, None)
}

/// Answer `command` with `error` (an actor that stopped).
pub(super) fn refuse(command: Command, error: HostError) {
    match command {
        Command::Act(ActCall { reply, .. }) => {
            let _ = reply.send(Err(error));
        }
        Command::Observe { reply, .. }
        | Command::Attach { reply, .. }
        | Command::Reset { reply, .. }
        | Command::SeatSignature { reply, .. }
        | Command::Lease { reply, .. }
        | Command::LeaseInfo { reply, .. }
        | Command::EmergencyStop { reply, .. }
        | Command::Finalize { reply, .. }
        | Command::Snapshot { reply, .. }
        | Command::StoredResult { reply, .. }
        | Command::CreatorEnvelope { reply, .. } => {
            let _ = reply.send(Err(error));
        }
        Command::ClockChanged { reply } | Command::Persist { reply, .. } => {
            let _ = reply.send(Err(error));
        }
        Command::Subscribe { reply, .. } => {
            let _ = reply.send(Err(error));
        }
        Command::Replay { reply } | Command::Transcript { reply } => {
            let _ = reply.send(Err(error));
        }
        Command::ReceiptChain { reply } => {
            let _ = reply.send(Err(error));
        }
        // A summary has no error to carry: the list shows the stored row.
        Command::Summary { .. } => {}
    }
}

impl SessionActor {
    /// Handle one command; an act takes the acts queued right behind it
    /// from `mailbox` along (one kernel batch, one durable write) and then
    /// handles the other command it met there.
    pub(super) async fn handle(&mut self, command: Command, mailbox: &mut mpsc::Receiver<Command>) {
        match command {
            Command::Observe { seat, reply } => {
                let answer = match &self.leases.revoked {
                    Some(reason) => Err(HostError::revoked(reason)),
                    None => self.observe(seat.as_deref()),
                };
                let _ = reply.send(answer);
            }
            Command::Act(first) => {
                let (acts, next) = take_act_batch(mailbox, first).await;
                self.act(acts).await;
                if let Some(next) = next {
                    Box::pin(self.handle(next, mailbox)).await;
                }
            }
            Command::Attach { seat, presented, request, reply } => {
                let answer = self.attach(&seat, &presented, request).await;
                let _ = reply.send(answer);
            }
            Command::Reset { seat, presented, request, reply } => {
                let answer = self.reset(&seat, &presented, request).await;
                let _ = reply.send(answer);
            }
            Command::SeatSignature { seat, request, reply } => {
                let answer = self.seat_signature(&seat, request).await;
                let _ = reply.send(answer);
            }
            Command::Lease { seat, presented, op, operator, reply } => {
                let answer = self.lease_call(&seat, &presented, op, operator).await;
                let _ = reply.send(answer);
            }
            Command::LeaseInfo { seat, presented, reply } => {
                let answer = self.lease_info(&seat, &presented).await;
                let _ = reply.send(answer);
            }
            Command::EmergencyStop { reason, reply } => {
                let answer = self.revoke(&reason, "operator").await;
                let _ = reply.send(answer);
            }
            Command::ClockChanged { reply } => {
                self.on_timer().await;
                let _ = reply.send(Ok(()));
            }
            Command::Finalize { request, reply } => {
                let answer = self.finalize(request).await;
                let _ = reply.send(answer);
            }
            Command::Snapshot { seat, after, reply } => {
                let _ = reply.send(self.snapshot(&seat, after));
            }
            Command::Subscribe { seat, after, reply } => {
                let _ = reply.send(self.subscribe(seat.as_deref(), after));
            }
            Command::StoredResult { reply } => {
                let _ = reply.send(self.stored_result());
            }
            Command::ReceiptChain { reply } => {
                let _ = reply.send(self.receipt_chain());
            }
            Command::Replay { reply } => {
                let answer = match &self.leases.revoked {
                    Some(reason) => Err(HostError::revoked(reason)),
                    None => self.replay_text().await,
                };
                let _ = reply.send(answer);
            }
            Command::Transcript { reply } => {
                let _ = reply.send(self.transcript_text().await);
            }
            Command::Summary { reply } => {
                let _ = reply.send(self.summary());
            }
            Command::Persist { ops, reply } => {
                let _ = reply.send(self.persist(ops).await);
            }
            Command::CreatorEnvelope { extensions, reply } => {
                let _ = reply.send(self.creator_envelope(extensions));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(seat: &str) -> (Command, oneshot::Receiver<Result<Answer, HostError>>) {
        let (reply, wait) = oneshot::channel();
        let request = ActRequest::from_value(Value::Null);
        (Command::Act(ActCall { seat: seat.into(), presented: Presented::default(), request, reply }), wait)
    }

    fn request(command: Command) -> ActCall {
        match command {
            Command::Act(call) => call,
            _ => unreachable!("an act"),
        }
    }

    #[tokio::test]
    async fn queued_acts_join_the_batch_up_to_the_first_other_command() {
        let (tx, mut rx) = mpsc::channel(16);
        let (first, _w0) = act("a");
        let (second, _w1) = act("b");
        let (third, _w2) = act("c");
        tx.send(second).await.expect("queued");
        let (clock_reply, _clock_wait) = oneshot::channel();
        tx.send(Command::ClockChanged { reply: clock_reply }).await.expect("queued");
        tx.send(third).await.expect("queued");
        let (acts, other) = take_act_batch(&mut rx, request(first)).await;
        assert_eq!(acts.iter().map(|a| a.seat.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert!(matches!(other, Some(Command::ClockChanged { .. })), "the other command is handed back, not dropped");
        let third = request(rx.try_recv().expect("the third act"));
        let (acts, other) = take_act_batch(&mut rx, third).await;
        assert_eq!((acts.len(), other.is_none()), (1, true));
    }

    #[tokio::test]
    async fn a_batch_holds_at_most_act_batch_acts() {
        let (tx, mut rx) = mpsc::channel(2 * ACT_BATCH);
        let mut waits = Vec::new();
        for _ in 0..ACT_BATCH + 5 {
            let (command, wait) = act("a");
            tx.send(command).await.expect("queued");
            waits.push(wait);
        }
        let first = request(rx.try_recv().expect("an act"));
        let (acts, other) = take_act_batch(&mut rx, first).await;
        assert_eq!((acts.len(), other.is_none()), (ACT_BATCH, true));
        assert_eq!(rx.len(), 5, "the rest wait for the next batch");
    }
}
