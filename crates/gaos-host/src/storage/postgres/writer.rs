//! The PostgreSQL write side: the writer thread's group commit as one
//! transaction, each batch under a savepoint and, when it carries one, its
//! fence checked first in the same transaction (`gaos_fence`, schema.rs).
//! A batch's statements are pipelined (sent together, answered together):
//! a failed one aborts those after it, so the fence check, which raises,
//! keeps every write of its batch out.

use futures_util::future::join_all;
use tokio::runtime::Runtime;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use super::schema::{CONFLICT, FENCED};
use super::{connect, describe, escape_nul};
use crate::storage::store::{StoreError, StoreWriter, WriteBatch, WriteOp};

/// How long a transaction may sit idle before PostgreSQL ends it: a host
/// stopped (SIGSTOP) in the middle of a group commit must not hold its
/// share locks, and so the claims of the sessions it owned, for ever.
const IDLE_IN_TRANSACTION: &str = "5s";

struct Statements {
    fence: Statement,
    create: Statement,
    status: Statement,
    events: Statement,
    answer: Statement,
    credential: Statement,
    revoke_seat: Statement,
    state: Statement,
    accepted: Statement,
    checkpoint: Statement,
}

impl Statements {
    async fn prepare(client: &Client) -> Result<Self, tokio_postgres::Error> {
        Ok(Statements {
            fence: client.prepare("SELECT gaos_fence($1, $2, $3)").await?,
            create: client.prepare("SELECT gaos_create_session($1, $2, $3, $4, $5, $6, $7)").await?,
            status: client.prepare("UPDATE gaos_sessions SET status = $2 WHERE id = $1").await?,
            events: client
                .prepare("SELECT gaos_put_events($1, $2::BIGINT[], $3::TEXT[], $4::BIGINT[], $5::TEXT[], $6)")
                .await?,
            answer: client.prepare("SELECT gaos_put_answer($1, $2, $3, $4, $5, $6)").await?,
            credential: client
                .prepare(
                    "INSERT INTO gaos_credentials (token_hash, session_id, role, seat, issued_at_ms)
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .await?,
            revoke_seat: client
                .prepare("UPDATE gaos_credentials SET revoked = TRUE WHERE session_id = $1 AND role = $2 AND seat = $3")
                .await?,
            state: client
                .prepare(
                    "INSERT INTO gaos_session_state (session_id, key, value) VALUES ($1, $2, $3)
                     ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                )
                .await?,
            accepted: client
                .prepare(
                    "INSERT INTO gaos_accepted (session_id, participant_id, submission_id, transition_revision)
                     SELECT $1, p, s, r FROM unnest($2::TEXT[], $3::TEXT[], $4::BIGINT[]) AS t(p, s, r)
                     ON CONFLICT DO NOTHING",
                )
                .await?,
            checkpoint: client
                .prepare(
                    "INSERT INTO gaos_checkpoints (session_id, transition_revision, events, transcript_prefix, body)
                     VALUES ($1, $2, $3, $4, $5)
                     ON CONFLICT (session_id) DO UPDATE SET transition_revision = excluded.transition_revision,
                         events = excluded.events, transcript_prefix = excluded.transcript_prefix,
                         body = excluded.body
                     WHERE excluded.transition_revision > gaos_checkpoints.transition_revision",
                )
                .await?,
        })
    }
}

/// The write connection, owned by the writer thread (it drives its own
/// single-threaded runtime).
pub struct PgWriter {
    url: String,
    /// Always set; an `Option` only so `Drop` can shut it down off-thread.
    runtime: Option<Runtime>,
    connection: Option<(Client, Statements)>,
}

impl PgWriter {
    pub(super) fn new(url: &str) -> Result<Self, StoreError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::Backend(format!("cannot start the PostgreSQL writer's runtime: {e}")))?;
        let mut writer = PgWriter { url: url.to_owned(), runtime: Some(runtime), connection: None };
        writer.connected()?;
        Ok(writer)
    }

    fn runtime(&self) -> &Runtime {
        self.runtime.as_ref().expect("the runtime lives until drop")
    }

    /// The connection, made again if it was lost.
    fn connected(&mut self) -> Result<(), StoreError> {
        if self.connection.as_ref().is_some_and(|(client, _)| !client.is_closed()) {
            return Ok(());
        }
        let url = self.url.clone();
        let made = self.runtime().block_on(async move {
            let client = connect(&url).await?;
            client
                .batch_execute(&format!("SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION}'"))
                .await
                .map_err(|e| StoreError::Backend(describe(&e)))?;
            let statements = Statements::prepare(&client).await.map_err(|e| StoreError::Backend(describe(&e)))?;
            Ok::<_, StoreError>((client, statements))
        })?;
        self.connection = Some(made);
        Ok(())
    }
}

