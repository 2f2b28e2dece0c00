//! What a person at the terminal reads: the seat's view as `key: value`
//! lines, whose turn it is, and what changed since the seat last moved (the
//! other seats' moves, a round's result). Everything comes from the seat's
//! own view, so nothing hidden from the seat is ever shown.

use gaos_json::{Value, canonical_json};

/// Fields of a view that are shown another way (the menu, the turn line) or
/// not at all (`seat`: the header names it).
const NOT_FIELDS: [&str; 4] = ["legalActions", "done", "participation", "seat"];

/// The view as indented `key: value` lines, after a line saying whose turn it is.
pub fn render_view(view: &Value, seat: &str) -> String {
    let mut text = String::new();
    if let Some(turn) = turn_line(view, seat) {
        text.push_str(&turn);
        text.push('\n');
    }
    let Some(map) = view.as_object() else {
        text.push_str(&format!("  {}\n", canonical_json(view)));
        return text;
    };
    for (key, value) in map {
        if NOT_FIELDS.contains(&key.as_str()) || (key == "outcome" && is_ongoing(value)) {
            continue;
        }
        match board_rows(key, value) {
            Some(rows) => {
                text.push_str(&format!("  {key}:\n"));
                for row in rows {
                    text.push_str(&format!("    {row}\n"));
                }
            }
            None => text.push_str(&format!("  {key}: {}\n", render_value(value, seat))),
        }
    }
    text
}

/// What changed from `before` to `after` (two views of the same seat), one
/// line per field: entries appended to a list (a round's record), squares
/// of a board that changed, other fields with their new value.
pub fn describe_changes(before: &Value, after: &Value, seat: &str) -> Vec<String> {
    let (Some(old), Some(new)) = (before.as_object(), after.as_object()) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (key, value) in new {
        if NOT_FIELDS.contains(&key.as_str()) || key == "outcome" {
            continue;
        }
        let Some(previous) = old.get(key) else {
            lines.push(format!("{key}: {}", render_value(value, seat)));
            continue;
        };
        if previous == value {
            continue;
        }
        match (previous, value) {
            (Value::Array(was), Value::Array(now)) if now.len() > was.len() && now.starts_with(was) => {
                for entry in &now[was.len()..] {
                    lines.push(format!("{key}: {}", render_entry(entry, seat)));
                }
            }
            (Value::String(was), Value::String(now)) if was.chars().count() == now.chars().count() => {
                let squares: Vec<String> = was
                    .chars()
                    .zip(now.chars())
                    .enumerate()
                    .filter(|(_, (a, b))| a != b)
                    .map(|(i, (_, b))| format!("square {i} is now {b}"))
                    .collect();
                lines.push(format!("{key}: {}", squares.join(", ")));
            }
            _ => lines.push(format!("{key}: {}", render_value(value, seat))),
        }
    }
    lines
}

/// `Your move.`, `x to move.` or `Every seat moves at once ...`, from the
/// view's `participation` (or `toMove`).
fn turn_line(view: &Value, seat: &str) -> Option<String> {
    let participation = view.get("participation");
    let mode = participation.and_then(|p| p.get("mode")).and_then(Value::as_str);
    if mode == Some("simultaneous") {
        return Some("Every seat moves at once this round; the others' moves show after it resolves.".into());
    }
    let active =
        participation.and_then(|p| p.get("activeSeat")).or_else(|| view.get("toMove")).and_then(Value::as_str)?;
    Some(if active == seat { "Your move.".into() } else { format!("{active} to move.") })
}

fn is_ongoing(outcome: &Value) -> bool {
    outcome.get("kind").and_then(Value::as_str) == Some("ongoing")
}

/// A square board (`"board": "x...o...."`, 9 = 3×3 or 16, 25, ...) as rows.
fn board_rows(key: &str, value: &Value) -> Option<Vec<String>> {
    let cells: Vec<char> = value.as_str()?.chars().collect();
    let side = (2..=8).find(|n| n * n == cells.len())?;
    (key == "board")
        .then(|| cells.chunks(side).map(|row| row.iter().map(char::to_string).collect::<Vec<_>>().join(" ")).collect())
}

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

fn scalar(value: &Value, seat: &str) -> String {
    match value {
        Value::String(s) if s == seat => "you".into(),
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        other => canonical_json(other),
    }
}

/// A value on one line: `1 7 9`, `alice 0, bob 1`, `(none)`, else JSON.
/// The seat itself reads as `you`.
fn render_value(value: &Value, seat: &str) -> String {
    match value {
        Value::Array(items) if items.is_empty() => "(none)".into(),
        Value::Array(items) if items.iter().all(is_scalar) => {
            items.iter().map(|v| scalar(v, seat)).collect::<Vec<_>>().join(" ")
        }
        Value::Array(items) => items.iter().map(|v| render_entry(v, seat)).collect::<Vec<_>>().join(" | "),
        Value::Object(_) => render_entry(value, seat),
        other => scalar(other, seat),
    }
}

/// An object as `key value, ...` (the seat's own key reads `you`), else JSON.
fn render_entry(entry: &Value, seat: &str) -> String {
    match entry.as_object() {
        Some(map) if map.values().all(is_scalar) => map
            .iter()
            .map(|(k, v)| {
                let key = if k == seat { "you" } else { k.as_str() };
                format!("{key} {}", scalar(v, seat))
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => canonical_json(entry),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        gaos_json::parse(text).expect("JSON")
    }

    #[test]
    fn a_hilo_view_reads_as_lines_and_a_round_as_its_result() {
        let before = parse(
            r#"{"done":false,"hand":[1,7,9],"history":[],"outcome":{"kind":"ongoing"},"participation":{"mode":"simultaneous","seats":["alice","bob"]},"round":0,"score":{"alice":0,"bob":0},"seat":"alice"}"#,
        );
        let text = render_view(&before, "alice");
        assert!(text.contains("  hand: 1 7 9\n") && text.contains("  history: (none)\n"), "{text}");
        assert!(text.contains("  score: you 0, bob 0\n") && text.contains("at once"), "{text}");
        assert!(!text.contains("outcome") && !text.contains("participation"), "{text}");
        let after = parse(
            r#"{"done":false,"hand":[7,9],"history":[{"alice":1,"bob":2,"winner":"bob"}],"outcome":{"kind":"ongoing"},"participation":{"mode":"simultaneous","seats":["alice","bob"]},"round":1,"score":{"alice":0,"bob":1},"seat":"alice"}"#,
        );
        let changes = describe_changes(&before, &after, "alice");
        assert!(changes.contains(&"history: you 1, bob 2, winner bob".to_owned()), "{changes:?}");
        assert!(changes.contains(&"score: you 0, bob 1".to_owned()), "{changes:?}");
    }

    #[test]
    fn a_board_reads_as_rows_and_a_move_as_its_square() {
        let before = parse(r#"{"board":".........","toMove":"x"}"#);
        let text = render_view(&before, "x");
        assert!(text.starts_with("Your move.\n") && text.contains("    . . .\n"), "{text}");
        let after = parse(r#"{"board":"x....o...","toMove":"x"}"#);
        assert_eq!(describe_changes(&before, &after, "x"), vec!["board: square 0 is now x, square 5 is now o"]);
    }
}
