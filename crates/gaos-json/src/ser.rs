//! serde bridge: any `Serialize` type into a [`Value`], and `Serialize` for
//! [`Value`] itself.

use serde::ser::{self, Serialize};

use crate::error::{JsonError, JsonErrorKind};
use crate::value::{Map, Value, check_number};

impl Serialize for Value {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(x) if x.fract() == 0.0 => serializer.serialize_i64(*x as i64),
            Value::Number(x) => serializer.serialize_f64(*x),
            Value::String(s) => serializer.serialize_str(s),
            Value::Array(items) => items.serialize(serializer),
            Value::Object(map) => map.serialize(serializer),
        }
    }
}

impl Serialize for Map {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

/// Convert any `Serialize` value into a [`Value`], enforcing the JSON value
/// domain (finite numbers, safe integers, string map keys).
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, JsonError> {
    value.serialize(ValueSerializer)
}

fn int(v: i128) -> Result<Value, JsonError> {
    crate::value::check_integer(v).map(Value::Number)
}

pub(crate) struct ValueSerializer;

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = JsonError;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = VariantSeqBuilder;
    type SerializeMap = MapBuilder;
    type SerializeStruct = MapBuilder;
    type SerializeStructVariant = VariantMapBuilder;

    fn serialize_bool(self, v: bool) -> Result<Value, JsonError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, JsonError> {
        int(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Value, JsonError> {
        int(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Value, JsonError> {
        int(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<Value, JsonError> {
        int(v.into())
    }
    fn serialize_i128(self, v: i128) -> Result<Value, JsonError> {
        int(v)
    }
    fn serialize_u8(self, v: u8) -> Result<Value, JsonError> {
        int(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<Value, JsonError> {
        int(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<Value, JsonError> {
        int(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<Value, JsonError> {
        int(v.into())
    }
    fn serialize_u128(self, v: u128) -> Result<Value, JsonError> {
        int(i128::try_from(v).unwrap_or(i128::MAX))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, JsonError> {
        check_number(f64::from(v)).map(Value::Number)
    }
    fn serialize_f64(self, v: f64) -> Result<Value, JsonError> {
        check_number(v).map(Value::Number)
    }
    fn serialize_char(self, v: char) -> Result<Value, JsonError> {
        Ok(Value::String(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, JsonError> {
        Ok(Value::String(v.to_owned()))
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Value, JsonError> {
        Err(JsonError::new(JsonErrorKind::Unsupported, "raw bytes are not JSON values"))
    }
    fn serialize_none(self) -> Result<Value, JsonError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, JsonError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, JsonError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, JsonError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, JsonError> {
        Ok(Value::String(variant.to_owned()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, JsonError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, JsonError> {
        let mut map = Map::new();
        map.insert(variant.to_owned(), to_value(value)?);
        Ok(Value::Object(map))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, JsonError> {
        Ok(SeqBuilder(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, JsonError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqBuilder, JsonError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSeqBuilder, JsonError> {
        Ok(VariantSeqBuilder(variant, Vec::with_capacity(len)))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapBuilder, JsonError> {
        Ok(MapBuilder { map: Map::new(), key: None })
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<MapBuilder, JsonError> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<VariantMapBuilder, JsonError> {
        Ok(VariantMapBuilder(variant, Map::new()))
    }
}

pub(crate) struct SeqBuilder(Vec<Value>);

impl ser::SerializeSeq for SeqBuilder {
    type Ok = Value;
    type Error = JsonError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), JsonError> {
        self.0.push(to_value(value)?);
        Ok(())
    }
    fn end(self) -> Result<Value, JsonError> {
        Ok(Value::Array(self.0))
    }
}

impl ser::SerializeTuple for SeqBuilder {
    type Ok = Value;
    type Error = JsonError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), JsonError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, JsonError> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for SeqBuilder {
    type Ok = Value;
    type Error = JsonError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), JsonError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, JsonError> {
        ser::SerializeSeq::end(self)
    }
}

pub(crate) struct VariantSeqBuilder(&'static str, Vec<Value>);

impl ser::SerializeTupleVariant for VariantSeqBuilder {
    type Ok = Value;
    type Error = JsonError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), JsonError> {
        self.1.push(to_value(value)?);
        Ok(())
    }
    fn end(self) -> Result<Value, JsonError> {
        let mut map = Map::new();
        map.insert(self.0.to_owned(), Value::Array(self.1));
        Ok(Value::Object(map))
    }
}

pub(crate) struct MapBuilder {
    map: Map,
    key: Option<String>,
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Value;
    type Error = JsonError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), JsonError> {
        match to_value(key)? {
            Value::String(s) => self.key = Some(s),
            Value::Number(x) => self.key = Some(crate::canonical_json(&Value::Number(x))),
            other => {
                return Err(JsonError::new(
                    JsonErrorKind::Unsupported,
                    format!("JSON object keys must be strings, not {}", other.type_name()),
                ));
            }
        }
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), JsonError> {
        let key =
            self.key.take().ok_or_else(|| JsonError::new(JsonErrorKind::Unsupported, "map value without a key"))?;
        self.map.insert(key, to_value(value)?);
        Ok(())
    }
    fn end(self) -> Result<Value, JsonError> {
        Ok(Value::Object(self.map))
    }
}

impl ser::SerializeStruct for MapBuilder {
    type Ok = Value;
    type Error = JsonError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), JsonError> {
        self.map.insert(key.to_owned(), to_value(value)?);
        Ok(())
    }
    fn end(self) -> Result<Value, JsonError> {
        Ok(Value::Object(self.map))
    }
}

pub(crate) struct VariantMapBuilder(&'static str, Map);

impl ser::SerializeStructVariant for VariantMapBuilder {
    type Ok = Value;
    type Error = JsonError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), JsonError> {
        self.1.insert(key.to_owned(), to_value(value)?);
        Ok(())
    }
    fn end(self) -> Result<Value, JsonError> {
        let mut map = Map::new();
        map.insert(self.0.to_owned(), Value::Object(self.1));
        Ok(Value::Object(map))
    }
}
