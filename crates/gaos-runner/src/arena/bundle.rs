//! `gaos.arena-bundle.v1`: a tournament's files (docs/arena.md).
//!
//! ```text
//! manifest.json     the manifest (canonical JSON)
//! matches.jsonl     one MatchRecord line per match, in plan order
//! replays/<match>.gaos-replay.jsonl
//! logs/<match>.log  what agent processes wrote to stderr (matches that have any)
//! standings.json    records, ratings, intervals, pairwise results, method
//! ratings.svg       the ratings chart
//! report.html       standings, pairwise matrix, every match's replay one click away
//! digests.json      {schema, manifestDigest, game, contentDigest, files, packageDigest}
//! ```
//!
//! `contentDigest` is SHA-256 over the canonical JSON of `{schema, manifest,
//! manifestDigest, game, matches, standings}` (what the tournament says);
//! `files` holds every other file's SHA-256 and `packageDigest` is the
//! benchmark bundle's package digest over them (`path \0 utf8len \0
//! content` in path order), so a changed byte anywhere is found.

use std::collections::BTreeMap;
use std::path::Path;

use gaos_json::{Map, Value, canonical_json, canonical_sha256_hex, sha256_hex};

use crate::arena::error::ArenaError;
use crate::arena::manifest::ArenaManifest;
use crate::arena::result::MatchRecord;
use crate::benchmark::bundle::{BundleReadError, list_files, package_digest, write_bundle_dir};

/// The bundle schema id.
pub const ARENA_BUNDLE_SCHEMA: &str = "gaos.arena-bundle.v1";

/// The digests file (not covered by the package digest it holds).
pub const DIGESTS_FILE: &str = "digests.json";

/// Files every arena bundle holds besides replays and logs.
pub const ARENA_FILES: [&str; 6] =
    ["manifest.json", "matches.jsonl", "standings.json", "ratings.svg", "report.html", DIGESTS_FILE];

/// Most files an arena bundle may hold when read back.
pub const MAX_ARENA_FILES: usize = 2 * crate::arena::plan::MAX_MATCHES as usize + ARENA_FILES.len();

/// The game every match played: its id and, for a game module, the
/// SHA-256 of the module file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameIdentity {
    /// The game id.
    pub id: String,
    /// The module's SHA-256, when the adapter is a game module.
    pub adapter_sha256: Option<String>,
}

impl GameIdentity {
    /// `{id, adapterSha256?}`.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("id".into(), self.id.clone().into());
        if let Some(sha256) = &self.adapter_sha256 {
            map.insert("adapterSha256".into(), sha256.clone().into());
        }
        Value::Object(map)
    }

    fn from_value(value: &Value) -> Result<Self, String> {
        let id = value.get("id").and_then(Value::as_str).ok_or("game.id must be a string")?;
        let adapter_sha256 = match value.get("adapterSha256") {
            None => None,
            Some(v) => Some(v.as_str().ok_or("game.adapterSha256 must be a string")?.to_owned()),
        };
        Ok(GameIdentity { id: id.to_owned(), adapter_sha256 })
    }
}

/// A tournament bundle: what it says, and every file as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ArenaBundle {
    /// `manifest.json`.
    pub manifest: Value,
    /// `digests.json`'s `game`.
    pub game: GameIdentity,
    /// `matches.jsonl`, in file order.
    pub records: Vec<MatchRecord>,
    /// `standings.json`.
    pub standings: Value,
    /// `digests.json`.
    pub digests: Value,
    /// Every file by its path in the bundle.
    pub files: BTreeMap<String, String>,
}

/// `contentDigest` of what a bundle says.
pub fn content_digest(manifest: &Value, game: &GameIdentity, records: &[MatchRecord], standings: &Value) -> String {
    let mut content = Map::new();
    content.insert("schema".into(), ARENA_BUNDLE_SCHEMA.into());
    content.insert("manifest".into(), manifest.clone());
    content.insert("manifestDigest".into(), canonical_sha256_hex(manifest).into());
    content.insert("game".into(), game.to_value());
    content.insert("matches".into(), Value::Array(records.iter().map(MatchRecord::to_value).collect()));
    content.insert("standings".into(), standings.clone());
    canonical_sha256_hex(&Value::Object(content))
}

