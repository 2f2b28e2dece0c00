//! Every seat of one session on an [`EpisodeHost`], opened as ordinary
//! handles: what a benchmark episode and an arena match both need.
//!
//! [`create_seats`] creates the session (the first seat is the creator)
//! and attaches the others with their tokens; when a fixed session id is
//! taken already (a run stopped between creating a session and recording
//! it), it takes the session over with reissued tokens instead.
//! [`attach_seats`] attaches every seat at the durable head (adopting the
//! head of a session that was finalized before the run recorded it) and
//! reports the submission ids each seat already has in the transcript, so
//! drivers can move past them. In a signed session (RFC-010) each seat's
//! handle is given the key it signs with ([`SignedSeat`]).

use std::collections::BTreeMap;

use gaos_json::{Map, Value, obj};
use gaos_session::signing::SeatSigningKey;
use gaos_session::{AttachRequest, EpisodeHost, ErrorCode, SessionHandle, SessionPolicy};

use crate::error::FactoryError;

/// A seat of a session and the key it signs with (`None`: unsigned).
pub(crate) type SignedSeat = (String, Option<SeatSigningKey>);

/// Every seat of `seats` with the key it signs with: its own (`own`), else
/// one derived from the first own key in seat order for `{context}/{seat}`
/// ([`SeatSigningKey::derive`]), so a resume, or a take-over of a session
/// that outlived its run, signs with the same keys (and whoever holds that
/// own key holds them too). No own key at all: every seat unsigned.
pub(crate) fn signed_seats(
    seats: &[String],
    own: impl Fn(&str) -> Option<SeatSigningKey>,
    context: &str,
) -> Vec<SignedSeat> {
    let root = seats.iter().find_map(|seat| own(seat));
    seats
        .iter()
        .map(|seat| {
            let key = own(seat).or_else(|| root.as_ref().map(|root| root.derive(&format!("{context}/{seat}"))));
            (seat.clone(), key)
        })
        .collect()
}

/// Make `request` (a create) signed when `seats` sign: `seatKeys`, every
/// seat's roster entry (signing tier 1), and `signaturePolicy`.
pub(crate) fn add_signing(request: &mut Map, seats: &[SignedSeat]) {
    let roster: Vec<Value> = seats.iter().filter_map(|(seat, key)| Some(key.as_ref()?.seat_key(seat, 1))).collect();
    if roster.is_empty() {
        return;
    }
    request.insert("seatKeys".into(), Value::Array(roster));
    request.insert("signaturePolicy".into(), gaos_kernel::signing::signature_policy_value());
}

/// A session's seats, open.
pub(crate) struct OpenSeats {
    /// The session.
    pub session_id: String,
    /// Every seat's token (what a resume needs to attach again).
    pub tokens: BTreeMap<String, String>,
    /// One handle per seat, in the order asked for.
    pub handles: Vec<Box<dyn SessionHandle>>,
    /// The submission ids each seat already has (empty for a new session).
    pub accepted: Vec<Vec<String>>,
    /// The first attach receipt's digest, when the host issued one.
    pub receipt_digest: Option<String>,
}

impl OpenSeats {
    /// `{sessionId, seats: {seat: token}}`, what [`attach_seats`] takes back.
    pub fn attachment(&self) -> Value {
        let seats: Map = self.tokens.iter().map(|(seat, token)| (seat.clone(), Value::from(token.as_str()))).collect();
        obj! { "sessionId" => self.session_id.as_str(), "seats" => seats }.into()
    }
}

/// The session id and seat tokens of an attachment ([`OpenSeats::attachment`]).
pub(crate) fn read_attachment(attachment: &Value) -> Result<(String, BTreeMap<String, String>), FactoryError> {
    let session_id = attachment
        .get("sessionId")
        .and_then(Value::as_str)
        .ok_or_else(|| FactoryError("the in-progress attachment has no sessionId".into()))?;
    let tokens = attachment
        .get("seats")
        .and_then(Value::as_object)
        .ok_or_else(|| FactoryError("the in-progress attachment has no seat tokens".into()))?
        .iter()
        .filter_map(|(seat, token)| Some((seat.clone(), token.as_str()?.to_owned())))
        .collect();
    Ok((session_id.to_owned(), tokens))
}

