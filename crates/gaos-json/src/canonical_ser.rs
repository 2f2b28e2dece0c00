//! Canonical JSON of any `Serialize` value, written straight into text.
//!
//! The result is byte for byte `canonical_json(&to_value(x)?)`, with the same
//! errors, but no [`Value`](crate::Value) tree is built: hosts write the
//! canonical text of every event, answer and checkpoint they store, and the
//! tree (a node and a key per member) was most of that cost.
//!
//! Objects: serde hands a struct's fields in declaration order and a map's
//! entries in its own order, while canonical JSON wants code-point order.
//! Members are written as they come, each span remembered; when they came
//! out of order (or a key repeats, where the later member wins as
//! [`Map::insert`](crate::Map::insert) does) the object's text is rebuilt
//! from the spans in order, which costs one copy of that object.

use std::ops::Range;

use serde::ser::{self, Serialize};

use crate::canonical::{write_number, write_string};
use crate::error::{JsonError, JsonErrorKind};
use crate::value::{check_integer, check_number};

/// Canonical JSON of any `Serialize` value.
pub fn to_canonical_string<T: Serialize + ?Sized>(value: &T) -> Result<String, JsonError> {
    let mut sink = Sink { out: String::with_capacity(128), members: Vec::new(), scratch: String::new() };
    value.serialize(Writer { sink: &mut sink })?;
    Ok(sink.out)
}

fn unsupported(message: &str) -> JsonError {
    JsonError::new(JsonErrorKind::Unsupported, message.to_owned())
}

/// The text being written, and the members of the objects still open (a
/// stack: an object's members sit above its parent's until it closes), so
/// no object allocates its own list.
struct Sink {
    out: String,
    members: Vec<Member>,
    /// Where an out-of-order object is rebuilt before it is copied back.
    scratch: String,
}

/// One member of an open object: where its `"key":value` text lies in the
/// output, and its key.
struct Member {
    key: Key,
    start: usize,
    end: usize,
}

/// A member's key for ordering: the text between the quotes (most keys
/// need no escaping, so the written text is the key itself), or a copy of
/// a key whose written form has escapes (and so another order).
enum Key {
    InText(Range<usize>),
    Escaped(String),
}

fn key_of<'s>(out: &'s str, member: &'s Member) -> &'s str {
    match &member.key {
        Key::InText(range) => &out[range.clone()],
        Key::Escaped(key) => key,
    }
}

impl Sink {
    fn key<'s>(&'s self, member: &'s Member) -> &'s str {
        key_of(&self.out, member)
    }

    /// Write `"key"`; say how to read the key back for ordering.
    fn write_key(&mut self, key: &str) -> Key {
        let start = self.out.len();
        write_string(key, &mut self.out);
        if self.out.len() == start + key.len() + 2 {
            Key::InText(start + 1..self.out.len() - 1)
        } else {
            Key::Escaped(key.to_owned())
        }
    }
}

/// serde's ten integer methods, each widened to `i128` for `$body`
/// (`u128` beyond `i128` saturates: refused as unsafe anyway).
macro_rules! integers {
    ($out:ty, $body:expr) => {
        integers!(@one $out, $body, serialize_i8 i8, serialize_i16 i16, serialize_i32 i32,
            serialize_i64 i64, serialize_u8 u8, serialize_u16 u16, serialize_u32 u32, serialize_u64 u64);
        fn serialize_i128(self, v: i128) -> $out {
            ($body)(self, v)
        }
        fn serialize_u128(self, v: u128) -> $out {
            ($body)(self, i128::try_from(v).unwrap_or(i128::MAX))
        }
    };
    (@one $out:ty, $body:expr, $($method:ident $ty:ty),*) => {
        $(fn $method(self, v: $ty) -> $out {
            ($body)(self, i128::from(v))
        })*
    };
}

struct Writer<'a> {
    sink: &'a mut Sink,
}

impl Writer<'_> {
    fn int(self, v: i128) -> Result<(), JsonError> {
        write_number(check_integer(v)?, &mut self.sink.out);
        Ok(())
    }

    /// `{"variant":` — the opening of an externally tagged variant.
    fn open_variant(&mut self, variant: &str) {
        self.sink.out.push('{');
        write_string(variant, &mut self.sink.out);
        self.sink.out.push(':');
    }
}

