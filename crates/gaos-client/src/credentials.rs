//! [`CredentialSource`]: where a remote handle gets a new bearer token when
//! the host refuses the one it has (HTTP 401: the seat token was rotated or
//! expired). The handle asks once per refused call and resends; a second
//! refusal is the caller's error, with the host's message and a note that
//! the refreshed credential was refused too.

use std::future::Future;

use gaos_session::BoxFuture;

/// Hands out the seat's current bearer token on demand (a token file a
/// supervisor rewrites, a secrets service, an operator reissuing the seat
/// token). Any `Fn() -> impl Future<Output = Result<String, String>>` is one.
pub trait CredentialSource: Send + Sync {
    /// The token to use from now on, or why there is none.
    fn refresh(&self) -> BoxFuture<'_, Result<String, String>>;
}

impl<F, Fut> CredentialSource for F
where
    F: Fn() -> Fut + Send + Sync,
    Fut: Future<Output = Result<String, String>> + Send + 'static,
{
    fn refresh(&self) -> BoxFuture<'_, Result<String, String>> {
        Box::pin(self())
    }
}
