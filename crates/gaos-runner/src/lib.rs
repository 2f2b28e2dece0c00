//! Hosted-session lifecycle (RFC-018) for GAOS hosts and clients.
//!
//! ```
//! use gaos_runner::receipts::{AttachReceipt, ReceiptBody, verify_receipt_chain};
//!
//! let first = AttachReceipt::new(ReceiptBody::new("session-1", "attach-1", 0, 4, "transcript-4", "state-4"))
//!     .expect("valid fields");
//! assert_eq!(first.receipt_digest, "e0c3af9753a30c96d9b55f1204417ff7b83f2bf8314c8bea8f89380f984c3da5");
//!
//! let second = AttachReceipt::new(ReceiptBody::next(&first, "attach-2", 6, "transcript-6", "state-6"))
//!     .expect("valid fields");
//! let chain = [first.to_value().expect("JSON"), second.to_value().expect("JSON")];
//! let check = verify_receipt_chain(&chain);
//! assert!(check.valid, "{:?}", check.problems);
//! ```
//!
//! Only the [`receipts`] module exists so far: the
//! `gaos.session-attach-receipt.v1` type, its digest and chain verification
//! (lifecycle spec §3). The rest of RFC-018 (`SessionHandle`, `run_session`,
//! drivers and benchmark orchestration) lands with its own issue.

pub mod receipts;
