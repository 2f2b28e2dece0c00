//! serde bridge: `Deserialize` for [`Value`] (from any serde format, with the
//! value-domain checks) and [`from_value`] to decode a `Value` into a Rust
//! type.

use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde::forward_to_deserialize_any;

use crate::error::{JsonError, JsonErrorKind};
use crate::value::{MAX_SAFE_INTEGER, Map, Value, check_number};

impl<'de> de::Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

fn safe<E: de::Error>(x: f64) -> Result<Value, E> {
    check_number(x).map(Value::Number).map_err(|e| E::custom(e.message))
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        if v.unsigned_abs() > MAX_SAFE_INTEGER as u64 {
            return Err(E::custom("JSON integer numbers must be within the JavaScript safe range"));
        }
        Ok(Value::Number(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        if v > MAX_SAFE_INTEGER as u64 {
            return Err(E::custom("JSON integer numbers must be within the JavaScript safe range"));
        }
        Ok(Value::Number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        safe(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        de::Deserialize::deserialize(d)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some((key, value)) = access.next_entry::<String, Value>()? {
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

impl<'de> de::Deserialize<'de> for Map {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        struct MapVisitor;
        impl<'de> Visitor<'de> for MapVisitor {
            type Value = Map;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Map, A::Error> {
                let mut map = Map::new();
                while let Some((key, value)) = access.next_entry::<String, Value>()? {
                    map.insert(key, value);
                }
                Ok(map)
            }
        }
        d.deserialize_map(MapVisitor)
    }
}

/// Decode a [`Value`] into any `Deserialize` type.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, JsonError> {
    T::deserialize(value)
}

impl<'de> IntoDeserializer<'de, JsonError> for Value {
    type Deserializer = Value;
    fn into_deserializer(self) -> Value {
        self
    }
}

impl<'de> Deserializer<'de> for Value {
    type Error = JsonError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(x) if x.fract() == 0.0 && x >= 0.0 => visitor.visit_u64(x as u64),
            Value::Number(x) if x.fract() == 0.0 => visitor.visit_i64(x as i64),
            Value::Number(x) => visitor.visit_f64(x),
            Value::String(s) => visitor.visit_string(s),
            Value::Array(items) => {
                let len = items.len();
                let mut seq = SeqDeserializer(items.into_iter());
                let out = visitor.visit_seq(&mut seq)?;
                if seq.0.len() == 0 { Ok(out) } else { Err(de::Error::invalid_length(len, &"fewer elements in array")) }
            }
            Value::Object(map) => visitor.visit_map(MapDeserializer { iter: map.into_iter(), value: None }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        match self {
            Value::String(variant) => visitor.visit_enum(EnumDeserializer { variant, value: None }),
            Value::Object(map) if map.len() == 1 => {
                let (variant, value) = map.into_iter().next().expect("one entry");
                visitor.visit_enum(EnumDeserializer { variant, value: Some(value) })
            }
            other => Err(JsonError::new(
                JsonErrorKind::Shape,
                format!("expected an enum as a string or single-key object, found {}", other.type_name()),
            )),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

struct SeqDeserializer(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for SeqDeserializer {
    type Error = JsonError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, JsonError> {
        match self.0.next() {
            Some(value) => seed.deserialize(value).map(Some),
            None => Ok(None),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct MapDeserializer {
    iter: crate::value::map::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for MapDeserializer {
    type Error = JsonError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, JsonError> {
        match self.iter.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(Value::String(key)).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, JsonError> {
        let value = self
            .value
            .take()
            .ok_or_else(|| JsonError::new(JsonErrorKind::Shape, "map value requested before its key"))?;
        seed.deserialize(value)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct EnumDeserializer {
    variant: String,
    value: Option<Value>,
}

impl<'de> de::EnumAccess<'de> for EnumDeserializer {
    type Error = JsonError;
    type Variant = VariantDeserializer;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, VariantDeserializer), JsonError> {
        let variant = seed.deserialize(Value::String(self.variant))?;
        Ok((variant, VariantDeserializer(self.value)))
    }
}

struct VariantDeserializer(Option<Value>);

impl<'de> de::VariantAccess<'de> for VariantDeserializer {
    type Error = JsonError;
    fn unit_variant(self) -> Result<(), JsonError> {
        match self.0 {
            None | Some(Value::Null) => Ok(()),
            Some(_) => Err(JsonError::new(JsonErrorKind::Shape, "expected a unit variant")),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, JsonError> {
        match self.0 {
            Some(value) => seed.deserialize(value),
            None => Err(JsonError::new(JsonErrorKind::Shape, "expected a newtype variant")),
        }
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, JsonError> {
        match self.0 {
            Some(value @ Value::Array(_)) => value.deserialize_any(visitor),
            _ => Err(JsonError::new(JsonErrorKind::Shape, "expected a tuple variant")),
        }
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        match self.0 {
            Some(value @ Value::Object(_)) => value.deserialize_any(visitor),
            _ => Err(JsonError::new(JsonErrorKind::Shape, "expected a struct variant")),
        }
    }
}
