use crate::error::{JsonError, JsonErrorKind};
use crate::value::{Map, Value, check_number};

/// Deepest array/object nesting the parser accepts. JSON.parse has no fixed
/// limit, but an unbounded recursion would let a hostile body overflow the
/// stack; GAOS documents are shallow.
pub const MAX_DEPTH: usize = 512;

/// Parse a JSON text with the reference's value rules: duplicate keys keep the
/// last value (like `JSON.parse`), numbers must be finite and integral numbers
/// safe, `\u` escapes must not leave lone surrogates.
pub fn parse(text: &str) -> Result<Value, JsonError> {
    parse_with(text, false)
}

/// Parse a JSON text the way `JSON.parse` reads numbers: an integer beyond
/// the safe range becomes the nearest double instead of an error. The
/// result may then lie outside the value domain (find out with
/// [`crate::check_value`]); canonical output still formats such numbers as
/// JavaScript does. For inputs whose bad numbers must reach a later check
/// (conformance scripts hand them to the kernel), never for wire bodies.
pub fn parse_lenient(text: &str) -> Result<Value, JsonError> {
    parse_with(text, true)
}

fn parse_with(text: &str, lenient: bool) -> Result<Value, JsonError> {
    let mut parser = Parser { text, bytes: text.as_bytes(), pos: 0, lenient };
    parser.skip_ws();
    let value = parser.value(0)?;
    parser.skip_ws();
    if parser.pos != parser.bytes.len() {
        return Err(parser.error(JsonErrorKind::Syntax, "unexpected data after the JSON value"));
    }
    Ok(value)
}

/// Parse UTF-8 bytes (invalid UTF-8 is a syntax error).
pub fn parse_bytes(bytes: &[u8]) -> Result<Value, JsonError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(e) => Err(JsonError::at(JsonErrorKind::Syntax, "JSON text is not valid UTF-8", e.valid_up_to())),
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Keep unsafe integers (as the nearest double) instead of refusing them.
    lenient: bool,
}

impl<'a> Parser<'a> {
    fn error(&self, kind: JsonErrorKind, message: &str) -> JsonError {
        JsonError::at(kind, message, self.pos)
    }

