//! Reading a module's answers straight out of the engine: a JavaScript value
//! becomes a [`gaos_json::Value`] without JSON text in between.
//!
//! Every view, `replayMetrics` and mapped action a module produces crosses
//! here, once per transition and seat. Checking it in JavaScript, writing it
//! with `JSON.stringify` and parsing the text again in Rust cost about half
//! of a transition of a small game (measured with the counter module); one
//! walk in Rust over the engine's own objects does all three.
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

/// The intrinsic prototypes of an engine's context, as the prelude captured
/// them before any module code ran.
pub(crate) struct DomainReader<'js> {
    object_proto: rquickjs::Value<'js>,
    array_proto: rquickjs::Value<'js>,
}

impl<'js> DomainReader<'js> {
    pub(crate) fn new(object_proto: &Object<'js>, array_proto: &Object<'js>) -> DomainReader<'js> {
        DomainReader { object_proto: object_proto.clone().into_value(), array_proto: array_proto.clone().into_value() }
    }

    /// `value` as a JSON value when it is certainly in the value domain.
    pub(crate) fn read(&self, value: &rquickjs::Value<'js>) -> Option<Value> {
        self.read_at(value, 0)
    }

    fn read_at(&self, value: &rquickjs::Value<'js>, depth: usize) -> Option<Value> {
        if let Some(x) = value.as_int() {
            return Some(Value::Number(f64::from(x)));
        }
        if let Some(x) = value.as_float() {
            // The safe range also refuses NaN and the infinities; `-0`
            // becomes `0`, as `JSON.stringify` writes it.
            return (-MAX_SAFE..=MAX_SAFE).contains(&x).then_some(Value::Number(x + 0.0));
        }
        if let Some(flag) = value.as_bool() {
            return Some(Value::Bool(flag));
        }
        if value.is_null() {
            return Some(Value::Null);
        }
        if value.is_string() {
            // A lone surrogate is not UTF-8: the conversion fails.
            return value.as_string()?.to_string().ok().map(Value::String);
        }
        if !value.is_object() || value.is_function() || depth > MAX_DEPTH {
            return None;
        }
        let object = value.as_object()?;
        let proto = object.get_prototype().map(Object::into_value);
        if value.is_array() {
            if proto.as_ref() != Some(&self.array_proto) {
                return None;
            }
            return self.read_array(object.clone().into_array()?, depth);
        }
        match &proto {
            Some(p) if *p != self.object_proto => return None,
            _ => {}
        }
        let mut map = Map::new();
        for entry in object.props::<Atom<'js>, rquickjs::Value<'js>>() {
            let (key, item) = entry.ok()?;
            // Through a JS string, not `Atom::to_string`: that one stops at
            // a NUL and assumes UTF-8. A key with a lone surrogate fails the
            // checked conversion, like a string value.
            let key = key.to_js_string().ok()?.to_string().ok()?;
            map.insert(key, self.read_at(&item, depth + 1)?);
        }
        Some(Value::Object(map))
    }

    fn read_array(&self, array: Array<'js>, depth: usize) -> Option<Value> {
        // Not `Array::len`: it assumes a length that fits an i32.
        let length = array.as_object().get::<_, rquickjs::Value<'js>>(PredefinedAtom::Length).ok()?.as_number()?;
        if !(0.0..=f64::from(u32::MAX)).contains(&length) {
            return None;
        }
        let length = length as u32;
        let mut items = Vec::with_capacity(length.min(1024) as usize);
        for i in 0..length {
            // A hole reads as undefined: not a JSON value.
            let item = array.get::<rquickjs::Value<'js>>(i as usize).ok()?;
            items.push(self.read_at(&item, depth + 1)?);
        }
        Some(Value::Array(items))
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
            DomainReader::new(&object, &array).read(&value).map(|v| v.to_string())
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
