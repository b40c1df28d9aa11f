//! String maps as the log writes them: JSON objects whose values may be `null`.

use std::collections::HashMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An insertion-ordered `map<string, string?>` (partition values, tags).
///
/// A small vector rather than a hash map: these maps hold a handful of entries and there is
/// one per file, so one allocation per map matters when a table has millions of files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct OptStringMap(pub Vec<(String, Option<String>)>);

impl OptStringMap {
    /// The value of `key`: `None` if absent, `Some(None)` if present and null.
    pub fn get(&self, key: &str) -> Option<Option<&str>> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_deref())
    }

    /// Inserts or replaces `key`.
    pub fn insert(&mut self, key: impl Into<String>, value: Option<String>) {
        let key = key.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_deref()))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, Option<String>)> for OptStringMap {
    fn from_iter<I: IntoIterator<Item = (String, Option<String>)>>(iter: I) -> Self {
        OptStringMap(iter.into_iter().collect())
    }
}

impl Serialize for OptStringMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for OptStringMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OptStringMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OptStringMap, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(2));
                while let Some((k, v)) = map.next_entry::<String, Option<StringLike>>()? {
                    out.push((k, v.map(|s| s.0)));
                }
                Ok(OptStringMap(out))
            }
            fn visit_unit<E>(self) -> Result<OptStringMap, E> {
                Ok(OptStringMap::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON scalar read as a string: some writers emit numbers or booleans where the protocol
/// says string (e.g. partition values of numeric columns); we keep their text.
struct StringLike(String);

impl<'de> Deserialize<'de> for StringLike {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = StringLike;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, v: &str) -> Result<StringLike, E> {
                Ok(StringLike(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<StringLike, E> {
                Ok(StringLike(v))
            }
            fn visit_bool<E>(self, v: bool) -> Result<StringLike, E> {
                Ok(StringLike(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<StringLike, E> {
                Ok(StringLike(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<StringLike, E> {
                Ok(StringLike(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<StringLike, E> {
                Ok(StringLike(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Deserializes a `map<string,string>` dropping null values (table configuration, format
/// options). Absent or `null` maps become empty.
pub(crate) fn lenient_string_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<HashMap<String, String>, D::Error> {
    let m: Option<OptStringMap> = Option::deserialize(d)?;
    Ok(m.map(|m| {
        m.0.into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect()
    })
    .unwrap_or_default())
}

/// Serializes a hash map with sorted keys, so that encoded commits are deterministic.
pub(crate) fn sorted_string_map<S: Serializer>(
    m: &HashMap<String, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut entries: Vec<_> = m.iter().collect();
    entries.sort();
    let mut out = s.serialize_map(Some(entries.len()))?;
    for (k, v) in entries {
        out.serialize_entry(k, v)?;
    }
    out.end()
}

/// Deserializes an optional `OptStringMap` where `null` means absent.
pub(crate) fn opt_map<'de, D: Deserializer<'de>>(d: D) -> Result<Option<OptStringMap>, D::Error> {
    Option::<OptStringMap>::deserialize(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_values_and_non_string_scalars_are_kept() {
        let m: OptStringMap = serde_json::from_str(r#"{"a":null,"b":"x","c":1,"d":true}"#).unwrap();
        assert_eq!(m.get("a"), Some(None));
        assert_eq!(m.get("b"), Some(Some("x")));
        assert_eq!(m.get("c"), Some(Some("1")));
        assert_eq!(m.get("d"), Some(Some("true")));
        assert_eq!(m.get("z"), None);
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"a":null,"b":"x","c":"1","d":"true"}"#
        );
    }
}
