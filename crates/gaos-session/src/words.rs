//! Values inside messages for people: an absent value reads "missing",
//! never Rust's `None` or `Some(…)`.

/// `"text"` quoted, or `missing`.
pub(crate) fn quoted(value: Option<&str>) -> String {
    value.map_or_else(|| "missing".to_owned(), |text| format!("{text:?}"))
}

/// The value as displayed, or `missing`.
pub(crate) fn shown<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "missing".to_owned(), |value| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_values_read_missing() {
        assert_eq!(quoted(Some("s-1")), "\"s-1\"");
        assert_eq!(quoted(None), "missing");
        assert_eq!(shown(Some(7)), "7");
        assert_eq!(shown(None::<u32>), "missing");
    }
}