/// A store error from a failed statement: our SQLSTATEs become `Fenced`
/// and `Conflict`, everything else `Backend`.
fn classify(e: &tokio_postgres::Error, batch: &WriteBatch) -> StoreError {
    let code = e.code().map(|c| c.code());
    let message = e.as_db_error().map(|d| d.message().to_owned()).unwrap_or_else(|| describe(e));
    match (code, &batch.fence) {
        (Some(FENCED), Some(fence)) => StoreError::Fenced {
            session_id: fence.session_id.clone(),
            owner: fence.owner.clone(),
            epoch: fence.epoch,
            now: message,
        },
        (Some(CONFLICT), _) => StoreError::Conflict(message),
        _ => StoreError::Backend(message),
    }
}

type Params = Vec<Box<dyn ToSql + Sync + Send>>;

/// The statement and parameters of one write.
fn statement<'s>(s: &'s Statements, op: &WriteOp, epoch: i64) -> (&'s Statement, Params) {
    match op {
        WriteOp::CreateSession(r) => (
            &s.create,
            vec![
                Box::new(r.id.clone()),
                Box::new(r.game_id.clone()),
                Box::new(r.created_at_ms),
                Box::new(r.status.as_str()),
                Box::new(r.config.clone()),
                Box::new(r.owner.clone()),
                Box::new(r.epoch),
            ],
        ),
        WriteOp::SetStatus { session_id, status } => {
            (&s.status, vec![Box::new(session_id.clone()), Box::new(status.as_str())])
        }
        WriteOp::Events { session_id, events } => (
            &s.events,
            vec![
                Box::new(session_id.clone()),
                Box::new(events.iter().map(|e| e.seq as i64).collect::<Vec<i64>>()),
                Box::new(events.iter().map(|e| e.event_id.clone()).collect::<Vec<String>>()),
                Box::new(events.iter().map(|e| e.transition_revision as i64).collect::<Vec<i64>>()),
                Box::new(events.iter().map(|e| e.body.clone()).collect::<Vec<String>>()),
                Box::new(epoch),
            ],
        ),
        WriteOp::Answer(a) => (
            &s.answer,
            vec![
                Box::new(a.session_id.clone()),
                Box::new(a.kind.as_str()),
                Box::new(escape_nul(&a.key)),
                Box::new(i32::from(a.status)),
                Box::new(a.request.clone()),
                Box::new(a.body.clone()),
            ],
        ),
        WriteOp::Credential(c) => (
            &s.credential,
            vec![
                Box::new(c.token_hash.clone()),
                Box::new(c.session_id.clone()),
                Box::new(c.role.as_str()),
                Box::new(c.seat.clone()),
                Box::new(c.issued_at_ms),
            ],
        ),
        WriteOp::RevokeSeatCredentials { session_id, seat } => (
            &s.revoke_seat,
            vec![
                Box::new(session_id.clone()),
                Box::new(crate::storage::CredentialRole::Seat.as_str()),
                Box::new(seat.clone()),
            ],
        ),
        WriteOp::SessionState { session_id, key, value } => {
            (&s.state, vec![Box::new(session_id.clone()), Box::new(key.as_str()), Box::new(value.clone())])
        }
        WriteOp::Accepted { session_id, identities } => (
            &s.accepted,
            vec![
                Box::new(session_id.clone()),
                Box::new(identities.iter().map(|i| escape_nul(&i.participant_id)).collect::<Vec<String>>()),
                Box::new(identities.iter().map(|i| escape_nul(&i.submission_id)).collect::<Vec<String>>()),
                Box::new(identities.iter().map(|i| i.transition_revision as i64).collect::<Vec<i64>>()),
            ],
        ),
        WriteOp::Checkpoint(c) => (
            &s.checkpoint,
            vec![
                Box::new(c.session_id.clone()),
                Box::new(c.transition_revision as i64),
                Box::new(c.events as i64),
                Box::new(c.transcript_prefix.clone()),
                Box::new(c.body.clone()),
            ],
        ),
    }
}

