//! The timeout audit rules (kernel spec §4.10), checked on a transcript by
//! rehydration and by finalization.

use crate::event::{EventBody, ResolutionCause, SessionEvent};

/// Check the timeout audit rules (kernel spec §4.10) over an event list:
/// every timeout is immediately followed, in the same transition, by its
/// rejection or its timeout resolution, and every timeout resolution directly
/// follows its timeout.
pub fn validate_timeout_audit(events: &[SessionEvent], seats: &[String]) -> Result<(), String> {
    for (i, event) in events.iter().enumerate() {
        match &event.body {
            EventBody::Timeout { tick, window_ref, participant_id, timeout_policy_ref, .. } => {
                if let Some(seat) = participant_id
                    && !seats.contains(seat)
                {
                    return Err(format!("timeout event {i} names {seat:?}, not a declared seat"));
                }
                if timeout_policy_ref.is_none() && tick != window_ref {
                    return Err(format!("timeout event {i}: tick {tick} differs from windowRef {window_ref}"));
                }
                let Some(next) = events.get(i + 1).filter(|n| n.transition_revision == event.transition_revision)
                else {
                    return Err(format!("timeout event {i} is not followed by its resolution or rejection"));
                };
                match &next.body {
                    EventBody::Rejection { tick: rt, .. } if rt == window_ref => {}
                    EventBody::Resolution {
                        tick: rt,
                        cursor,
                        cause: ResolutionCause::Timeout,
                        inputs,
                        system_input,
                        ..
                    } if rt == window_ref && cursor == window_ref => {
                        let system = system_input
                            .as_deref()
                            .or_else(|| inputs.iter().rev().find(|input| input.submission_id.is_none()))
                            .ok_or_else(|| format!("timeout resolution {} has no system input", i + 1))?;
                        if system.participant_id != *participant_id {
                            return Err(format!(
                                "timeout resolution {} does not match its timeout's participant",
                                i + 1
                            ));
                        }
                        match (participant_id, &system.action.seat) {
                            (Some(seat), Some(action_seat)) if action_seat != seat => {
                                return Err(format!("timeout resolution {} acts for another seat", i + 1));
                            }
                            (None, Some(_)) => {
                                return Err(format!("window-wide timeout resolution {} carries a seat", i + 1));
                            }
                            _ => {}
                        }
                    }
                    _ => {
                        return Err(format!("timeout event {i} is not followed by its resolution or rejection"));
                    }
                }
            }
            EventBody::Resolution { cause: ResolutionCause::Timeout, .. } => {
                let follows = i > 0
                    && matches!(events[i - 1].body, EventBody::Timeout { .. })
                    && events[i - 1].transition_revision == event.transition_revision;
                if !follows {
                    return Err(format!("timeout resolution {i} does not directly follow its timeout event"));
                }
            }
            _ => {}
        }
    }
    Ok(())
}
