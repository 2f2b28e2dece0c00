//! [`FactoryError`], and [`BenchmarkError`] (defined with the manifest in
//! gaos-session, so a host can bind official scores without the runner).

use thiserror::Error;

pub use gaos_session::benchmark::BenchmarkError;

/// Why a [`crate::benchmark::SessionFactory`] could not create or attach an
/// episode's sessions.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct FactoryError(pub String);

impl From<crate::error::SessionError> for FactoryError {
    fn from(error: crate::error::SessionError) -> Self {
        FactoryError(error.to_string())
    }
}

impl From<crate::error::DriverError> for FactoryError {
    fn from(error: crate::error::DriverError) -> Self {
        FactoryError(error.to_string())
    }
}

impl From<String> for FactoryError {
    fn from(message: String) -> Self {
        FactoryError(message)
    }
}
