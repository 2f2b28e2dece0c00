use std::fmt;

/// Why a JSON text or value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonErrorKind {
    /// The text is not JSON (unexpected byte, missing delimiter, trailing data).
    Syntax,
    /// An integral number outside ±(2^53−1); every |x| ≥ 2^53 double is integral.
    UnsafeInteger,
    /// A number that is not finite (e.g. `1e400` overflows to infinity).
    NonFiniteNumber,
    /// A `\uXXXX` escape that leaves an unpaired UTF-16 surrogate.
    LoneSurrogate,
    /// Nesting deeper than [`crate::MAX_DEPTH`].
    TooDeep,
    /// A value that cannot be represented (serde bridge: maps with non-string
    /// keys, bytes, ...).
    Unsupported,
    /// Shape mismatch while decoding into a Rust type.
    Shape,
}

impl JsonErrorKind {
    /// The stable class name used by the conformance vectors.
    pub fn class(self) -> &'static str {
        match self {
            JsonErrorKind::Syntax => "syntax",
            JsonErrorKind::UnsafeInteger => "unsafe-integer",
            JsonErrorKind::NonFiniteNumber => "non-finite-number",
            JsonErrorKind::LoneSurrogate => "lone-surrogate",
            JsonErrorKind::TooDeep => "too-deep",
            JsonErrorKind::Unsupported => "unsupported",
            JsonErrorKind::Shape => "shape",
        }
    }
}

/// A refused JSON text or value, with the byte offset when it came from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub kind: JsonErrorKind,
    pub message: String,
    /// Byte offset into the parsed text, when the error came from the parser.
    pub offset: Option<usize>,
}

impl JsonError {
    pub(crate) fn new(kind: JsonErrorKind, message: impl Into<String>) -> Self {
        JsonError { kind, message: message.into(), offset: None }
    }

    pub(crate) fn at(kind: JsonErrorKind, message: impl Into<String>, offset: usize) -> Self {
        JsonError { kind, message: message.into(), offset: Some(offset) }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{} at byte {}", self.message, offset),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for JsonError {}

impl serde::ser::Error for JsonError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        JsonError::new(JsonErrorKind::Unsupported, msg.to_string())
    }
}

impl serde::de::Error for JsonError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        JsonError::new(JsonErrorKind::Shape, msg.to_string())
    }
}
