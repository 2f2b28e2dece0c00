//! `ratings.svg` of an arena bundle: each entrant's rating with its 95 %
//! interval, best first (plotters' SVG backend: no fonts or system
//! libraries; text is laid out with plotters' estimate and drawn by the
//! viewer). The report embeds the file as an image.

use gaos_json::Value;

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
        let label = |value: &SegmentValue<usize>| match value {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => names.get(*i).cloned().unwrap_or_default(),
            SegmentValue::Last => String::new(),
        };
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
