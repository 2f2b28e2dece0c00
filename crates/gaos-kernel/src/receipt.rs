//! What an ingest answers ([`IngestReceipt`]): a leaf module, so the
//! kernel and the checkpoint document (which stores receipts) both use it
//! without depending on each other.

use serde::{Deserialize, Serialize};

/// Whether an ingest was taken (`accepted`) or answered from the receipt of
/// an earlier identical submission (`duplicate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReceiptStatus {
    Accepted,
    Duplicate,
}

impl ReceiptStatus {
    /// `accepted` or `duplicate`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReceiptStatus::Accepted => "accepted",
            ReceiptStatus::Duplicate => "duplicate",
        }
    }
}

/// `IngestReceipt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IngestReceipt {
    /// `"accepted"` or `"duplicate"`.
    pub status: ReceiptStatus,
    pub participant_id: String,
    pub submission_id: String,
    pub cursor: u64,
    pub tick: u64,
    pub submitted_participants: Vec<String>,
    pub awaiting_participants: Vec<String>,
    pub resolved: bool,
}

impl IngestReceipt {
    pub fn is_duplicate(&self) -> bool {
        self.status == ReceiptStatus::Duplicate
    }
}
