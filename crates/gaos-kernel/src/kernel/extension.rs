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
    /// them: a lane that is not a string is refused like an empty one, at the
    /// same place in the check order (see [`Self::prepare_extension`]).
    pub fn prepare_extension_value(&self, lane: &Value, record: &Value) -> Result<Prepared<R::State>, KernelError> {
        self.prepare_extension_checked(lane.as_str(), record)
    }

    /// `prepareExtension(lane, record)`: a non-gameplay record; never reaches
    /// the reducer, views or digest.
    ///
    /// Check order (kernel spec §4.11; the first failing check decides):
    /// 1. the session has not ended (`advance`/`terminal`), so after the end
    ///    every extension is `terminal`, whatever its lane or record;
    /// 2. the lane is a non-empty string (TypeError, `argument`/`type`);
    /// 3. the record is a JSON object (TypeError);
    /// 4. the record is inside the value domain (TypeError: canonical JSON,
    ///    which measures it, refuses it first);
    /// 5. its canonical JSON is at most `maxExtensionBytes` UTF-8 bytes
    ///    (RangeError, `argument`/`range`).
    pub fn prepare_extension(&self, lane: &str, record: &Value) -> Result<Prepared<R::State>, KernelError> {
        self.prepare_extension_checked(Some(lane), record)
    }

    /// The one check order of both entry points; `lane` is `None` when the
    /// caller's lane is not a string.
    fn prepare_extension_checked(&self, lane: Option<&str>, record: &Value) -> Result<Prepared<R::State>, KernelError> {
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        let Some(lane) = lane.filter(|lane| !lane.is_empty()) else {
            return Err(KernelError::type_error("extension lane must be a non-empty string"));
        };
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
