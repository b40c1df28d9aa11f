//! The text of a new column, as SQL's `ADD COLUMN` takes it:
//! `name TYPE [NOT NULL] [COMMENT 'text']`.

use alluvium_txlog::schema::{DataType, PrimitiveType, StructField};

use crate::{Error, Result};

/// The field-metadata key of a column comment (as Spark stores `COMMENT`).
pub(crate) const COMMENT_KEY: &str = "comment";

/// Parses a column definition `name TYPE [NOT NULL] [COMMENT 'text']` into a field for
/// [`Table::add_column`](crate::Table::add_column):
/// * `name`: a word, or any text in backticks (`` `my col` ``, a backtick doubled inside);
/// * `TYPE`: a primitive type by its Delta or SQL name (`long`/`bigint`, `int`,
///   `decimal(10, 2)`, `timestamp_ntz`, ...);
/// * `NOT NULL` makes the column non-nullable (the default is nullable);
/// * `COMMENT` takes a single-quoted string (a quote doubled, or escaped with a
///   backslash, inside), kept in the field's metadata under `comment`.
///
/// Keywords are case-insensitive.
///
/// # Errors
/// [`Error::InvalidArgument`] saying what was expected where.
pub fn parse_column_definition(text: &str) -> Result<StructField> {
    let bad = |what: &str| {
        Error::InvalidArgument(format!(
            "column definition {text:?}: {what} (expected `name TYPE [NOT NULL] [COMMENT '…']`)"
        ))
    };
    let mut rest = text.trim_start();
    let name = if let Some(quoted) = rest.strip_prefix('`') {
        let mut name = String::new();
        let mut chars = quoted.char_indices().peekable();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                if chars.peek().is_some_and(|(_, n)| *n == '`') {
                    chars.next();
                    name.push('`');
                    continue;
                }
                end = Some(i + 1);
                break;
            }
            name.push(c);
        }
        let end = end.ok_or_else(|| bad("the backtick quoting the name is not closed"))?;
        rest = &quoted[end..];
        name
    } else {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let name = rest[..end].to_string();
        rest = &rest[end..];
        name
    };
    if name.trim().is_empty() {
        return Err(bad("no column name"));
    }
    // The type: everything up to a NOT or COMMENT keyword outside parentheses.
    let mut depth = 0i32;
    let mut type_end = rest.len();
    let words = word_starts(rest);
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth == 0 && words.contains(&i) {
            let word = rest[i..]
                .split(|c: char| c.is_whitespace())
                .next()
                .unwrap_or("");
            if word.eq_ignore_ascii_case("not") || word.eq_ignore_ascii_case("comment") {
                type_end = i;
                break;
            }
        }
    }
    let type_text = rest[..type_end].trim();
    if type_text.is_empty() {
        return Err(bad("no type after the name"));
    }
    let ty: PrimitiveType = type_text
        .parse()
        .map_err(|_| bad(&format!("unknown type `{type_text}`")))?;
    let mut field = StructField::new(name, DataType::Primitive(ty), true);
    let mut tail = rest[type_end..].trim_start();
    if let Some(after) = strip_keyword(tail, "not") {
        tail = strip_keyword(after.trim_start(), "null")
            .ok_or_else(|| bad("NOT must be followed by NULL"))?
            .trim_start();
        field.nullable = false;
    }
    if let Some(after) = strip_keyword(tail, "comment") {
        let (comment, after) = quoted_string(after.trim_start())
            .ok_or_else(|| bad("COMMENT takes a single-quoted string"))?;
        field
            .metadata
            .insert(COMMENT_KEY.into(), serde_json::Value::String(comment));
        tail = after.trim_start();
    }
    if !tail.is_empty() {
        return Err(bad(&format!("unexpected `{tail}`")));
    }
    Ok(field)
}

/// The byte offsets where a whitespace-separated word starts in `s`.
fn word_starts(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut prev_space = true;
    for (i, c) in s.char_indices() {
        if !c.is_whitespace() && prev_space {
            out.push(i);
        }
        prev_space = c.is_whitespace();
    }
    out
}

/// `s` after the keyword `kw` (case-insensitive, followed by whitespace, a quote or the end).
fn strip_keyword<'a>(s: &'a str, kw: &str) -> Option<&'a str> {
    let head = s.get(..kw.len())?;
    let rest = &s[kw.len()..];
    (head.eq_ignore_ascii_case(kw) && rest.chars().next().is_none_or(|c| !c.is_alphanumeric()))
        .then_some(rest)
}

/// A single-quoted string at the start of `s` (`''` and `\'` are quotes inside, `\\` a
/// backslash) and the text after it.
fn quoted_string(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('\'')?;
    let mut out = String::new();
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, n)) => out.push(n),
                None => return None,
            },
            '\'' if chars.peek().is_some_and(|(_, n)| *n == '\'') => {
                chars.next();
                out.push('\'');
            }
            '\'' => return Some((out, &body[i + 1..])),
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_parse() {
        let f = parse_column_definition("age int").unwrap();
        assert_eq!(f.name, "age");
        assert_eq!(f.data_type, DataType::Primitive(PrimitiveType::Integer));
        assert!(f.nullable);
        assert!(f.metadata.is_empty());

        let f = parse_column_definition(
            "`unit price` decimal(10, 2) not null COMMENT 'in euros, it''s \\'net\\''",
        )
        .unwrap();
        assert_eq!(f.name, "unit price");
        assert_eq!(
            f.data_type,
            DataType::Primitive(PrimitiveType::Decimal(10, 2))
        );
        assert!(!f.nullable);
        assert_eq!(f.metadata[COMMENT_KEY], "in euros, it's 'net'");

        let f = parse_column_definition("`a``b` TIMESTAMP_NTZ comment 'x'").unwrap();
        assert_eq!(f.name, "a`b");
        assert!(f.nullable);
        // A name that looks like a keyword is still a name.
        assert_eq!(
            parse_column_definition("comment string").unwrap().name,
            "comment"
        );
        assert_eq!(
            parse_column_definition("notes string").unwrap().data_type,
            DataType::Primitive(PrimitiveType::String)
        );
    }

    #[test]
    fn bad_definitions_say_what_is_wrong() {
        for (text, says) in [
            ("", "no column name"),
            ("x", "no type"),
            ("x numbers", "unknown type `numbers`"),
            ("x int not", "NOT must be followed by NULL"),
            ("x int comment hello", "single-quoted"),
            ("x int comment 'open", "single-quoted"),
            ("x int default 3", "unknown type `int default 3`"),
            ("`x int", "not closed"),
        ] {
            let e = parse_column_definition(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }
}
