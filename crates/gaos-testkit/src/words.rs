//! Error messages are read by people: a player at a terminal, an agent
//! through MCP, an operator in a shell. They must not show the names the
//! code uses inside (the games' action ids such as `Action 3`, Rust debug
//! output such as `Some(…)` or `None`, Rust paths or serde's type names).
//! Every test that asserts a host error, an MCP tool error or a CLI error
//! runs its text through [`assert_users_words`], so one that leaks fails
//! wherever it shows up.

/// The internal names in `text`, each as found (empty: none).
pub fn internal_names(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices("Action ") {
        if bytes.get(at + 7).is_some_and(u8::is_ascii_digit) {
            found.push(text[at..at + 8].to_owned());
        }
    }
    for debug in ["Some(", "Ok(", "Err(", "expected struct ", "expected enum "] {
        if text.contains(debug) {
            found.push(debug.to_owned());
        }
    }
    let word = |at: usize, len: usize| {
        let before = text[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric() && c != '_');
        let after = text[at + len..].chars().next().is_none_or(|c| !c.is_alphanumeric() && c != '_');
        before && after
    };
    if text.match_indices("None").any(|(at, _)| word(at, 4)) {
        found.push("None".to_owned());
    }
    // A Rust path such as `gaos_kernel::KernelError` (an IPv6 `::1` is not one).
    for (at, _) in text.match_indices("::") {
        let module = text[..at].chars().next_back().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
        let item = text[at + 2..].chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if module && item {
            found.push(format!("a Rust path near {:?}", &text[at.saturating_sub(16)..(at + 18).min(text.len())]));
        }
    }
    found
}

/// Fail when the message `text` (what `context` answered) shows an
/// internal name.
#[track_caller]
pub fn assert_users_words(context: &str, text: &str) {
    let found = internal_names(text);
    assert!(found.is_empty(), "{context}: the message shows internal names {found:?} to a person: {text}");
}

#[cfg(test)]
mod tests {
    use super::internal_names;

    #[test]
    fn internal_names_are_found_and_plain_words_pass() {
        assert!(internal_names("it is x's turn; o moves after x").is_empty());
        assert!(internal_names("listening on http://[::1]:8899, Nonexistent seat, Action required").is_empty());
        assert_eq!(internal_names(r#""Action 0" is not a cell"#), ["Action 0"]);
        assert_eq!(internal_names("card index Some(7.0) is not in 0..3"), ["Some("]);
        assert_eq!(internal_names("found None"), ["None"]);
        assert_eq!(internal_names("invalid type: string, expected struct CommandSubmission"), ["expected struct "]);
        assert_eq!(internal_names("gaos_kernel::KernelError").len(), 1);
    }
}
