//! The hand-written HTTP/SSE test client for end-to-end tests against a real
//! `gaos serve` ([`crate::server::TestServer`]): raw requests on `std::net`
//! (so tests can send malformed bytes and see crashes as I/O errors), an SSE
//! reader, and session helpers that assert the wire shapes as they go.
//! Deliberately independent of `gaos-client`: the tests check the host's
//! bytes, not the client's reading of them.

mod client;
mod session;
mod sse;

pub use client::*;
pub use session::*;
pub use sse::*;
