//! Who is calling: bearer tokens resolved to a caller (in a cluster, a
//! token another host issued is found in the store), and what each route
//! requires of the caller.

use std::sync::Arc;

use super::{Host, blocking};
use crate::auth::{Caller, token_hash};
use crate::error::HostError;

impl Host {
    /// Resolve a bearer token to a caller.
    pub fn caller(&self, token: Option<&str>) -> Result<Caller, HostError> {
        self.inner.credentials.resolve(token)
    }

    /// [`Host::caller`] for synchronous callers (the `/mcp` mount's and the
    /// web pages' token checks): in a cluster an unknown token is looked up
    /// in the store, blocking the calling thread for one read.
    pub fn caller_blocking(&self, token: Option<&str>) -> Result<Caller, HostError> {
        match self.caller(token) {
            Err(refused) if self.cluster().is_some() && token.is_some() => {
                let hash = token_hash(token.expect("checked"));
                match self.inner.reader.load_credential(&hash) {
                    Ok(Some(record)) => {
                        self.inner.credentials.insert(record);
                        self.caller(token)
                    }
                    Ok(None) => Err(refused),
                    Err(e) => Err(HostError::unavailable(e.to_string())),
                }
            }
            other => other,
        }
    }

    /// [`Host::caller`], and in a cluster a token this host does not know
    /// yet is looked up in the store (another host issued it).
    pub async fn resolve_caller(&self, token: Option<&str>) -> Result<Caller, HostError> {
        match self.caller(token) {
            Err(refused) if self.cluster().is_some() && token.is_some() => {
                let hash = token_hash(token.expect("checked"));
                let reader = Arc::clone(&self.inner.reader);
                match blocking(move || reader.load_credential(&hash)).await? {
                    Some(record) => {
                        self.inner.credentials.insert(record);
                        self.caller(token)
                    }
                    None => Err(refused),
                }
            }
            other => other,
        }
    }

    pub(super) fn require_operator(caller: &Caller) -> Result<(), HostError> {
        match caller {
            Caller::Operator => Ok(()),
            _ => Err(HostError::forbidden("this route needs the operator token")),
        }
    }

    pub(super) fn require_seat<'a>(caller: &'a Caller, id: &str) -> Result<&'a str, HostError> {
        match caller {
            Caller::Seat { session_id, seat } if session_id == id => Ok(seat),
            Caller::Seat { .. } | Caller::Spectator { .. } if !caller.may_read(id) => {
                Err(HostError::forbidden("this token belongs to another session"))
            }
            Caller::Spectator { .. } => Err(HostError::forbidden("the spectator token can only read the public view")),
            Caller::Operator => Err(HostError::forbidden("the operator does not act for a seat; use the seat's token")),
            Caller::Seat { .. } => Err(HostError::forbidden("this token belongs to another session")),
        }
    }

    pub(super) fn require_reader(caller: &Caller, id: &str) -> Result<(), HostError> {
        if caller.may_read(id) { Ok(()) } else { Err(HostError::forbidden("this token belongs to another session")) }
    }
}