impl<'a> ser::Serializer for Writer<'a> {
    type Ok = ();
    type Error = JsonError;
    type SerializeSeq = SeqWriter<'a>;
    type SerializeTuple = SeqWriter<'a>;
    type SerializeTupleStruct = SeqWriter<'a>;
    type SerializeTupleVariant = SeqWriter<'a>;
    type SerializeMap = ObjectWriter<'a>;
    type SerializeStruct = ObjectWriter<'a>;
    type SerializeStructVariant = ObjectWriter<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), JsonError> {
        self.sink.out.push_str(if v { "true" } else { "false" });
        Ok(())
    }
    integers!(Result<(), JsonError>, |this: Self, v: i128| this.int(v));
    fn serialize_f32(self, v: f32) -> Result<(), JsonError> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), JsonError> {
        write_number(check_number(v)?, &mut self.sink.out);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), JsonError> {
        write_string(v.encode_utf8(&mut [0; 4]), &mut self.sink.out);
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), JsonError> {
        write_string(v, &mut self.sink.out);
        Ok(())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), JsonError> {
        Err(unsupported("raw bytes are not JSON values"))
    }
    fn serialize_none(self) -> Result<(), JsonError> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), JsonError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), JsonError> {
        self.sink.out.push_str("null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), JsonError> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), JsonError> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), JsonError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), JsonError> {
        self.open_variant(variant);
        value.serialize(Writer { sink: &mut *self.sink })?;
        self.sink.out.push('}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<SeqWriter<'a>, JsonError> {
        self.sink.out.push('[');
        Ok(SeqWriter { sink: self.sink, first: true, variant: false })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqWriter<'a>, JsonError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqWriter<'a>, JsonError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<SeqWriter<'a>, JsonError> {
        self.open_variant(variant);
        self.sink.out.push('[');
        Ok(SeqWriter { sink: self.sink, first: true, variant: true })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<ObjectWriter<'a>, JsonError> {
        Ok(ObjectWriter::open(self.sink, false))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<ObjectWriter<'a>, JsonError> {
        Ok(ObjectWriter::open(self.sink, false))
    }
    fn serialize_struct_variant(
        mut self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<ObjectWriter<'a>, JsonError> {
        self.open_variant(variant);
        Ok(ObjectWriter::open(self.sink, true))
    }
}

struct SeqWriter<'a> {
    sink: &'a mut Sink,
    first: bool,
    /// Inside `{"variant":[…]}`: one more brace to close.
    variant: bool,
}

impl SeqWriter<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), JsonError> {
        if !self.first {
            self.sink.out.push(',');
        }
        self.first = false;
        value.serialize(Writer { sink: &mut *self.sink })
    }

    fn close(self) -> Result<(), JsonError> {
        self.sink.out.push_str(if self.variant { "]}" } else { "]" });
        Ok(())
    }
}

/// serde's four sequence shapes are one JSON array to this writer.
macro_rules! seq_impl {
    ($trait:ident, $method:ident) => {
        impl ser::$trait for SeqWriter<'_> {
            type Ok = ();
            type Error = JsonError;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), JsonError> {
                self.element(value)
            }
            fn end(self) -> Result<(), JsonError> {
                self.close()
            }
        }
    };
}
seq_impl!(SerializeSeq, serialize_element);
seq_impl!(SerializeTuple, serialize_element);
seq_impl!(SerializeTupleStruct, serialize_field);
seq_impl!(SerializeTupleVariant, serialize_field);

struct ObjectWriter<'a> {
    sink: &'a mut Sink,
    /// Where the object's `{` is.
    start: usize,
    /// Where the object's members begin on the sink's member stack.
    base: usize,
    /// Every key so far came after the one before it (no reordering needed).
    in_order: bool,
    /// A map entry whose key is written and whose value comes next.
    pending: Option<(usize, Key)>,
    /// Inside `{"variant":{…}}`: one more brace to close.
    variant: bool,
}

impl<'a> ObjectWriter<'a> {
    fn open(sink: &'a mut Sink, variant: bool) -> Self {
        let start = sink.out.len();
        sink.out.push('{');
        let base = sink.members.len();
        ObjectWriter { sink, start, base, in_order: true, pending: None, variant }
    }

    /// Start a member: the comma before it, then its key.
    fn begin<K: Serialize + ?Sized>(&mut self, key: &K) -> Result<(usize, Key), JsonError> {
        if self.sink.members.len() > self.base {
            self.sink.out.push(',');
        }
        let start = self.sink.out.len();
        Ok((start, key.serialize(KeyWriter { sink: &mut *self.sink })?))
    }

    /// Write `:value` after a begun member and record the member.
    fn finish<T: Serialize + ?Sized>(&mut self, (start, key): (usize, Key), value: &T) -> Result<(), JsonError> {
        self.sink.out.push(':');
        value.serialize(Writer { sink: &mut *self.sink })?;
        let member = Member { key, start, end: self.sink.out.len() };
        if let Some(last) = self.sink.members[self.base..].last() {
            self.in_order &= self.sink.key(last) < self.sink.key(&member);
        }
        self.sink.members.push(member);
        Ok(())
    }

    fn member<K: Serialize + ?Sized, T: Serialize + ?Sized>(&mut self, key: &K, value: &T) -> Result<(), JsonError> {
        let begun = self.begin(key)?;
        self.finish(begun, value)
    }

