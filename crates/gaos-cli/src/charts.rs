//! The charts of bundles, drawn with plotters' SVG backend (no fonts or
//! system libraries; text is laid out with plotters' estimate and drawn by
//! the viewer): an arena's `ratings.svg` (each entrant's rating with its 95 %
//! interval, best first) and a benchmark's `scores.svg` (task scores). The
//! reports embed them as images.

use gaos_json::Value;
use gaos_runner::benchmark::BenchmarkManifest;
use plotters::coord::ranged1d::SegmentValue;

/// The x-axis labels of a chart with one category per name.
fn category_label(names: &[String]) -> impl Fn(&SegmentValue<usize>) -> String + '_ {
    move |value| match value {
        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => names.get(*i).cloned().unwrap_or_default(),
        SegmentValue::Last => String::new(),
    }
}

/// `(id, rating, low, high)` of each entrant in `standings.json`, in order.
fn entrants(standings: &Value) -> Vec<(String, f64, f64, f64)> {
    standings
        .get("entrants")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let id = e.get("id")?.as_str()?.to_owned();
            let rating = e.get("rating")?.as_f64()?;
            let ci = e.get("ci95")?.as_array()?;
            Some((id, rating, ci.first()?.as_f64()?, ci.get(1)?.as_f64()?))
        })
        .collect()
}

/// The chart of `standings` (the `standings.json` value), titled `title`.
pub(crate) fn ratings_svg(title: &str, standings: &Value) -> Result<String, String> {
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};

    let rows = entrants(standings);
    let low = rows.iter().map(|r| r.2).fold(f64::INFINITY, f64::min).min(1000.0);
    let high = rows.iter().map(|r| r.3).fold(f64::NEG_INFINITY, f64::max).max(1000.0);
    let margin = ((high - low) * 0.12).max(20.0);
    let (bottom, top) = (low - margin, high + margin);
    let width = (200 + 110 * rows.len() as u32).clamp(640, 1600);
    let mut svg = String::new();
    {
        let chart_error = |e: &dyn std::fmt::Display| format!("cannot draw the ratings chart: {e}");
        let root = SVGBackend::with_string(&mut svg, (width, 440)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| chart_error(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{title}: ratings with 95 % intervals"), ("sans-serif", 18))
            .margin(16)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d((0..rows.len().saturating_sub(1)).into_segmented(), bottom..top)
            .map_err(|e| chart_error(&e))?;
        let names: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        let label = category_label(&names);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(rows.len().max(1))
            .x_label_formatter(&label)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .y_desc("rating (Bradley–Terry, Elo scale, mean 1000)")
            .draw()
            .map_err(|e| chart_error(&e))?;
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (_, rating, low, high))| {
                ErrorBar::new_vertical(SegmentValue::CenterOf(i), *low, *rating, *high, BLUE.stroke_width(2), 18)
            }))
            .map_err(|e| chart_error(&e))?;
        let value_style = TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (_, rating, _, high))| {
                let above = *high + (top - bottom) * 0.01;
                Text::new(format!("{rating:.1}"), (SegmentValue::CenterOf(i), above), value_style.clone())
            }))
            .map_err(|e| chart_error(&e))?;
        root.present().map_err(|e| chart_error(&e))?;
    }
    Ok(svg)
}

/// A bar chart of a benchmark's task scores.
pub(crate) fn task_scores_svg(
    manifest: &BenchmarkManifest,
    aggregate: &gaos_runner::benchmark::Aggregate,
) -> Result<String, String> {
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};

    let scores: Vec<(String, f64)> = aggregate.task_scores.clone();
    let top = scores.iter().map(|(_, s)| *s).fold(1.0f64, f64::max) * 1.1;
    let width = (200 + 120 * scores.len() as u32).clamp(640, 1600);
    let mut svg = String::new();
    {
        let chart_error = |e: &dyn std::fmt::Display| format!("cannot draw the chart: {e}");
        let root = SVGBackend::with_string(&mut svg, (width, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| chart_error(&e))?;
        let caption = format!(
            "{} {}: task scores (aggregate {:.4}, {})",
            manifest.benchmark.id,
            manifest.benchmark.version,
            aggregate.aggregate_score,
            manifest.scoring.aggregation.as_str()
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 18))
            .margin(16)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d((0..scores.len().saturating_sub(1)).into_segmented(), 0f64..top)
            .map_err(|e| chart_error(&e))?;
        let names: Vec<String> = scores.iter().map(|(id, _)| id.clone()).collect();
        let label = category_label(&names);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE)
            .x_labels(scores.len().max(1))
            .x_label_formatter(&label)
            .y_desc(format!("score ({})", manifest.scoring.plugin))
            .draw()
            .map_err(|e| chart_error(&e))?;
        chart
            .draw_series(scores.iter().enumerate().map(|(i, (_, score))| {
                let mut bar = Rectangle::new(
                    [(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), *score)],
                    BLUE.mix(0.7).filled(),
                );
                bar.set_margin(0, 0, 12, 12);
                bar
            }))
            .map_err(|e| chart_error(&e))?;
        let value_style = TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
        chart
            .draw_series(scores.iter().enumerate().map(|(i, (_, score))| {
                Text::new(format!("{score:.3}"), (SegmentValue::CenterOf(i), *score + top * 0.01), value_style.clone())
            }))
            .map_err(|e| chart_error(&e))?;
        root.present().map_err(|e| chart_error(&e))?;
    }
    Ok(svg)
}