/// Submission ids of `seat`'s accepted commands in a transcript (JSONL: a
/// header line, then one event per line; its `intent-accepted` events).
pub(crate) fn accepted_submissions(transcript: &str, seat: &str) -> Result<Vec<String>, String> {
    let mut ids = Vec::new();
    for (number, line) in transcript.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let event = gaos_json::parse(line).map_err(|e| format!("transcript line {} is not JSON: {e}", number + 1))?;
        if event.get("kind").and_then(Value::as_str) == Some("intent-accepted")
            && event.get("participantId").and_then(Value::as_str) == Some(seat)
        {
            ids.push(event.get("submissionId").and_then(Value::as_str).unwrap_or_default().to_owned());
        }
    }
    Ok(ids)
}

/// Create the session of `request` under `policy` and attach `seats[1..]`
/// (attach request ids `<label>:<seat>`), each handle signing with its
/// seat's key. `fixed_id` is the session id the request asks for, if any:
/// when the host already has it, the session is taken over
/// ([`attach_seats`] with reissued tokens).
pub(crate) async fn create_seats(
    host: &dyn EpisodeHost,
    request: &Value,
    policy: &SessionPolicy,
    seats: &[SignedSeat],
    fixed_id: Option<&str>,
    label: &str,
) -> Result<OpenSeats, FactoryError> {
    let creator_key = seats.first().and_then(|(_, key)| key.clone());
    let created = match host.create(request, policy, creator_key).await {
        Ok(created) => created,
        Err(e) if e.code() == Some(&ErrorCode::SessionExists) => {
            let id = fixed_id.unwrap_or_default();
            let mut tokens = BTreeMap::new();
            for (seat, _) in seats {
                tokens.insert(seat.clone(), host.reissue_seat_token(id, seat).await?);
            }
            let transcript = host.transcript(id).await?;
            return attach_seats(host, id, &tokens, &transcript, policy, seats, label).await;
        }
        Err(e) => return Err(e.into()),
    };
    let mut handles = vec![created.handle];
    for (seat, key) in seats.iter().skip(1) {
        let token = created.seat_tokens.get(seat).ok_or_else(|| {
            FactoryError(format!("the host issued no token for seat {seat:?} of {}", created.session_id))
        })?;
        let request =
            AttachRequest { participant_id: Some(seat.clone()), ..AttachRequest::new(format!("{label}:{seat}")) };
        handles.push(host.attach(&created.session_id, token, &request, policy, key.clone()).await?);
    }
    Ok(OpenSeats {
        session_id: created.session_id,
        tokens: created.seat_tokens,
        accepted: vec![Vec::new(); handles.len()],
        handles,
        receipt_digest: None,
    })
}

/// Attach every seat of `session_id`, whose transcript is `transcript`, at
/// its durable head (attach request ids `<label>-resume:<seat>:<events>`,
/// so a repeated resume at the same head gets the same answer), each
/// handle signing with its seat's key; a finalized session's head is
/// adopted (it takes no more moves).
pub(crate) async fn attach_seats(
    host: &dyn EpisodeHost,
    session_id: &str,
    tokens: &BTreeMap<String, String>,
    transcript: &str,
    policy: &SessionPolicy,
    seats: &[SignedSeat],
    label: &str,
) -> Result<OpenSeats, FactoryError> {
    let events = transcript.lines().count();
    let mut open = OpenSeats {
        session_id: session_id.to_owned(),
        tokens: tokens.clone(),
        handles: Vec::with_capacity(seats.len()),
        accepted: Vec::with_capacity(seats.len()),
        receipt_digest: None,
    };
    for (seat, key) in seats {
        let token = tokens
            .get(seat)
            .ok_or_else(|| FactoryError(format!("the checkpoint holds no token for seat {seat:?} of {session_id}")))?;
        let request = AttachRequest {
            participant_id: Some(seat.clone()),
            ..AttachRequest::new(format!("{label}-resume:{seat}:{events}"))
        };
        let handle = match host.attach(session_id, token, &request, policy, key.clone()).await {
            Ok(handle) => handle,
            // Finalized before the run recorded it: adopt the head; the
            // finalize is repeated and answered with the stored result.
            Err(e) if e.code() == Some(&ErrorCode::SessionFinalized) => {
                host.adopt(session_id, seat, token, policy).await?
            }
            Err(e) => return Err(e.into()),
        };
        if open.receipt_digest.is_none() {
            open.receipt_digest = handle.receipt().map(|r| r.receipt_digest);
        }
        open.accepted.push(accepted_submissions(transcript, seat).map_err(FactoryError)?);
        open.handles.push(handle);
    }
    Ok(open)
}