    fn close(mut self) -> Result<(), JsonError> {
        if !self.in_order {
            self.reorder();
        }
        self.sink.members.truncate(self.base);
        self.sink.out.push_str(if self.variant { "}}" } else { "}" });
        Ok(())
    }

    /// Rewrite the members in key order, the last of equal keys winning.
    fn reorder(&mut self) {
        let Sink { out, members, scratch } = &mut *self.sink;
        let own = &mut members[self.base..];
        let text: &str = out;
        // A stable sort keeps equal keys in the order they came, so the
        // winner of a repeated key is the last of its run.
        own.sort_by(|a, b| key_of(text, a).cmp(key_of(text, b)));
        scratch.clear();
        scratch.push('{');
        for (i, member) in own.iter().enumerate() {
            if own.get(i + 1).is_some_and(|next| key_of(text, next) == key_of(text, member)) {
                continue;
            }
            if scratch.len() > 1 {
                scratch.push(',');
            }
            scratch.push_str(&text[member.start..member.end]);
        }
        out.truncate(self.start);
        out.push_str(scratch);
    }
}

impl ser::SerializeMap for ObjectWriter<'_> {
    type Ok = ();
    type Error = JsonError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), JsonError> {
        self.pending = Some(self.begin(key)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), JsonError> {
        let begun = self.pending.take().ok_or_else(|| unsupported("map value without a key"))?;
        self.finish(begun, value)
    }
    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), JsonError> {
        self.member(key, value)
    }
    fn end(self) -> Result<(), JsonError> {
        self.close()
    }
}

/// A struct and a struct variant's fields are members of one object.
macro_rules! struct_impl {
    ($trait:ident) => {
        impl ser::$trait for ObjectWriter<'_> {
            type Ok = ();
            type Error = JsonError;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), JsonError> {
                self.member(key, value)
            }
            fn end(self) -> Result<(), JsonError> {
                self.close()
            }
        }
    };
}
struct_impl!(SerializeStruct);
struct_impl!(SerializeStructVariant);

/// A map key written as `"key"` where the member begins: strings as they
/// are, numbers as their canonical text (as `to_value` keys them);
/// anything else is refused.
struct KeyWriter<'a> {
    sink: &'a mut Sink,
}

fn not_a_key(kind: &str) -> JsonError {
    JsonError::new(JsonErrorKind::Unsupported, format!("JSON object keys must be strings, not {kind}"))
}

impl KeyWriter<'_> {
    fn number(self, x: f64) -> Result<Key, JsonError> {
        let out = &mut self.sink.out;
        out.push('"');
        let start = out.len();
        write_number(x, out);
        let range = start..out.len();
        out.push('"');
        Ok(Key::InText(range))
    }
}

impl<'a> ser::Serializer for KeyWriter<'a> {
    type Ok = Key;
    type Error = JsonError;
    type SerializeSeq = ser::Impossible<Key, JsonError>;
    type SerializeTuple = ser::Impossible<Key, JsonError>;
    type SerializeTupleStruct = ser::Impossible<Key, JsonError>;
    type SerializeTupleVariant = ser::Impossible<Key, JsonError>;
    type SerializeMap = ser::Impossible<Key, JsonError>;
    type SerializeStruct = ser::Impossible<Key, JsonError>;
    type SerializeStructVariant = ser::Impossible<Key, JsonError>;

    fn serialize_bool(self, _v: bool) -> Result<Key, JsonError> {
        Err(not_a_key("boolean"))
    }
    integers!(Result<Key, JsonError>, |this: Self, v: i128| this.number(check_integer(v)?));
    fn serialize_f32(self, v: f32) -> Result<Key, JsonError> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Key, JsonError> {
        self.number(check_number(v)?)
    }
    fn serialize_char(self, v: char) -> Result<Key, JsonError> {
        Ok(self.sink.write_key(v.encode_utf8(&mut [0; 4])))
    }
    fn serialize_str(self, v: &str) -> Result<Key, JsonError> {
        Ok(self.sink.write_key(v))
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Key, JsonError> {
        Err(unsupported("raw bytes are not JSON values"))
    }
    fn serialize_none(self) -> Result<Key, JsonError> {
        Err(not_a_key("null"))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Key, JsonError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Key, JsonError> {
        Err(not_a_key("null"))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Key, JsonError> {
        Err(not_a_key("null"))
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<Key, JsonError> {
        Ok(self.sink.write_key(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<Key, JsonError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Key, JsonError> {
        Err(not_a_key("object"))
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, JsonError> {
        Err(not_a_key("array"))
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, JsonError> {
        Err(not_a_key("array"))
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct, JsonError> {
        Err(not_a_key("array"))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, JsonError> {
        Err(not_a_key("object"))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, JsonError> {
        Err(not_a_key("object"))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct, JsonError> {
        Err(not_a_key("object"))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, JsonError> {
        Err(not_a_key("object"))
    }
}
