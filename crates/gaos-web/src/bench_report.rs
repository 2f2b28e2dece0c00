//! The benchmark report: `OUT/report.html` of `gaos bench run`, and the same
//! page served by `gaos serve --bench-reports DIR` for the runs in `DIR`.
//! The per-task scores, the chart (`scores.svg`, embedded as an image), and every
//! episode's outcome with a link to its replay: a file of the bundle beside
//! the report, or (served by a host) the host's replay viewer opening it.
//! One self-contained file: inline styles, no script, nothing fetched from
//! elsewhere.

use gaos_json::{Value, canonical_json};
use gaos_runner::benchmark::{Aggregate, BenchmarkManifest, BundleEpisode};

/// Where the report sends people to step through a replay: the replay
/// viewer of a `gaos serve` at its default address.
const VIEWER: &str = "http://127.0.0.1:8899/replay";

/// Where a report's episode links lead.
#[derive(Debug, Clone, Copy)]
pub enum ReplayLinks<'a> {
    /// A report file beside its `bundle/`: each replay is a file to
    /// download, and the text points to a host's viewer to open it in.
    BundleFiles,
    /// A report a host serves at `base` (`/bench/RUN`): each episode opens
    /// in this host's replay viewer, which fetches the bundle's file.
    HostViewer {
        /// The run's path on the host, without a trailing `/`.
        base: &'a str,
    },
}

pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A path segment (or path) percent-encoded for an `href`.
pub(crate) fn href(path: &str) -> String {
    path.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => (b as char).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

fn outcome_text(outcome: &Value) -> String {
    let status = outcome.get("status").and_then(Value::as_str).unwrap_or("?");
    let mut text = status.to_owned();
    if let Some(stars) = outcome.get("stars").filter(|s| !matches!(s, Value::Null)) {
        text.push_str(&format!(", stars {}", canonical_json(stars)));
    }
    if let Some(actions) = outcome.get("actionsUsed") {
        text.push_str(&format!(", {} actions", canonical_json(actions)));
    }
    text
}

/// An episode's self-reported wall clock (`1520 ms`) and cost (`0.25 (openai)`);
/// `–` for what the run did not record.
fn measurements(observations: Option<&Value>) -> (String, String) {
    let field = |key: &str| observations.and_then(|o| o.get(key));
    let wall_clock = field("wallClockMs").map_or_else(|| "–".to_owned(), |ms| format!("{} ms", canonical_json(ms)));
    let cost = match (field("cost"), field("provider").and_then(Value::as_str)) {
        (Some(cost), Some(provider)) => format!("{} ({provider})", canonical_json(cost)),
        (Some(cost), None) => canonical_json(cost),
        (None, _) => "–".to_owned(),
    };
    (wall_clock, cost)
}

/// The report's HTML. `chart_svg` is the `scores.svg` text (shown as an
/// image; empty: no chart); the episode
/// links point into `bundle/` (relative to the report), as `links` says.
pub fn report_html(
    manifest: &BenchmarkManifest,
    aggregate: &Aggregate,
    episodes: &[BundleEpisode],
    chart_svg: &str,
    links: ReplayLinks<'_>,
) -> String {
    let title = format!("{} {}", manifest.benchmark.id, manifest.benchmark.version);
    let mut html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Benchmark report: {t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<h1>Benchmark report: {t}</h1>\n",
        t = escape(&title)
    );
    html.push_str(&format!(
        "<p>Aggregate ({}): <strong id=\"aggregate\">{:.4}</strong> over {} episodes.</p>\n",
        escape(manifest.scoring.aggregation.as_str()),
        aggregate.aggregate_score,
        episodes.len()
    ));
    html.push_str("<h2>Tasks</h2>\n<table id=\"tasks\"><thead><tr><th scope=\"col\">Task</th><th scope=\"col\">Episodes</th><th scope=\"col\">Score</th></tr></thead><tbody>\n");
    for (task, score) in &aggregate.task_scores {
        let count = episodes.iter().filter(|e| e.plan.get("taskId").and_then(Value::as_str) == Some(task)).count();
        html.push_str(&format!(
            "<tr><th scope=\"row\">{}</th><td>{count}</td><td>{score:.4}</td></tr>\n",
            escape(task)
        ));
    }
    html.push_str("</tbody></table>\n<h2>Chart</h2>\n<figure>\n");
    // An image, never markup pasted into the page: a scores.svg is a file
    // beside the bundle, and an image runs nothing and navigates nowhere
    // (pasted in, its <meta refresh> or <script> would be the page's).
    if !chart_svg.trim().is_empty() {
        html.push_str(&format!(
            "<img id=\"chart\" alt=\"Score per task\" src=\"data:image/svg+xml;base64,{}\">",
            gaos_json::base64_encode(chart_svg.as_bytes())
        ));
    }
    html.push_str("\n</figure>\n<h2>Episodes</h2>\n");
    html.push_str(&match links {
        ReplayLinks::BundleFiles => format!(
            "<p>Each replay is a file of the bundle; open it in the replay viewer of a running <code>gaos serve</code> (<a href=\"{VIEWER}\">{VIEWER}</a>: choose or drop the file) to step through it, or serve this run with <code>gaos serve --bench-reports DIR</code> to open each episode by its link.</p>\n"
        ),
        ReplayLinks::HostViewer { .. } => {
            "<p>Each episode's link opens it in this host's replay viewer (any token of the host re-simulates it).</p>\n".to_owned()
        }
    });
    html.push_str("<table id=\"episodes\"><thead><tr><th scope=\"col\">Episode</th><th scope=\"col\">Seed</th><th scope=\"col\">Outcome</th><th scope=\"col\">Score</th><th scope=\"col\">Wall clock</th><th scope=\"col\">Cost</th><th scope=\"col\">Replay</th></tr></thead><tbody>\n");
    for episode in episodes {
        let (wall_clock, cost) = measurements(episode.self_reported_observations.as_ref());
        let seed = episode.plan.get("seed").map(canonical_json).unwrap_or_default();
        let file = format!("bundle/{}", episode.file_name());
        let replay = match links {
            ReplayLinks::BundleFiles => format!("<a href=\"{}\" download>replay file</a>", escape(&href(&file))),
            ReplayLinks::HostViewer { base } => {
                let src = href(&format!("{base}/{file}"));
                format!(
                    "<a class=\"open-replay\" href=\"/replay#src={}\">open in the replay viewer</a> · <a href=\"{}\" download>file</a>",
                    escape(&href(&src)),
                    escape(&src)
                )
            }
        };
        html.push_str(&format!(
            "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td class=\"wall-clock\">{}</td><td class=\"cost\">{}</td><td>{replay}</td></tr>\n",
            escape(&episode.id),
            escape(&seed),
            escape(&outcome_text(&episode.terminal_outcome)),
            escape(&canonical_json(&episode.score)),
            escape(&wall_clock),
            escape(&cost),
        ));
    }
    html.push_str("</tbody></table>\n</main>\n</body>\n</html>\n");
    html
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"Noto Sans\",sans-serif;color:#1b1d21;background:#f7f7f5;margin:0}main{max-width:72rem;margin:0 auto;padding:1rem 1.2rem 3rem}table{border-collapse:collapse;width:100%;background:#fff}th,td{border-bottom:1px solid #c9ccd1;padding:.35rem .5rem;text-align:left}a{color:#0b5cad}figure{margin:0;overflow:auto;background:#fff}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measurements_show_what_the_run_recorded() {
        let full = gaos_json::parse(r#"{"cost":0.25,"provider":"openai","steps":3,"wallClockMs":1520}"#).expect("JSON");
        assert_eq!(measurements(Some(&full)), ("1520 ms".to_owned(), "0.25 (openai)".to_owned()));
        let old = gaos_json::parse(r#"{"steps":3}"#).expect("JSON");
        assert_eq!(measurements(Some(&old)), ("–".to_owned(), "–".to_owned()));
        assert_eq!(measurements(None), ("–".to_owned(), "–".to_owned()));
    }

    #[test]
    fn text_is_escaped_and_paths_are_encoded() {
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(href("bundle/episodes/t%2Fa b.jsonl"), "bundle/episodes/t%252Fa%20b.jsonl");
    }
}
