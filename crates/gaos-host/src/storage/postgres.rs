//! The PostgreSQL store: the second implementation of the storage seam,
//! for many hosts on one database (`gaos serve --store postgres://…`).
//!
//! It keeps everything the SQLite store keeps, in `gaos_*` tables created
//! by versioned migrations at start (`schema.rs`); the writer thread's
//! group commit is one transaction with every fenced batch checked against
//! its session's owner row under a share lock (`writer.rs`); reads go to a
//! few reader threads (`reader.rs`). Cluster membership and ownership
//! claims live in `crate::cluster` and use their own pool.

mod reader;
mod schema;
mod writer;

pub use reader::PgReader;
pub use schema::schema_version;
pub use writer::PgWriter;

use tokio_postgres::{Client, NoTls};

use super::store::StoreError;

/// The text of a PostgreSQL error with its causes (tokio-postgres puts the
/// server's message in the source).
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                text.push_str(": ");
                text.push_str(&cause.to_string());
                source = cause.source();
            }
            text
        }
    }
}

/// PostgreSQL's `TEXT` cannot hold NUL, which the keys of stored answers
/// (seat, NUL, submission id) and submission ids may: such columns hold
/// this reversible escape (`\\` for a backslash, `\0` for NUL).
pub(crate) fn escape_nul(text: &str) -> String {
    if !text.contains(['\0', '\\']) {
        return text.to_owned();
    }
    text.replace('\\', "\\\\").replace('\0', "\\0")
}

/// The text [`escape_nul`] was given.
pub(crate) fn unescape_nul(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => out.push('\0'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// A connection to `url` whose driver runs on the current runtime.
pub(crate) async fn connect(url: &str) -> Result<Client, StoreError> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|e| StoreError::Backend(format!("cannot connect to {}: {}", redact(url), describe(&e))))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(error = %describe(&e), "a PostgreSQL connection ended");
        }
    });
    Ok(client)
}

/// `url` without its password, for messages and logs.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// Open the store at `url`: migrate the schema (one host at a time), then
/// the writer and the readers.
pub async fn open(url: &str) -> Result<(PgWriter, PgReader), StoreError> {
    let mut client = connect(url).await?;
    schema::migrate(&mut client).await?;
    let url = url.to_owned();
    // The writer and readers drive runtimes of their own: build them off
    // this runtime's threads.
    tokio::task::spawn_blocking(move || Ok((PgWriter::new(&url)?, PgReader::new(&url)?)))
        .await
        .map_err(|e| StoreError::Backend(format!("opening the PostgreSQL store failed: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn nul_and_backslash_survive_the_escape() {
        for text in ["a\0a:0", "plain", "back\\slash\0", "\\0", "\0\0", ""] {
            let escaped = super::escape_nul(text);
            assert!(!escaped.contains('\0'), "{escaped:?}");
            assert_eq!(super::unescape_nul(&escaped), text);
        }
    }

    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(redact("postgres://gaos:secret@127.0.0.1:5432/gaos"), "postgres://gaos:***@127.0.0.1:5432/gaos");
        assert_eq!(redact("postgres://gaos@127.0.0.1:5432/gaos"), "postgres://gaos@127.0.0.1:5432/gaos");
        assert_eq!(redact("host=/tmp user=gaos"), "host=/tmp user=gaos");
    }
}
