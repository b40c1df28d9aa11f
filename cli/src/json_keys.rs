//! Refusing JSON-lines input whose objects name a key twice (`{"id":5,"id":6}`, at the top
//! or nested). Arrow's JSON reader keeps one of the values and drops the other without a
//! word, and the library only sees the batches it produced, so the check has to read the
//! text itself: one streaming pass before the file is read for real.
//!
//! Only keys spelled exactly alike are checked here: keys that differ in case become two
//! columns (or two struct fields), which the library refuses by name, and two such keys of
//! an object read as a map are two distinct map keys.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::io::Read;

use alluvium::{Error, Result};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Checks every JSON value of `reader` (JSON lines) for an object naming a key twice.
/// Text that is not JSON is left for the JSON reader to report, as it always has.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `path`, the key (its path below the top level:
/// `s.a`, `l.element.a`) and the line.
pub fn check_distinct_keys(path: &str, reader: impl Read) -> Result<()> {
    let values = serde_json::Deserializer::from_reader(reader).into_iter::<Distinct>();
    for value in values {
        match value {
            Ok(Distinct) => {}
            Err(e) if e.classify() == serde_json::error::Category::Data => {
                return Err(Error::InvalidArgument(format!(
                    "{path}: {e}: only one of its values could be written; rename or drop one"
                )));
            }
            // Syntax errors, a cut last line, I/O: the JSON reader says what is wrong.
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// One JSON value whose objects all have distinct keys.
struct Distinct;

impl<'de> de::Deserialize<'de> for Distinct {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Keys { prefix: "" }.deserialize(d).map(|()| Distinct)
    }
}

/// A value below the column path `prefix` (empty, or ending in a dot).
struct Keys<'p> {
    prefix: &'p str,
}

impl<'de> DeserializeSeed<'de> for Keys<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Keys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let nested = format!("{}{key}.", self.prefix);
            if !seen.insert(key.into_owned()) {
                return Err(de::Error::custom(format!(
                    "an object names the key `{}` twice",
                    &nested[..nested.len() - 1]
                )));
            }
            map.next_value_seed(Keys { prefix: &nested })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let nested = format!("{}element.", self.prefix);
        while seq.next_element_seed(Keys { prefix: &nested })?.is_some() {}
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        self.deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn check(text: &str) -> std::result::Result<(), String> {
        check_distinct_keys("in.jsonl", text.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn keys_named_twice_are_found_at_any_depth_with_their_line() {
        assert_eq!(
            check("{\"a\":1,\"b\":[{\"c\":1},{\"c\":2}]}\n{\"a\":2}\n"),
            Ok(())
        );
        for (text, key, line) in [
            ("{\"a\":1,\"a\":2}\n", "a", 1),
            ("{\"a\":1}\n{\"s\":{\"x\":1,\"x\":null}}\n", "s.x", 2),
            (
                "{\"l\":[{\"x\":1},{\"x\":1,\"y\":2,\"x\":3}]}",
                "l.element.x",
                1,
            ),
            ("{\"a\\u0062\":1,\"ab\":2}", "ab", 1),
        ] {
            let e = check(text).unwrap_err();
            assert!(
                e.contains(&format!("key `{key}` twice")) && e.contains(&format!("line {line}")),
                "{text}: {e}"
            );
            assert!(e.starts_with("in.jsonl: "), "{e}");
        }
        // Case-only differences are the schema check's; a string holding JSON is a string.
        assert_eq!(
            check("{\"a\":1,\"A\":2,\"s\":\"{\\\"a\\\":1,\\\"a\\\":2}\"}"),
            Ok(())
        );
        // Not JSON: left for the JSON reader to report.
        assert_eq!(check("{\"a\":1,\"b\""), Ok(()));
    }
}
