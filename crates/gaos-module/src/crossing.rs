//! Reading a module's answers straight out of the engine: a JavaScript value
//! becomes a [`gaos_json::Value`] without JSON text in between.
//!
//! Every view, `replayMetrics` and mapped action a module produces crosses
//! here, once per transition and seat. Checking it in JavaScript, writing it
//! with `JSON.stringify` and parsing the text again in Rust cost about half
//! of a transition of a small game (measured with the counter module); one
//! walk in Rust over the engine's own objects does all three.
//!
//! The walk runs no JavaScript, so neither the engine's memory limit nor its
//! interrupt handler bounds it, and it copies every reference again (an
//! array the engine shares under many keys becomes many arrays). So it
//! charges a [`Budget`] as it goes (bytes of JSON text, about) and looks at
//! the call's deadline every few hundred values.
//!
//! The reader accepts exactly what the prelude's `plain(v, false)` accepts
//! and nothing more: anything it is not certain of (a function, a class
//! instance, an unsafe integer, a lone surrogate, deep nesting, where cycles
//! hide) answers `None`, and the caller asks the prelude for the exact
//! verdict and the sentence that names the offending part.

use gaos_json::{Map, Value};
use rquickjs::{Array, Atom, Object, atom::PredefinedAtom};

/// `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Nesting past which the prelude decides (its `plain` gives up at the same
/// depth, for the same reason: a cycle is only found by its exact walk).
const MAX_DEPTH: usize = 48;

/// Nodes read between two looks at the call's deadline.
const DEADLINE_EVERY: u32 = 1024;

/// Why a read stopped before the value was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overrun {
    /// The value is larger than the budget (the engine shares references;
    /// read out, every shared part counts each time it appears).
    Budget,
    /// The call's deadline passed during the read.
    Deadline,
}

/// What one value may cost to read: bytes of its JSON text (about), and the
/// call's deadline, looked at every [`DEADLINE_EVERY`] nodes. The walk runs
/// no JavaScript, so the engine's interrupt handler cannot stop it; this is
/// what does.
pub(crate) struct Budget<'a> {
    left: usize,
    nodes: u32,
    deadline: &'a dyn Fn() -> bool,
}

impl<'a> Budget<'a> {
    pub(crate) fn new(bytes: usize, deadline: &'a dyn Fn() -> bool) -> Budget<'a> {
        Budget { left: bytes, nodes: 0, deadline }
    }

    /// No limit (tests).
    #[cfg(test)]
    fn unlimited() -> Budget<'static> {
        Budget { left: usize::MAX, nodes: 0, deadline: &|| false }
    }

    /// Charge `bytes` for one node.
    fn charge(&mut self, bytes: usize) -> Result<(), Overrun> {
        self.left = self.left.checked_sub(bytes).ok_or(Overrun::Budget)?;
        self.nodes += 1;
        if self.nodes.is_multiple_of(DEADLINE_EVERY) && (self.deadline)() {
            return Err(Overrun::Deadline);
        }
        Ok(())
    }

    /// Charge a text of `bytes` read as a whole (a JSON text, markup).
    pub(crate) fn charge_text(&mut self, bytes: usize) -> Result<(), Overrun> {
        self.charge(bytes)
    }
}

/// The bytes of `x` in JSON text, about (exact for integers).
fn number_bytes(x: f64) -> usize {
    if x.fract() != 0.0 {
        return 18;
    }
    let mut n = x.abs();
    let mut digits = 1;
    while n >= 10.0 {
        n /= 10.0;
        digits += 1;
    }
    digits + usize::from(x < 0.0)
}

/// The intrinsic prototypes of an engine's context, as the prelude captured
/// them before any module code ran.
pub(crate) struct DomainReader<'js> {
    object_proto: rquickjs::Value<'js>,
    array_proto: rquickjs::Value<'js>,
}

/// A read: the value when it is certainly in the value domain, `None` when
/// the prelude must decide, `Err` when the read ran out of budget or time.
type Read = Result<Option<Value>, Overrun>;

