//! [`Map`]: a JSON object with keys in canonical (code-point) order.
//!
//! Most JSON objects a session handles are small (a command `{"n": 1}`, an
//! action payload, a receipt). A `BTreeMap` spends a whole 11-slot node
//! (~630 bytes) on each of them, and the kernel keeps several per event for
//! the life of a session. So a map of up to [`SMALL`] entries is a sorted
//! `Vec` (one allocation the size of its entries); a larger one switches to a
//! `BTreeMap`, so building big objects in any key order stays O(n log n).
//! Keys compare as bytes, which for UTF-8 is Unicode code-point order:
//! iteration is always in canonical key order.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::collections::btree_map;
use std::fmt;

use super::Value;

/// Entries kept in a sorted `Vec` before switching to a `BTreeMap`.
const SMALL: usize = 32;

/// A JSON object: string keys in code-point order, JSON values.
#[derive(Clone, Default)]
pub struct Map {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    Small(Vec<(String, Value)>),
    Large(BTreeMap<String, Value>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Small(Vec::new())
    }
}

impl Map {
    /// An empty object (no allocation).
    pub const fn new() -> Self {
        Map { repr: Repr::Small(Vec::new()) }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Small(v) => v.len(),
            Repr::Large(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&mut self) {
        self.repr = Repr::Small(Vec::new());
    }

    fn find<Q: Ord + ?Sized>(v: &[(String, Value)], key: &Q) -> Result<usize, usize>
    where
        String: Borrow<Q>,
    {
        v.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&Value>
    where
        String: Borrow<Q>,
    {
        match &self.repr {
            Repr::Small(v) => Self::find(v, key).ok().map(|i| &v[i].1),
            Repr::Large(m) => m.get(key),
        }
    }

    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut Value>
    where
        String: Borrow<Q>,
    {
        match &mut self.repr {
            Repr::Small(v) => Self::find(v, key).ok().map(move |i| &mut v[i].1),
            Repr::Large(m) => m.get_mut(key),
        }
    }

    pub fn get_key_value<Q: Ord + ?Sized>(&self, key: &Q) -> Option<(&String, &Value)>
    where
        String: Borrow<Q>,
    {
        match &self.repr {
            Repr::Small(v) => Self::find(v, key).ok().map(|i| (&v[i].0, &v[i].1)),
            Repr::Large(m) => m.get_key_value(key),
        }
    }

    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        String: Borrow<Q>,
    {
        self.get(key).is_some()
    }

    /// Insert or replace; answers the value the key had.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match &mut self.repr {
            Repr::Small(v) => {
                // Keys often arrive in order (canonical text, sorted sources).
                if v.last().is_none_or(|(last, _)| *last < key) {
                    if v.len() < SMALL {
                        v.push((key, value));
                        return None;
                    }
                } else {
                    match Self::find(v, key.as_str()) {
                        Ok(i) => return Some(std::mem::replace(&mut v[i].1, value)),
                        Err(i) if v.len() < SMALL => {
                            v.insert(i, (key, value));
                            return None;
                        }
                        Err(_) => {}
                    }
                }
                let mut large: BTreeMap<String, Value> = std::mem::take(v).into_iter().collect();
                large.insert(key, value);
                self.repr = Repr::Large(large);
                None
            }
            Repr::Large(m) => m.insert(key, value),
        }
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<Value>
    where
        String: Borrow<Q>,
    {
        self.remove_entry(key).map(|(_, v)| v)
    }

    pub fn remove_entry<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<(String, Value)>
    where
        String: Borrow<Q>,
    {
        match &mut self.repr {
            Repr::Small(v) => Self::find(v, key).ok().map(|i| v.remove(i)),
            Repr::Large(m) => m.remove_entry(key),
        }
    }

    /// Keep the entries for which `keep` answers true.
    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut Value) -> bool) {
        match &mut self.repr {
            Repr::Small(v) => v.retain_mut(|(k, val)| keep(k, val)),
            Repr::Large(m) => m.retain(|k, val| keep(k, val)),
        }
    }

    /// Move every entry of `other` into `self` (replacing equal keys).
    pub fn append(&mut self, other: &mut Map) {
        for (k, v) in std::mem::take(other) {
            self.insert(k, v);
        }
    }

    /// The entry for `key`, for in-place insertion or update.
    pub fn entry(&mut self, key: impl Into<String>) -> Entry<'_> {
        let key = key.into();
        if self.contains_key(key.as_str()) {
            Entry::Occupied(OccupiedEntry { map: self, key })
        } else {
            Entry::Vacant(VacantEntry { map: self, key })
        }
    }

    pub fn first_key_value(&self) -> Option<(&String, &Value)> {
        self.iter().next()
    }

    pub fn last_key_value(&self) -> Option<(&String, &Value)> {
        self.iter().next_back()
    }

    pub fn iter(&self) -> Iter<'_> {
        match &self.repr {
            Repr::Small(v) => Iter::Small(v.iter()),
            Repr::Large(m) => Iter::Large(m.iter()),
        }
    }

    pub fn iter_mut(&mut self) -> IterMut<'_> {
        match &mut self.repr {
            Repr::Small(v) => IterMut::Small(v.iter_mut()),
            Repr::Large(m) => IterMut::Large(m.iter_mut()),
        }
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + '_ {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator + '_ {
        self.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Value> + ExactSizeIterator + '_ {
        self.iter_mut().map(|(_, v)| v)
    }

    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = String> + ExactSizeIterator {
        self.into_iter().map(|(k, _)| k)
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = Value> + ExactSizeIterator {
        self.into_iter().map(|(_, v)| v)
    }
}

