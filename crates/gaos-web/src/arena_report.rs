//! The tournament report: `bundle/report.html` of `gaos arena run`, and the
//! same page served by `gaos serve --arena-reports DIR` at `/arena/RUN/`.
//! The standings with their 95 % intervals, the ratings chart (the
//! bundle's `ratings.svg`, embedded as an image: a `data:` URL, never
//! inline markup), the pairwise win-rate matrix, and every match with its
//! ranking and a link to its replay. One self-contained file: inline
//! styles, no script, nothing fetched from elsewhere.

use gaos_json::{Value, base64_encode, canonical_json};
use gaos_runner::arena::{ArenaManifest, MatchRecord, ScheduleKind};

use crate::bench_report::{ReplayLinks, escape, href};

/// Where the report sends people to step through a replay.
const VIEWER: &str = "http://127.0.0.1:8899/replay";

fn number(value: Option<&Value>) -> String {
    match value {
        Some(Value::Number(n)) => format!("{n:.1}"),
        Some(other) => canonical_json(other),
        None => "–".into(),
    }
}

fn standings_table(standings: &Value) -> String {
    let mut html = String::from(
        "<table id=\"standings\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Entrant</th><th scope=\"col\">Rating</th><th scope=\"col\">95 % interval</th><th scope=\"col\">Matches</th><th scope=\"col\">Won</th><th scope=\"col\">Drawn</th><th scope=\"col\">Lost</th><th scope=\"col\">Score</th></tr></thead><tbody>\n",
    );
    for (i, entrant) in standings.get("entrants").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let field = |key: &str| entrant.get(key).map(canonical_json).unwrap_or_default();
        let interval = entrant.get("ci95").and_then(Value::as_array);
        let ci = match interval.map(Vec::as_slice) {
            Some([low, high]) => format!("{} – {}", number(Some(low)), number(Some(high))),
            _ => "–".into(),
        };
        html.push_str(&format!(
            "<tr><td>{}</td><th scope=\"row\">{}</th><td class=\"rating\">{}</td><td class=\"ci95\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            i + 1,
            escape(entrant.get("id").and_then(Value::as_str).unwrap_or("?")),
            number(entrant.get("rating")),
            escape(&ci),
            escape(&field("matches")),
            escape(&field("wins")),
            escape(&field("draws")),
            escape(&field("losses")),
            escape(&field("score")),
        ));
    }
    html.push_str("</tbody></table>\n");
    html
}

