//! [`FactoryError`] (defined in the crate's `error` module, since arenas
//! open sessions the same way), and [`BenchmarkError`] (defined with the
//! manifest in gaos-session, so a host can bind official scores without the
//! runner).

pub use crate::error::FactoryError;
pub use gaos_session::benchmark::BenchmarkError;