/// An entry of a [`Map`] (see [`Map::entry`]).
pub enum Entry<'a> {
    Occupied(OccupiedEntry<'a>),
    Vacant(VacantEntry<'a>),
}

pub struct OccupiedEntry<'a> {
    map: &'a mut Map,
    key: String,
}

pub struct VacantEntry<'a> {
    map: &'a mut Map,
    key: String,
}

impl<'a> OccupiedEntry<'a> {
    pub fn key(&self) -> &String {
        &self.key
    }

    pub fn get(&self) -> &Value {
        self.map.get(self.key.as_str()).expect("an occupied entry has a value")
    }

    pub fn get_mut(&mut self) -> &mut Value {
        self.map.get_mut(self.key.as_str()).expect("an occupied entry has a value")
    }

    pub fn into_mut(self) -> &'a mut Value {
        self.map.get_mut(self.key.as_str()).expect("an occupied entry has a value")
    }

    pub fn insert(&mut self, value: Value) -> Value {
        std::mem::replace(self.get_mut(), value)
    }

    pub fn remove(self) -> Value {
        self.map.remove(self.key.as_str()).expect("an occupied entry has a value")
    }
}

impl<'a> VacantEntry<'a> {
    pub fn key(&self) -> &String {
        &self.key
    }

    pub fn insert(self, value: Value) -> &'a mut Value {
        let VacantEntry { map, key } = self;
        map.insert(key.clone(), value);
        map.get_mut(key.as_str()).expect("just inserted")
    }
}

impl<'a> Entry<'a> {
    pub fn key(&self) -> &String {
        match self {
            Entry::Occupied(e) => e.key(),
            Entry::Vacant(e) => e.key(),
        }
    }

    pub fn or_insert(self, default: Value) -> &'a mut Value {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(default),
        }
    }

    pub fn or_insert_with(self, default: impl FnOnce() -> Value) -> &'a mut Value {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(default()),
        }
    }

    pub fn or_default(self) -> &'a mut Value {
        self.or_insert_with(Value::default)
    }

    pub fn and_modify(mut self, f: impl FnOnce(&mut Value)) -> Self {
        if let Entry::Occupied(e) = &mut self {
            f(e.get_mut());
        }
        self
    }
}

