//! `gaos games`: every game this binary serves (built in, added by the crate
//! that built it, or loaded from game modules with `--game`/`--games`), with
//! its seats, levels, default cadence and origin. A table by default; with
//! `--json` the body `GET /v1/games` answers for the same games.

use std::path::PathBuf;
use std::process::ExitCode;

use gaos_games::GameRegistry;
use gaos_json::{Value, canonical_json};

/// `gaos games` arguments.
#[derive(Debug, clap::Args)]
pub struct GamesArgs {
    /// Also list the game module FILE.mjs (repeatable), as `gaos serve
    /// --game FILE` would serve it.
    #[arg(long = "game", value_name = "FILE")]
    game_modules: Vec<PathBuf>,
    /// Also list every game module (*.mjs, *.js) directly in DIR (repeatable).
    #[arg(long = "games", value_name = "DIR")]
    game_dirs: Vec<PathBuf>,
    #[command(flatten)]
    module_limits: crate::modules::ModuleLimitArgs,
    /// Print the listing as JSON (the body of the host's GET /v1/games),
    /// with versions, adapters, descriptions and every level's definition.
    #[arg(long)]
    json: bool,
}

/// List the games of `registry` plus the modules the flags name.
pub fn run(args: GamesArgs, registry: &GameRegistry) -> ExitCode {
    let registry =
        match crate::modules::with_modules(registry, &args.game_modules, &args.game_dirs, &args.module_limits) {
            Ok(registry) => registry,
            Err(e) => {
                eprintln!("gaos games: {e}");
                return ExitCode::from(2);
            }
        };
    let listing = gaos_host::game_listing(&registry);
    if args.json {
        println!("{}", canonical_json(&listing));
    } else {
        print!("{}", table(&listing));
    }
    ExitCode::SUCCESS
}

/// The listing as an aligned table, one game a row.
fn table(listing: &Value) -> String {
    let games = listing.get("games").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut rows = vec![["GAME", "SEATS", "LEVELS", "CADENCE", "ORIGIN"].map(str::to_owned)];
    for game in games {
        let text = |key: &str| game.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let names = |key: &str, field: Option<&str>| {
            let items = game.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            let names: Vec<&str> = items
                .iter()
                .filter_map(|item| match field {
                    Some(field) => item.get(field).and_then(Value::as_str),
                    None => item.as_str(),
                })
                .collect();
            names.join(", ")
        };
        rows.push([
            text("id"),
            names("seats", None),
            names("levels", Some("id")),
            cadence(game.get("cadence")),
            origin(game.get("origin")),
        ]);
    }
    let widths: Vec<usize> =
        (0..5).map(|column| rows.iter().map(|row| row[column].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let count = games.len();
    out.push_str(&format!(
        "\n{count} game{}. `gaos games --json` adds versions, adapters, descriptions and level definitions.\n",
        if count == 1 { "" } else { "s" }
    ));
    out
}

/// `turns`, or `ticks 20/s`.
fn cadence(cadence: Option<&Value>) -> String {
    let Some(cadence) = cadence else { return String::new() };
    match (cadence.get("mode").and_then(Value::as_str), cadence.get("ticksPerSecond")) {
        (Some("ticks"), Some(rate)) => format!("ticks {}/s", canonical_json(rate)),
        (Some(mode), _) => mode.to_owned(),
        (None, _) => canonical_json(cadence),
    }
}

/// `built in`, `crate`, or `module PATH (sha256 0123456789ab…)`.
fn origin(origin: Option<&Value>) -> String {
    let Some(origin) = origin else { return String::new() };
    let field = |key: &str| origin.get(key).and_then(Value::as_str).unwrap_or_default();
    match field("kind") {
        "builtin" => "built in".to_owned(),
        "module" => {
            let sha256 = field("sha256");
            let short = sha256.get(..12).unwrap_or(sha256);
            format!("module {} (sha256 {short}…)", field("path"))
        }
        kind => kind.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_seats_levels_cadence_and_origin() {
        let listing = gaos_json::parse(
            r#"{"games":[
              {"id":"a/turns","seats":["x","o"],"levels":[{"id":"default"},{"id":"seeded"}],"cadence":{"mode":"turns"},"origin":{"kind":"builtin"}},
              {"id":"b/ticks","seats":["p1"],"levels":[{"id":"default"}],"cadence":{"mode":"ticks","ticksPerSecond":20},"origin":{"kind":"module","path":"games/b.mjs","sha256":"0123456789abcdef0123"}}
            ]}"#,
        )
        .expect("json");
        let text = table(&listing);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "GAME     SEATS  LEVELS           CADENCE     ORIGIN");
        assert_eq!(lines[1], "a/turns  x, o   default, seeded  turns       built in");
        assert_eq!(lines[2], "b/ticks  p1     default          ticks 20/s  module games/b.mjs (sha256 0123456789ab…)");
        assert!(lines[4].starts_with("2 games."), "{text}");
    }
}
