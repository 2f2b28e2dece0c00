use crate::error::{JsonError, JsonErrorKind};

/// 2^53 − 1, the largest integer a JavaScript number holds exactly.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

pub mod map;

pub use map::Map;

/// A JSON value with JavaScript semantics: every number is an IEEE-754 double.
///
/// Invariant (kept by every constructor in this crate): numbers are finite and
/// integral numbers are safe integers. `-0` compares equal to `0` and prints
/// as `0`.
#[derive(Clone, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// True when `x` is an integer within ±(2^53−1).
pub fn is_safe_integer(x: f64) -> bool {
    x.fract() == 0.0 && x.abs() <= MAX_SAFE_INTEGER
}

/// An integer as a JSON number: only within the JavaScript safe range.
pub(crate) fn check_integer(v: i128) -> Result<f64, JsonError> {
    if v.unsigned_abs() > MAX_SAFE_INTEGER as u128 {
        return Err(JsonError::new(
            JsonErrorKind::UnsafeInteger,
            "JSON integer numbers must be within the JavaScript safe range",
        ));
    }
    Ok(v as f64)
}

pub(crate) fn check_number(x: f64) -> Result<f64, JsonError> {
    if !x.is_finite() {
        return Err(JsonError::new(JsonErrorKind::NonFiniteNumber, "JSON values must contain only finite numbers"));
    }
    if x.fract() == 0.0 && x.abs() > MAX_SAFE_INTEGER {
        return Err(JsonError::new(
            JsonErrorKind::UnsafeInteger,
            "JSON integer numbers must be within the JavaScript safe range",
        ));
    }
    Ok(x)
}

/// Whether `value` lies in the reference's value domain (kernel spec §1.1):
/// every number finite and, when integral, a safe integer. Values built by
/// [`crate::parse`] always do; those of [`crate::parse_lenient`] or built by
/// hand with `Value::Number` may not.
pub fn check_value(value: &Value) -> Result<(), JsonError> {
    match value {
        Value::Number(x) => check_number(*x).map(|_| ()),
        Value::Array(items) => items.iter().try_for_each(check_value),
        Value::Object(map) => map.values().try_for_each(check_value),
        Value::Null | Value::Bool(_) | Value::String(_) => Ok(()),
    }
}

impl Value {
    /// A number value, refusing non-finite numbers and unsafe integers.
    pub fn number(x: f64) -> Result<Value, JsonError> {
        check_number(x).map(Value::Number)
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(x) => Some(*x),
            _ => None,
        }
    }

    /// The number as an integer, when it is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(x) if x.fract() == 0.0 => Some(*x as i64),
            _ => None,
        }
    }

    /// The number as a non-negative integer, when it is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(x) if x.fract() == 0.0 && *x >= 0.0 => Some(*x as u64),
            _ => None,
        }
    }

    /// The number as a u32, when it is an integer in `0..=u32::MAX`.
    pub fn as_u32(&self) -> Option<u32> {
        self.as_u64().and_then(|v| u32::try_from(v).ok())
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// Member `key` of an object (`None` for non-objects and absent keys).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|map| map.get(key))
    }

    /// A short name of the value's type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Self {
        Value::String(s.clone())
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Self {
        Value::Object(map)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Self {
        Value::Array(items)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

macro_rules! from_small_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::Number(f64::from(v))
            }
        }
    )*};
}
from_small_int!(u8, u16, u32, i8, i16, i32);

macro_rules! from_wide_int {
    ($($t:ty),*) => {$(
        /// Counters and sizes. Values beyond 2^53−1 cannot occur in a GAOS
        /// session (they would take centuries of transitions); debug builds
        /// assert it.
        impl From<$t> for Value {
            fn from(v: $t) -> Self {
                let x = v as f64;
                debug_assert!(x.abs() <= MAX_SAFE_INTEGER, "integer {v} outside the safe range");
                Value::Number(x)
            }
        }
    )*};
}
from_wide_int!(u64, i64, usize);

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}