/// Entries by reference, in key order.
pub enum Iter<'a> {
    Small(std::slice::Iter<'a, (String, Value)>),
    Large(btree_map::Iter<'a, String, Value>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Small(i) => i.next().map(|(k, v)| (k, v)),
            Iter::Large(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Small(i) => i.size_hint(),
            Iter::Large(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Small(i) => i.next_back().map(|(k, v)| (k, v)),
            Iter::Large(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Entries with mutable values, in key order.
pub enum IterMut<'a> {
    Small(std::slice::IterMut<'a, (String, Value)>),
    Large(btree_map::IterMut<'a, String, Value>),
}

impl<'a> Iterator for IterMut<'a> {
    type Item = (&'a String, &'a mut Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            IterMut::Small(i) => i.next().map(|(k, v)| (&*k, v)),
            IterMut::Large(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            IterMut::Small(i) => i.size_hint(),
            IterMut::Large(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for IterMut<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            IterMut::Small(i) => i.next_back().map(|(k, v)| (&*k, v)),
            IterMut::Large(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for IterMut<'_> {}

/// Owned entries, in key order.
pub enum IntoIter {
    Small(std::vec::IntoIter<(String, Value)>),
    Large(btree_map::IntoIter<String, Value>),
}

impl Iterator for IntoIter {
    type Item = (String, Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            IntoIter::Small(i) => i.next(),
            IntoIter::Large(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            IntoIter::Small(i) => i.size_hint(),
            IntoIter::Large(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for IntoIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            IntoIter::Small(i) => i.next_back(),
            IntoIter::Large(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for IntoIter {}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        match self.repr {
            Repr::Small(v) => IntoIter::Small(v.into_iter()),
            Repr::Large(m) => IntoIter::Large(m.into_iter()),
        }
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Map {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = IterMut<'a>;

    fn into_iter(self) -> IterMut<'a> {
        self.iter_mut()
    }
}

impl FromIterator<(String, Value)> for Map {
    /// Later entries replace earlier ones with the same key (like `BTreeMap`).
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(entries: I) -> Self {
        let mut v: Vec<(String, Value)> = entries.into_iter().collect();
        if v.len() > SMALL {
            return Map { repr: Repr::Large(v.into_iter().collect()) };
        }
        // Stable sort keeps equal keys in arrival order; keep the last.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(String, Value)> = Vec::with_capacity(v.len());
        for (k, val) in v {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = val,
                _ => out.push((k, val)),
            }
        }
        Map { repr: Repr::Small(out) }
    }
}

impl<const N: usize> From<[(String, Value); N]> for Map {
    fn from(entries: [(String, Value); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl From<BTreeMap<String, Value>> for Map {
    fn from(map: BTreeMap<String, Value>) -> Self {
        if map.len() > SMALL {
            Map { repr: Repr::Large(map) }
        } else {
            Map { repr: Repr::Small(map.into_iter().collect()) }
        }
    }
}

impl Extend<(String, Value)> for Map {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, entries: I) {
        for (k, v) in entries {
            self.insert(k, v);
        }
    }
}

impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<Q: Ord + ?Sized> std::ops::Index<&Q> for Map
where
    String: Borrow<Q>,
{
    type Output = Value;

    fn index(&self, key: &Q) -> &Value {
        self.get(key).expect("no entry found for key")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(x: u32) -> Value {
        Value::from(x)
    }

    #[test]
    fn small_and_large_maps_agree_with_a_btreemap() {
        // A fixed pseudo-random key order, through the switch to a BTreeMap.
        let mut state = 7u32;
        let mut map = Map::new();
        let mut reference = BTreeMap::new();
        for step in 0..400u32 {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let key = format!("k{}", (state >> 8) % 97);
            if step % 7 == 3 {
                assert_eq!(map.remove(key.as_str()), reference.remove(&key), "remove {key}");
            } else {
                assert_eq!(map.insert(key.clone(), n(step)), reference.insert(key, n(step)), "insert");
            }
            assert_eq!(map.len(), reference.len());
            assert!(map.iter().eq(reference.iter()), "same entries in the same order after step {step}");
        }
        assert_eq!(Map::from(reference.clone()), map);
        let rebuilt: Map = reference.into_iter().collect();
        assert_eq!(rebuilt, map);
    }

    #[test]
    fn keys_are_in_code_point_order_and_later_duplicates_win() {
        let map: Map = [("é", 1), ("z", 2), ("a", 3), ("😀", 4), ("a", 5)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), n(v)))
            .collect();
        assert_eq!(map.keys().map(String::as_str).collect::<Vec<_>>(), ["a", "z", "é", "😀"]);
        assert_eq!(map.get("a"), Some(&n(5)));
    }

    #[test]
    fn entries_insert_and_update_in_place() {
        let mut map = Map::new();
        *map.entry("b").or_insert(n(1)) = n(2);
        map.entry("a").or_default();
        map.entry("b").and_modify(|v| *v = n(3)).or_insert(n(9));
        assert_eq!(map.get("b"), Some(&n(3)));
        assert_eq!(map.get("a"), Some(&Value::Null));
        map.retain(|k, _| k == "b");
        assert_eq!(map.len(), 1);
    }
}