fn pairwise_table(standings: &Value) -> String {
    let ids: Vec<&str> = standings
        .get("entrants")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("id").and_then(Value::as_str))
        .collect();
    let pairwise = standings.get("pairwise");
    let mut html = String::from("<table id=\"pairwise\"><thead><tr><th scope=\"col\">Row against column</th>");
    for id in &ids {
        html.push_str(&format!("<th scope=\"col\">{}</th>", escape(id)));
    }
    html.push_str("</tr></thead><tbody>\n");
    for row in &ids {
        html.push_str(&format!("<tr><th scope=\"row\">{}</th>", escape(row)));
        for column in &ids {
            let head = pairwise.and_then(|p| p.get(row)).and_then(|r| r.get(column));
            let cell = match head {
                _ if row == column => "<td class=\"self\">–</td>".to_owned(),
                Some(head) => {
                    let count = |key: &str| head.get(key).map(canonical_json).unwrap_or_default();
                    let rate = head.get("winRate").and_then(Value::as_f64).unwrap_or(0.0);
                    format!(
                        "<td title=\"{} won, {} drawn, {} lost of {}\">{:.1} %</td>",
                        escape(&count("wins")),
                        escape(&count("draws")),
                        escape(&count("losses")),
                        escape(&count("games")),
                        rate * 100.0
                    )
                }
                None => "<td class=\"unplayed\">·</td>".to_owned(),
            };
            html.push_str(&cell);
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
    html
}

fn replay_link(record: &MatchRecord, links: ReplayLinks<'_>) -> String {
    match links {
        ReplayLinks::BundleFiles => format!("<a href=\"{}\" download>replay file</a>", escape(&href(&record.replay))),
        ReplayLinks::HostViewer { base } => {
            let src = href(&format!("{base}/{}", record.replay));
            format!(
                "<a class=\"open-replay\" href=\"/replay#src={}\">open in the replay viewer</a> · <a href=\"{}\" download>file</a>",
                escape(&href(&src)),
                escape(&src)
            )
        }
    }
}

/// The matches, one row each; a seat whose entrant has a `seatKey` and
/// signed the match is marked "(signed)".
fn matches_table(manifest: &ArenaManifest, records: &[MatchRecord], links: ReplayLinks<'_>) -> String {
    let mut html = String::from(
        "<table id=\"matches\"><thead><tr><th scope=\"col\">Match</th><th scope=\"col\">Level</th><th scope=\"col\">Seed</th><th scope=\"col\">Seats</th><th scope=\"col\">Ranking</th><th scope=\"col\">Forfeits</th><th scope=\"col\">Steps</th><th scope=\"col\">Replay</th></tr></thead><tbody>\n",
    );
    for record in records {
        let signed = |seat: &str, entrant: &str| {
            let keyed = manifest.entrant(entrant).is_some_and(|e| e.seat_key.is_some());
            if keyed && record.result.seat_keys.contains_key(seat) { " (signed)" } else { "" }
        };
        let seats: Vec<String> =
            record.seats.iter().map(|(seat, entrant)| format!("{seat}: {entrant}{}", signed(seat, entrant))).collect();
        let ranking: Vec<String> = record
            .result
            .ranking
            .iter()
            .map(|(seat, rank)| format!("#{rank} {}", record.entrant(seat).unwrap_or(seat)))
            .collect();
        let forfeits: Vec<&str> = record.result.forfeits.iter().filter_map(|s| record.entrant(s)).collect();
        html.push_str(&format!(
            "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            escape(&record.id),
            escape(&record.level_id),
            record.seed,
            escape(&seats.join(", ")),
            escape(&ranking.join(", ")),
            escape(&forfeits.join(", ")),
            record.result.steps,
            replay_link(record, links),
        ));
    }
    html.push_str("</tbody></table>\n");
    html
}

/// The report's HTML: `standings` is `standings.json`'s value, `records`
/// `matches.jsonl`'s lines, `chart_svg` the `ratings.svg` text. Replay links
/// are relative to the bundle (the report's own directory), as `links` says.
pub fn arena_report_html(
    manifest: &ArenaManifest,
    standings: &Value,
    records: &[MatchRecord],
    chart_svg: &str,
    links: ReplayLinks<'_>,
) -> String {
    let title = format!("{} {}", manifest.arena.id, manifest.arena.version);
    let mut html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Tournament: {t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<h1>Tournament: {t}</h1>\n",
        t = escape(&title)
    );
    let schedule = match &manifest.schedule.kind {
        ScheduleKind::RoundRobin => "round robin".to_owned(),
        ScheduleKind::Gauntlet { baseline } => format!("gauntlet against {baseline}"),
    };
    let seats = if manifest.schedule.rotate_seats { ", seats rotated" } else { "" };
    let rules = manifest.illegal_moves;
    html.push_str(&format!(
        "<p>Game <code>{}</code>, {} matches, {}{seats}. After a refused or unreadable move the agent is {}; then the seat {}.</p>\n",
        escape(&manifest.arena.adapter),
        records.len(),
        escape(&schedule),
        match rules.retries {
            0 => "not asked again".to_owned(),
            1 => "asked once more".to_owned(),
            n => format!("asked up to {n} more times"),
        },
        match rules.then {
            gaos_runner::arena::AfterRetries::Forfeit => "forfeits the match",
            gaos_runner::arena::AfterRetries::Random => "plays a random legal move",
        }
    ));
    html.push_str("<h2>Standings</h2>\n");
    html.push_str(&standings_table(standings));
    let method = standings.get("method");
    let setting = |key: &str| method.and_then(|m| m.get(key)).map(canonical_json).unwrap_or_else(|| "?".into());
    html.push_str(&format!(
        "<p>Ratings: Bradley–Terry maximum likelihood on the Elo scale (mean 1000; draws count half a win each way; each entrant plays {} virtual drawn game(s) spread over the others), 95 % percentile bootstrap intervals over {} resamples of the matches (seed {}). Anyone can recompute them with <code>gaos arena verify</code>.</p>\n",
        escape(&setting("prior")),
        escape(&setting("bootstrap")),
        escape(&setting("seed")),
    ));
    html.push_str(&format!(
        "<h2>Ratings</h2>\n<figure><img id=\"ratings-chart\" alt=\"Each entrant's rating with its 95 % interval\" src=\"data:image/svg+xml;base64,{}\"></figure>\n",
        base64_encode(chart_svg.as_bytes())
    ));
    html.push_str("<h2>Pairwise win rate</h2>\n<p>The row entrant's score against the column entrant (a draw counts half); hover a cell for the games.</p>\n");
    html.push_str(&pairwise_table(standings));
    html.push_str("<h2>Matches</h2>\n");
    html.push_str(&match links {
        ReplayLinks::BundleFiles => format!(
            "<p>Each replay is a file of this bundle; open it in the replay viewer of a running <code>gaos serve</code> (<a href=\"{VIEWER}\">{VIEWER}</a>: choose or drop the file), or serve the tournament with <code>gaos serve --arena-reports DIR</code> to open each match by its link.</p>\n"
        ),
        ReplayLinks::HostViewer { .. } => {
            "<p>Each match's link opens it in this host's replay viewer.</p>\n".to_owned()
        }
    });
    html.push_str(&matches_table(manifest, records, links));
    html.push_str("</main>\n</body>\n</html>\n");
    html
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"Noto Sans\",sans-serif;color:#1b1d21;background:#f7f7f5;margin:0}main{max-width:76rem;margin:0 auto;padding:1rem 1.2rem 3rem}table{border-collapse:collapse;width:100%;background:#fff}th,td{border-bottom:1px solid #c9ccd1;padding:.35rem .5rem;text-align:left}#pairwise td{text-align:center}td.self,td.unplayed{color:#8a8f98}a{color:#0b5cad}figure{margin:0;overflow:auto;background:#fff}figure img{max-width:100%}";
