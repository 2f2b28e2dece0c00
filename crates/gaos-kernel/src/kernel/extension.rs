//! Extension records: non-gameplay lanes that never reach the reducer.

use gaos_json::{Value, canonical_json};

use super::SessionKernel;
use super::commit::Patch;
use super::prepared::{Prepared, PreparedResult};
use crate::error::KernelError;
use crate::event::EventBody;
use crate::reducer::TickReducer;

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    /// `prepareExtension(lane, record)` with the arguments as a caller passed
    /// them: a lane that is not a string is a TypeError like an empty one.
    pub fn prepare_extension_value(&self, lane: &Value, record: &Value) -> Result<Prepared<R::State>, KernelError> {
        match lane.as_str() {
            Some(lane) => self.prepare_extension(lane, record),
            None => Err(KernelError::type_error("extension lane must be a non-empty string")),
        }
    }

    /// `prepareExtension(lane, record)`: a non-gameplay record; never reaches
    /// the reducer, views or digest.
    pub fn prepare_extension(&self, lane: &str, record: &Value) -> Result<Prepared<R::State>, KernelError> {
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        if lane.is_empty() {
            return Err(KernelError::type_error("extension lane must be a non-empty string"));
        }
        let Some(map) = record.as_object() else {
            return Err(KernelError::type_error("extension record must be a JSON object"));
        };
        gaos_json::check_value(record)
            .map_err(|e| KernelError::type_error(format!("extension record must be plain JSON: {e}")))?;
        let bytes = canonical_json(record).len() as u64;
        if bytes > self.limits.max_extension_bytes {
            return Err(KernelError::range_error(format!(
                "extension record is {bytes} bytes, over maxExtensionBytes {}",
                self.limits.max_extension_bytes
            )));
        }
        let next = self.live.transition_revision + 1;
        let events = self.finish_events(
            next,
            vec![EventBody::Extension { tick: self.live.tick, lane: lane.into(), record: map.clone() }],
        )?;
        Ok(self.prepared(next, events, Vec::new(), PreparedResult::Extension, Patch::Extension))
    }
}
