//! The digest key of a session as the host has it: derived from the host
//! key (`host_key.rs`), with only a marker in the session's state, or, for a
//! session stored before, the key that session stored.

use super::{Host, store_error};
use crate::digest_key::DigestKey;
use crate::error::HostError;
use crate::storage::{Fence, SessionStateKey, WriteBatch, WriteOp};

/// What `session_state.digestKey` holds for a session whose digest key is
/// derived from the host key.
const DERIVED_DIGEST_KEY: &str = "derived:v1";

pub(super) fn digest_key_marker(session_id: &str) -> WriteOp {
    WriteOp::SessionState {
        session_id: session_id.to_owned(),
        key: SessionStateKey::DigestKey,
        value: DERIVED_DIGEST_KEY.to_owned(),
    }
}

impl Host {
    /// The session's digest key: derived from the host key (stored as the
    /// marker [`DERIVED_DIGEST_KEY`], never the key). A session from before
    /// (a stored hex key) keeps its key; one from before keys existed gets
    /// the derived one now, marked before any receipt uses it (its earlier
    /// receipts keep their unkeyed digests; receipts are opaque strings).
    pub(super) async fn stored_digest_key(
        &self,
        fence: &Fence,
        state: &[(SessionStateKey, String)],
    ) -> Result<DigestKey, HostError> {
        let id = fence.session_id.as_str();
        match state.iter().find(|(k, _)| *k == SessionStateKey::DigestKey) {
            Some((_, text)) if text == DERIVED_DIGEST_KEY => Ok(self.inner.options.host_key.digest_key(id)),
            Some((_, text)) => DigestKey::from_hex(text)
                .ok_or_else(|| HostError::internal(format!("the stored digest key of {id} is unreadable"))),
            None => {
                let batch = WriteBatch::fenced(vec![digest_key_marker(id)], fence.clone());
                self.inner.writer.write(batch).await.map_err(store_error)?;
                Ok(self.inner.options.host_key.digest_key(id))
            }
        }
    }
}