    fn skip_ws(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn expect_literal(&mut self, literal: &str, value: Value) -> Result<Value, JsonError> {
        if self.bytes[self.pos..].starts_with(literal.as_bytes()) {
            self.pos += literal.len();
            Ok(value)
        } else {
            Err(self.error(JsonErrorKind::Syntax, "unexpected token"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        match self.peek() {
            None => Err(self.error(JsonErrorKind::Syntax, "unexpected end of JSON input")),
            Some(b'n') => self.expect_literal("null", Value::Null),
            Some(b't') => self.expect_literal("true", Value::Bool(true)),
            Some(b'f') => self.expect_literal("false", Value::Bool(false)),
            Some(b'"') => self.string().map(Value::String),
            Some(b'[') => self.array(depth + 1),
            Some(b'{') => self.object(depth + 1),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error(JsonErrorKind::Syntax, "unexpected token")),
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.error(JsonErrorKind::TooDeep, "JSON nesting is too deep"));
        }
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error(JsonErrorKind::Syntax, "expected ',' or ']'")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.error(JsonErrorKind::TooDeep, "JSON nesting is too deep"));
        }
        self.pos += 1;
        let mut map = Map::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error(JsonErrorKind::Syntax, "expected a string key"));
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error(JsonErrorKind::Syntax, "expected ':'"));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth)?;
            map.insert(key, value);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.error(JsonErrorKind::Syntax, "expected ',' or '}'")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u16, JsonError> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error(JsonErrorKind::Syntax, "truncated \\u escape"))?;
        let mut code = 0u16;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.error(JsonErrorKind::Syntax, "invalid \\u escape")),
            };
            code = (code << 4) | u16::from(v);
        }
        self.pos += 4;
        Ok(code)
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        let mut run_start = self.pos;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error(JsonErrorKind::Syntax, "unterminated string"));
            };
            match b {
                b'"' => {
                    out.push_str(&self.text[run_start..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.text[run_start..self.pos]);
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error(JsonErrorKind::Syntax, "unterminated escape"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let unit = self.hex4()?;
                            out.push(self.finish_unicode_escape(unit)?);
                        }
                        _ => return Err(self.error(JsonErrorKind::Syntax, "invalid escape")),
                    }
                    run_start = self.pos;
                }
                0x00..=0x1f => {
                    return Err(self.error(JsonErrorKind::Syntax, "control character in string"));
                }
                _ => self.pos += 1,
            }
        }
    }

    fn finish_unicode_escape(&mut self, unit: u16) -> Result<char, JsonError> {
        match unit {
            0xD800..=0xDBFF => {
                if self.bytes[self.pos..].starts_with(b"\\u") {
                    let save = self.pos;
                    self.pos += 2;
                    let low = self.hex4()?;
                    if (0xDC00..=0xDFFF).contains(&low) {
                        let code = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                        return Ok(char::from_u32(code).expect("valid surrogate pair"));
                    }
                    self.pos = save;
                }
                Err(self.error(JsonErrorKind::LoneSurrogate, "JSON values must not contain unpaired surrogates"))
            }
            0xDC00..=0xDFFF => {
                Err(self.error(JsonErrorKind::LoneSurrogate, "JSON values must not contain unpaired surrogates"))
            }
            _ => Ok(char::from_u32(u32::from(unit)).expect("BMP scalar value")),
        }
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error(JsonErrorKind::Syntax, "invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error(JsonErrorKind::Syntax, "invalid number"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error(JsonErrorKind::Syntax, "invalid number"));
            }
            self.digits();
        }
        let lexeme = &self.text[start..self.pos];
        let x: f64 = lexeme.parse().map_err(|_| JsonError::at(JsonErrorKind::Syntax, "invalid number", start))?;
        if self.lenient && x.is_finite() {
            return Ok(Value::Number(x));
        }
        check_number(x).map(Value::Number).map_err(|mut e| {
            e.offset = Some(start);
            e
        })
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_malformed_text() {
        for bad in ["", "{", "[1,]", "{\"a\"}", "01", "1.", ".5", "+1", "\"\t\"", "nul", "[1] x", "\"\\x\""] {
            assert_eq!(parse(bad).unwrap_err().kind, JsonErrorKind::Syntax, "{bad:?}");
        }
    }

    #[test]
    fn depth_is_bounded() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(&deep).unwrap_err().kind, JsonErrorKind::TooDeep);
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn lenient_parse_keeps_unsafe_integers_as_javascript_reads_them() {
        assert_eq!(parse("9007199254740993").unwrap_err().kind, JsonErrorKind::UnsafeInteger);
        let value = parse_lenient("[9007199254740993,1e21]").unwrap();
        assert_eq!(value, Value::Array(vec![Value::Number(9007199254740992.0), Value::Number(1e21)]));
        assert_eq!(crate::canonical_json(&value), "[9007199254740992,1e+21]");
        assert_eq!(crate::check_value(&value).unwrap_err().kind, JsonErrorKind::UnsafeInteger);
        assert_eq!(parse_lenient("1e400").unwrap_err().kind, JsonErrorKind::NonFiniteNumber);
    }

    #[test]
    fn decodes_surrogate_pairs() {
        assert_eq!(parse("\"\\ud83d\\ude00\"").unwrap(), Value::from("😀"));
        assert_eq!(parse("\"\\ud800\"").unwrap_err().kind, JsonErrorKind::LoneSurrogate);
        assert_eq!(parse("\"\\ud800\\u0041\"").unwrap_err().kind, JsonErrorKind::LoneSurrogate);
    }
}