impl<'js> DomainReader<'js> {
    pub(crate) fn new(object_proto: &Object<'js>, array_proto: &Object<'js>) -> DomainReader<'js> {
        DomainReader { object_proto: object_proto.clone().into_value(), array_proto: array_proto.clone().into_value() }
    }

    /// `value` as a JSON value when it is certainly in the value domain,
    /// charging `budget` as it goes.
    pub(crate) fn read(&self, value: &rquickjs::Value<'js>, budget: &mut Budget<'_>) -> Read {
        self.read_at(value, 0, budget)
    }

    fn read_at(&self, value: &rquickjs::Value<'js>, depth: usize, budget: &mut Budget<'_>) -> Read {
        if let Some(x) = value.as_int() {
            budget.charge(number_bytes(f64::from(x)))?;
            return Ok(Some(Value::Number(f64::from(x))));
        }
        if let Some(x) = value.as_float() {
            budget.charge(number_bytes(x))?;
            // The safe range also refuses NaN and the infinities; `-0`
            // becomes `0`, as `JSON.stringify` writes it.
            return Ok((-MAX_SAFE..=MAX_SAFE).contains(&x).then_some(Value::Number(x + 0.0)));
        }
        if let Some(flag) = value.as_bool() {
            budget.charge(5)?;
            return Ok(Some(Value::Bool(flag)));
        }
        if value.is_null() {
            budget.charge(4)?;
            return Ok(Some(Value::Null));
        }
        if value.is_string() {
            // A lone surrogate is not UTF-8: the conversion fails.
            let Some(text) = value.as_string().and_then(|s| s.to_string().ok()) else { return Ok(None) };
            budget.charge(text.len() + 2)?;
            return Ok(Some(Value::String(text)));
        }
        if !value.is_object() || value.is_function() || depth > MAX_DEPTH {
            return Ok(None);
        }
        let Some(object) = value.as_object() else { return Ok(None) };
        let proto = object.get_prototype().map(Object::into_value);
        if value.is_array() {
            if proto.as_ref() != Some(&self.array_proto) {
                return Ok(None);
            }
            let Some(array) = object.clone().into_array() else { return Ok(None) };
            return self.read_array(array, depth, budget);
        }
        match &proto {
            Some(p) if *p != self.object_proto => return Ok(None),
            _ => {}
        }
        budget.charge(2)?;
        let mut map = Map::new();
        for entry in object.props::<Atom<'js>, rquickjs::Value<'js>>() {
            let Ok((key, item)) = entry else { return Ok(None) };
            // Through a JS string, not `Atom::to_string`: that one stops at
            // a NUL and assumes UTF-8. A key with a lone surrogate fails the
            // checked conversion, like a string value.
            let Some(key) = key.to_js_string().ok().and_then(|k| k.to_string().ok()) else { return Ok(None) };
            budget.charge(key.len() + 4)?;
            let Some(item) = self.read_at(&item, depth + 1, budget)? else { return Ok(None) };
            map.insert(key, item);
        }
        Ok(Some(Value::Object(map)))
    }

    fn read_array(&self, array: Array<'js>, depth: usize, budget: &mut Budget<'_>) -> Read {
        // Not `Array::len`: it assumes a length that fits an i32.
        let length =
            array.as_object().get::<_, rquickjs::Value<'js>>(PredefinedAtom::Length).ok().and_then(|l| l.as_number());
        let Some(length) = length.filter(|l| (0.0..=f64::from(u32::MAX)).contains(l)) else { return Ok(None) };
        let length = length as u32;
        budget.charge(2)?;
        let mut items = Vec::with_capacity(length.min(1024) as usize);
        for i in 0..length {
            // A hole reads as undefined: not a JSON value.
            let Ok(item) = array.get::<rquickjs::Value<'js>>(i as usize) else { return Ok(None) };
            budget.charge(1)?;
            let Some(item) = self.read_at(&item, depth + 1, budget)? else { return Ok(None) };
            items.push(item);
        }
        Ok(Some(Value::Array(items)))
    }
}

#[cfg(test)]
mod tests {
    use rquickjs::{Context, Runtime};

    use super::*;

