//! Secrets at rest (issue 15, item 4): after a session with leases, attach
//! retries, a token rotation, an idempotent create and its retries (before
//! and after a restart), no issued token is anywhere in the data
//! directory's bytes (database, WAL, shared memory, any file), in any of its
//! forms (the token, its hex secret in either case, the raw secret bytes,
//! their base64); and the directory is 0700, its files 0600.

use std::path::{Path, PathBuf};

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read the data directory").map_while(Result::ok) {
        let path = entry.path();
        if path.is_dir() { out.extend(files(&path)) } else { out.push(path) }
    }
    out
}

fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(alphabet[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// The byte strings a token could be stored as.
fn forms(token: &str) -> Vec<Vec<u8>> {
    let secret = token.rsplit('_').next().expect("a prefixed token");
    assert_eq!(secret.len(), 64, "tokens carry 32 secret bytes in hex: {token}");
    let raw: Vec<u8> = (0..32).map(|i| u8::from_str_radix(&secret[2 * i..2 * i + 2], 16).expect("hex")).collect();
    let standard = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let url = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    vec![
        token.as_bytes().to_vec(),
        secret.as_bytes().to_vec(),
        secret.to_uppercase().into_bytes(),
        raw.clone(),
        base64(&raw, standard).into_bytes(),
        base64(&raw, url).into_bytes(),
    ]
}

/// Assert no file under `dir` holds any form of any token; the operator
/// token is allowed in its own file only.
#[track_caller]
fn assert_no_token_on_disk(dir: &Path, tokens: &[String], operator: &str, when: &str) {
    let all = files(dir);
    assert!(all.iter().any(|p| p.ends_with("gaos.sqlite3")), "{when}: the database is there: {all:?}");
    for path in &all {
        let bytes = std::fs::read(path).expect("read a data file");
        let own_file = path.ends_with("operator-token");
        for token in tokens.iter().map(String::as_str).chain((!own_file).then_some(operator)) {
            for form in forms(token) {
                assert!(
                    !bytes.windows(form.len()).any(|w| w == form.as_slice()),
                    "{when}: {} holds a form of the token {}…",
                    path.display(),
                    &token[..token.len().min(16)]
                );
            }
        }
    }
}

#[cfg(unix)]
#[track_caller]
fn assert_private(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(dir), 0o700, "the data directory is owner-only");
    for path in files(dir) {
        assert_eq!(mode(&path), 0o600, "{} is owner-only", path.display());
    }
    for name in ["gaos.sqlite3", "gaos.sqlite3-wal", "gaos.sqlite3-shm", "host-key", "lock", "operator-token"] {
        assert!(dir.join(name).exists(), "{name} exists (so its mode was checked)");
    }
}

fn lease_token(answer: &Value) -> String {
    answer["extensions"]["gaos.host.lease"]["token"].as_str().expect("a lease token").to_owned()
}

#[test]
fn no_issued_token_is_ever_on_disk_and_the_files_are_owner_only() {
    let mut server = TestServer::start(GAOS);
    let (base, op) = (server.base_url.clone(), server.operator_token.clone());
    let mut tokens: Vec<String> = Vec::new();

    // An idempotent create, retried.
    let body = json!({"game": "conformance/hilo", "seed": 4, "requestId": "create-1", "policy": receipts_policy(), "lease": {}});
    let created = post(&base, "/v1/sessions", Some(&op), &body);
    assert_eq!(created.status, 201, "{}", created.text());
    let retried = post(&base, "/v1/sessions", Some(&op), &body);
    assert_eq!((retried.status, retried.text()), (201, created.text()), "an exact create retry is byte-identical");
    let answer = created.json();
    let id = answer["sessionId"].as_str().expect("id").to_owned();
    let credentials = &answer["extensions"]["gaos.host.credentials"];
    let (alice, bob) = (
        credentials["seats"]["alice"].as_str().expect("alice").to_owned(),
        credentials["seats"]["bob"].as_str().expect("bob").to_owned(),
    );
    tokens.extend([alice.clone(), bob.clone(), credentials["spectator"].as_str().expect("spectator").to_owned()]);
    tokens.push(lease_token(&answer));

    // bob attaches lease-aware (a fresh claim and lease token), retries it.
    let attach_body = json!({"requestId": "bob-1", "lease": {"durationMs": 60_000}});
    let path = format!("/v1/sessions/{id}/attach");
    let attached = post(&base, &path, Some(&bob), &attach_body);
    assert_eq!(attached.status, 200, "{}", attached.text());
    let again = post(&base, &path, Some(&bob), &attach_body);
    assert_eq!(again.text(), attached.text(), "an exact attach retry is byte-identical, lease token included");
    let bob_lease = lease_token(&attached.json());
    tokens.push(bob_lease.clone());

    // After a crash and restart both retries still answer byte for byte
    // (the tokens are re-derived, not read back).
    let dir = server.data_dir().to_path_buf();
    server.kill();
    assert_no_token_on_disk(&dir, &tokens, &op, "after a kill");
    server.restart();
    let base = server.base_url.clone();
    let retried = post(&base, "/v1/sessions", Some(&op), &body);
    assert_eq!((retried.status, retried.text()), (201, created.text()), "the create retry after a restart");
    let again = post(&base, &path, Some(&bob), &attach_body);
    assert_eq!(again.text(), attached.text(), "the attach retry after a restart");

    // Both play a round; bob under his lease.
    let tick = get(&base, &format!("/v1/sessions/{id}/tick"), Some(&alice)).json();
    let moved = post(
        &base,
        &format!("/v1/sessions/{id}/actions"),
        Some(&alice),
        &submission(&tick, "alice", "a1", json!({"card": 0})),
    );
    assert!(moved.is_success(), "{}", moved.text());
    let headers = [
        ("Authorization", format!("Bearer {bob}")),
        ("Gaos-Lease", bob_lease.clone()),
        ("Content-Type", "application/json".to_owned()),
    ];
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let bob_move = submission(&tick, "bob", "b1", json!({"card": 0})).to_string();
    let moved = send(&base, "POST", &format!("/v1/sessions/{id}/actions"), &headers, Some(bob_move.as_bytes()))
        .expect("bob acts");
    assert!(moved.is_success(), "{}", moved.text());

    // The operator rotates alice's token.
    let rotated = post(&base, &format!("/v1/sessions/{id}/seats/alice/token"), Some(&op), &json!({}));
    assert_eq!(rotated.status, 200, "{}", rotated.text());
    tokens.push(rotated.json()["token"].as_str().expect("the new token").to_owned());

    assert_no_token_on_disk(&dir, &tokens, &op, "while serving");
    #[cfg(unix)]
    assert_private(&dir);

    server.kill();
    assert_no_token_on_disk(&dir, &tokens, &op, "after a second kill");
}

#[test]
fn base64_forms_are_the_usual_encodings() {
    let standard = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    assert_eq!(base64(b"foobar", standard), "Zm9vYmFy");
    assert_eq!(base64(b"fo", standard), "Zm8");
    assert_eq!(base64(&[0xfb, 0xff], standard), "+/8");
}
