//! `gaos arena verify BUNDLE [--manifest FILE] [--adapter FILE]`: every
//! replay re-simulated (in parallel), every result, the standings and the
//! ratings recomputed, every digest checked; exit 0 valid, 1 invalid
//! (naming the first match or number that differs), 2 usage or IO error.
//! `gaos arena run` checks the bundle it packs with the same function.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use gaos_games::GameRegistry;
use gaos_json::{Map, Value, canonical_json};
use gaos_kernel::{Game, GameRef};
use gaos_runner::arena::{
    ArenaBundle, ArenaError, ArenaManifest, ArenaVerification, GameIdentity, check_match, read_arena_bundle,
    verify_arena,
};
use rayon::prelude::*;

/// `gaos arena verify` arguments.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The bundle directory (or a run's output directory holding bundle/).
    bundle: PathBuf,
    /// An independent copy of the manifest (default: the bundle's own, which proves less).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// The game module of a tournament whose `arena.adapter` names one
    /// (default: that path, beside --manifest). Its SHA-256 must be the one
    /// the bundle records.
    #[arg(long, value_name = "FILE")]
    adapter: Option<PathBuf>,
    /// Print the verification as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    module_limits: crate::modules::ModuleLimitArgs,
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("gaos arena verify: {message}");
    ExitCode::from(2)
}

/// The game a manifest names, loaded into `registry` when it is a module
/// (`module`: its file, when the caller knows it): its identity and seats.
pub(crate) fn load_game(
    manifest: &ArenaManifest,
    module: Option<&Path>,
    registry: &mut GameRegistry,
    limits: &crate::modules::ModuleLimitArgs,
) -> Result<(GameIdentity, Arc<dyn Game>), String> {
    let adapter = &manifest.arena.adapter;
    let (id, adapter_sha256) = match module {
        Some(path) => crate::modules::add_module_with_sha(registry, path, &limits.limits()?)?,
        None => (adapter.clone(), None),
    };
    let game = registry.get(&id).ok_or_else(|| {
        let known: Vec<String> = registry.list().iter().map(|g| g.game_ref().id).collect();
        format!("arena.adapter {adapter:?} is not a game gaos knows (games: {})", known.join(", "))
    })?;
    Ok((GameIdentity { id, adapter_sha256 }, game))
}

/// Verify a bundle read from disk against `manifest` and the game
/// (`game`, with its `seats`), re-simulating replays with `registry`'s games.
pub(crate) fn verify_bundle(
    bundle: &ArenaBundle,
    manifest: &ArenaManifest,
    game: &GameIdentity,
    seats: &[String],
    registry: &GameRegistry,
) -> ArenaVerification {
    let resolve = move |g: &GameRef| registry.by_adapter(&g.adapter.id).or_else(|| registry.get(&g.id));
    let checked: Vec<_> = bundle
        .records
        .par_iter()
        .map(|record| match bundle.files.get(&record.replay) {
            Some(text) => check_match(record, text, &game.id, &resolve),
            None => Err(format!("the bundle has no {}", record.replay)),
        })
        .collect();
    verify_arena(bundle, manifest, game, seats, &checked)
}

/// An independent copy of a manifest, read and checked.
fn read_manifest(path: &Path) -> Result<ArenaManifest, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read the manifest {}: {e}", path.display()))?;
    ArenaManifest::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn print_invalid(dir: &Path, reasons: &[String], json: bool) {
    if json {
        let mut out = Map::new();
        out.insert("valid".into(), false.into());
        out.insert("reasons".into(), Value::Array(reasons.iter().map(Value::from).collect()));
        println!("{}", canonical_json(&Value::Object(out)));
    } else {
        println!("invalid: {}", dir.display());
        for reason in reasons.iter().take(50) {
            println!("  - {reason}");
        }
        if reasons.len() > 50 {
            println!("  ... and {} more", reasons.len() - 50);
        }
    }
}

/// Run `gaos arena verify` with the games of `registry`.
pub(crate) fn run(args: VerifyArgs, registry: &GameRegistry) -> ExitCode {
    let started = Instant::now();
    let dir = if !args.bundle.join("digests.json").exists() && args.bundle.join("bundle/digests.json").exists() {
        args.bundle.join("bundle")
    } else {
        args.bundle.clone()
    };
    let bundle = match read_arena_bundle(&dir) {
        Ok(bundle) => bundle,
        Err(ArenaError::Bundle(why)) => {
            print_invalid(&dir, &[format!("not an arena bundle: {why}")], args.json);
            return ExitCode::FAILURE;
        }
        Err(e) => return usage(e),
    };
    let independent = args.manifest.is_some();
    let manifest = match args.manifest.as_deref().map(read_manifest) {
        Some(Ok(manifest)) => manifest,
        Some(Err(e)) => return usage(e),
        None => match ArenaManifest::from_value(&bundle.manifest) {
            Ok(manifest) => manifest,
            Err(e) => {
                print_invalid(&dir, &[format!("manifest.json: {e}")], args.json);
                return ExitCode::FAILURE;
            }
        },
    };
    let adapter = &manifest.arena.adapter;
    let module =
        match crate::modules::verifier_module(adapter, args.adapter.as_deref(), args.manifest.as_deref(), "tournament")
        {
            Ok(module) => module,
            Err(e) => return usage(e),
        };
    let mut registry = registry.clone();
    let (game, loaded) = match load_game(&manifest, module.as_deref(), &mut registry, &args.module_limits) {
        Ok(found) => found,
        Err(e) => return usage(e),
    };
    let verification = verify_bundle(&bundle, &manifest, &game, &loaded.seats(), &registry);
    let seconds = started.elapsed().as_secs_f64();
    if !verification.valid {
        print_invalid(&dir, &verification.reasons, args.json);
        return ExitCode::FAILURE;
    }
    if args.json {
        let mut out = Map::new();
        out.insert("valid".into(), true.into());
        out.insert("matches".into(), verification.matches.into());
        out.insert("contentDigest".into(), verification.content_digest.clone().into());
        out.insert("packageDigest".into(), verification.package_digest.clone().into());
        out.insert("independentManifest".into(), independent.into());
        out.insert("seconds".into(), Value::number(seconds).unwrap_or(Value::Null));
        println!("{}", canonical_json(&Value::Object(out)));
    } else {
        println!("valid: {}", dir.display());
        println!("  matches:        {} (every replay re-simulated, every result recomputed)", verification.matches);
        println!("  standings:      recomputed from the replays, ratings to the last digit");
        println!("  content digest: {}", verification.content_digest);
        println!("  package digest: {}", verification.package_digest);
        if !independent {
            println!("  manifest:       the bundle's own (pass --manifest FILE to check against an independent copy)");
        }
        println!("  time:           {seconds:.2} s");
    }
    ExitCode::SUCCESS
}