/// `digests.json`'s value for `files` (which must not hold it).
pub fn digests(
    manifest: &Value,
    game: &GameIdentity,
    records: &[MatchRecord],
    standings: &Value,
    files: &BTreeMap<String, String>,
) -> Value {
    let mut map = Map::new();
    map.insert("schema".into(), ARENA_BUNDLE_SCHEMA.into());
    map.insert("manifestDigest".into(), canonical_sha256_hex(manifest).into());
    map.insert("game".into(), game.to_value());
    map.insert("contentDigest".into(), content_digest(manifest, game, records, standings).into());
    let hashes: Map =
        files.iter().map(|(path, text)| (path.clone(), Value::from(sha256_hex(text.as_bytes())))).collect();
    map.insert("files".into(), Value::Object(hashes));
    map.insert("packageDigest".into(), package_digest(files).into());
    Value::Object(map)
}

/// Every file of a bundle: the data files from the records and standings,
/// the replays and logs (`replays/…`, `logs/…` paths), the presentation
/// files (`ratings.svg`, `report.html`), and `digests.json` over them all.
pub fn pack_arena(
    manifest: &ArenaManifest,
    game: &GameIdentity,
    records: &[MatchRecord],
    standings: &Value,
    attachments: BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, ArenaError> {
    let mut files = attachments;
    if let Some(path) = files.keys().find(|p| ARENA_FILES[..3].contains(&p.as_str()) || p.as_str() == DIGESTS_FILE) {
        return Err(ArenaError::Bundle(format!("{path} is written by the bundle itself")));
    }
    files.insert("manifest.json".into(), format!("{}\n", canonical_json(manifest.value())));
    let lines: String = records.iter().map(|r| format!("{}\n", canonical_json(&r.to_value()))).collect();
    files.insert("matches.jsonl".into(), lines);
    files.insert("standings.json".into(), format!("{}\n", canonical_json(standings)));
    let digests = digests(manifest.value(), game, records, standings, &files);
    files.insert(DIGESTS_FILE.into(), format!("{}\n", canonical_json(&digests)));
    Ok(files)
}

/// Write a bundle's files under `dir` (created; no file may exist).
pub fn write_arena_bundle(dir: &Path, files: &BTreeMap<String, String>) -> Result<(), ArenaError> {
    write_bundle_dir(dir, files).map_err(|e| ArenaError::Io(e.to_string()))
}

/// Read a bundle directory: regular files only (a link is refused), each
/// UTF-8; `manifest.json`, `matches.jsonl`, `standings.json` and
/// `digests.json` must parse. Whether the files agree with each other and
/// with their digests is [`crate::arena::verify_arena`]'s job.
pub fn read_arena_bundle(root: &Path) -> Result<ArenaBundle, ArenaError> {
    if !root.is_dir() {
        return Err(ArenaError::Io(format!("{} is not a directory", root.display())));
    }
    let paths = list_files(root).map_err(|e| match e {
        BundleReadError::Io(message) => ArenaError::Io(message),
        BundleReadError::Malformed(message) => ArenaError::Bundle(message),
    })?;
    if paths.len() > MAX_ARENA_FILES {
        return Err(ArenaError::Bundle(format!("more than {MAX_ARENA_FILES} files")));
    }
    let mut files = BTreeMap::new();
    for path in paths {
        let full = root.join(&path);
        let bytes = std::fs::read(&full).map_err(|e| ArenaError::Io(format!("cannot read {}: {e}", full.display())))?;
        let text = String::from_utf8(bytes).map_err(|_| ArenaError::Bundle(format!("{path} is not UTF-8")))?;
        files.insert(path, text);
    }
    let json = |path: &str| -> Result<Value, ArenaError> {
        let text = files.get(path).ok_or_else(|| ArenaError::Bundle(format!("the bundle has no {path}")))?;
        gaos_json::parse(text).map_err(|e| ArenaError::Bundle(format!("{path} is not JSON: {e}")))
    };
    let manifest = json("manifest.json")?;
    let standings = json("standings.json")?;
    let digests = json(DIGESTS_FILE)?;
    let game = digests
        .get("game")
        .ok_or("digests.json has no game".to_owned())
        .and_then(GameIdentity::from_value)
        .map_err(ArenaError::Bundle)?;
    let lines =
        files.get("matches.jsonl").ok_or_else(|| ArenaError::Bundle("the bundle has no matches.jsonl".into()))?;
    let mut records = Vec::new();
    for (number, line) in lines.lines().enumerate() {
        let at = |why: String| ArenaError::Bundle(format!("matches.jsonl line {}: {why}", number + 1));
        let value = gaos_json::parse(line).map_err(|e| at(format!("not JSON: {e}")))?;
        records.push(MatchRecord::from_value(&value).map_err(at)?);
    }
    Ok(ArenaBundle { manifest, game, records, standings, digests, files })
}