    /// `expression` read by the reader, as JSON text (`None`: refused).
    fn read(expression: &str) -> Option<String> {
        let runtime = Runtime::new().expect("a runtime");
        let context = Context::full(&runtime).expect("a context");
        context.with(|ctx| {
            let globals = ctx.globals();
            let object: Object = globals.get::<_, Object>("Object").and_then(|o| o.get("prototype")).expect("Object");
            let array: Object = globals.get::<_, Object>("Array").and_then(|o| o.get("prototype")).expect("Array");
            let value: rquickjs::Value = ctx.eval(format!("({expression})")).expect("the expression evaluates");
            let read = DomainReader::new(&object, &array).read(&value, &mut Budget::unlimited());
            read.expect("no budget to run out of").map(|v| v.to_string())
        })
    }

    #[test]
    fn plain_json_values_read_as_themselves() {
        assert_eq!(
            read(r#"{b: [1, 2.5, "x", true, null], a: {c: {}}}"#).as_deref(),
            Some(r#"{"a":{"c":{}},"b":[1,2.5,"x",true,null]}"#)
        );
        assert_eq!(read("[]").as_deref(), Some("[]"));
        assert_eq!(read("Object.create(null)").as_deref(), Some("{}"), "a null prototype is a plain object");
        assert_eq!(read(r#"JSON.parse('{"__proto__": 1}')"#).as_deref(), Some(r#"{"__proto__":1}"#));
        assert_eq!(read("{10: 1, 2: 2, x: 3}").as_deref(), Some(r#"{"10":1,"2":2,"x":3}"#));
        assert_eq!(read(r#""\u{1F600} paired""#).as_deref(), Some("\"\u{1F600} paired\""));
        assert_eq!(
            read(r#"{"a\u0000b": "c\u0000d"}"#).as_deref(),
            Some(r#"{"a\u0000b":"c\u0000d"}"#),
            "NUL is a character"
        );
    }

    #[test]
    fn numbers_follow_json_stringify_and_the_safe_range() {
        assert_eq!(read("-0").as_deref(), Some("0"), "JSON.stringify writes -0 as 0");
        assert_eq!(read("[-0.0]").as_deref(), Some("[0]"));
        assert_eq!(read("9007199254740991").as_deref(), Some("9007199254740991"));
        assert_eq!(read("-9007199254740991").as_deref(), Some("-9007199254740991"));
        assert_eq!(read("0.1 + 0.2").as_deref(), Some("0.30000000000000004"));
        for refused in ["9007199254740992", "1e300", "NaN", "Infinity", "-Infinity", "[NaN]", "{x: 2 ** 60}"] {
            assert_eq!(read(refused), None, "{refused}");
        }
    }

    #[test]
    fn anything_outside_the_domain_is_left_to_the_prelude() {
        for refused in [
            "undefined",
            "[1, undefined]",
            "{x: undefined}",
            "[1, , 3]",
            "() => 1",
            "{f() {}}",
            "Symbol('s')",
            "10n",
            "new Date(0)",
            "new Map()",
            "new (class Point { constructor() { this.x = 1; } })()",
            r#""\uD800 lone""#,
            r#"{"\uDC00": 1}"#,
            "Object.setPrototypeOf([1], Object.prototype)",
            "Object.create(Array.prototype)",
            "(() => { let v = 1; for (let i = 0; i < 60; i++) v = [v]; return v; })()",
            "(() => { const a = []; a.push(a); return a; })()",
        ] {
            assert_eq!(read(refused), None, "{refused}");
        }
    }

    #[test]
    fn what_json_stringify_skips_is_skipped() {
        // Symbol keys and non-enumerable properties are not part of the JSON
        // text, so not of the value; extra properties of an array neither.
        assert_eq!(read("{[Symbol('k')]: 1, x: 1}").as_deref(), Some(r#"{"x":1}"#));
        assert_eq!(read("Object.defineProperty({x: 1}, 'hidden', {value: 2})").as_deref(), Some(r#"{"x":1}"#));
        assert_eq!(read("Object.assign([1, 2], {extra: 3})").as_deref(), Some("[1,2]"));
        assert_eq!(read("{get x() { return 7; }}").as_deref(), Some(r#"{"x":7}"#), "an enumerable getter is read once");
    }
}