/// One batch under its savepoint: the fence, then its writes, pipelined.
async fn apply_batch(client: &Client, s: &Statements, batch: &WriteBatch) -> Result<(), StoreError> {
    client.batch_execute("SAVEPOINT batch").await.map_err(|e| StoreError::Backend(describe(&e)))?;
    let epoch = batch.fence.as_ref().map_or(0, |f| f.epoch);
    let mut calls: Vec<(&Statement, Params)> = Vec::with_capacity(batch.ops.len() + 1);
    if let Some(fence) = &batch.fence {
        calls.push((
            &s.fence,
            vec![Box::new(fence.session_id.clone()), Box::new(fence.owner.clone()), Box::new(fence.epoch)],
        ));
    }
    calls.extend(batch.ops.iter().map(|op| statement(s, op, epoch)));
    let results = join_all(calls.iter().map(|(statement, params)| {
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect();
        async move { client.execute(*statement, &params).await }
    }))
    .await;
    match results.into_iter().find_map(Result::err) {
        None => client.batch_execute("RELEASE SAVEPOINT batch").await.map_err(|e| StoreError::Backend(describe(&e))),
        Some(e) => {
            let error = classify(&e, batch);
            client
                .batch_execute("ROLLBACK TO SAVEPOINT batch; RELEASE SAVEPOINT batch")
                .await
                .map_err(|e| StoreError::Backend(describe(&e)))?;
            Err(error)
        }
    }
}

/// The writer may be dropped inside an async runtime (a test, a host that
/// never started its writer thread): its own runtime must not block there.
impl Drop for PgWriter {
    fn drop(&mut self) {
        self.connection = None;
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl StoreWriter for PgWriter {
    fn apply_group(&mut self, batches: &[WriteBatch]) -> Vec<Result<(), StoreError>> {
        if let Err(e) = self.connected() {
            return batches.iter().map(|_| Err(e.clone())).collect();
        }
        let (client, statements) = self.connection.as_ref().expect("connected above");
        let outcome = self.runtime().block_on(async {
            client.batch_execute("BEGIN").await.map_err(|e| StoreError::Backend(describe(&e)))?;
            let mut results = Vec::with_capacity(batches.len());
            for batch in batches {
                let result = apply_batch(client, statements, batch).await;
                // A savepoint that cannot be rolled back leaves the whole
                // transaction unusable: fail the group.
                if let Err(StoreError::Backend(message)) = &result
                    && client.is_closed()
                {
                    return Err(StoreError::Backend(message.clone()));
                }
                results.push(result);
            }
            match client.batch_execute("COMMIT").await {
                Ok(()) => Ok(results),
                Err(e) => Err(StoreError::Backend(format!("the group commit failed: {}", describe(&e)))),
            }
        });
        match outcome {
            Ok(results) => results,
            Err(e) => {
                // The connection may be in an unknown state: make it anew.
                if let Some((client, _)) = &self.connection {
                    let _rollback = self.runtime().block_on(client.batch_execute("ROLLBACK"));
                }
                self.connection = None;
                batches.iter().map(|_| Err(e.clone())).collect()
            }
        }
    }
}
