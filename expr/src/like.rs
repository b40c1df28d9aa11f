//! LIKE patterns, with Spark's rules: `_` matches one character, `%` any run of them, and
//! the escape character (`\` unless `ESCAPE` names another) makes the next `_`, `%` or
//! escape character literal; before anything else, or at the end of the pattern, it is an
//! error. Evaluation hands patterns to arrow's kernels in arrow's syntax (escape `\`);
//! data skipping uses the literal prefix a pattern starts with.

/// Spark's default escape character.
pub(crate) const DEFAULT_ESCAPE: char = '\\';

/// One element of a pattern.
enum Piece {
    Char(char),
    AnyOne,
    AnyRun,
}

fn pieces(pattern: &str, escape: char) -> Result<Vec<Piece>, String> {
    let mut out = Vec::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        out.push(if c == escape {
            match chars.next() {
                Some(n) if n == '_' || n == '%' || n == escape => Piece::Char(n),
                Some(n) => {
                    return Err(format!(
                        "LIKE pattern '{pattern}': the escape character is not allowed to precede '{n}'"
                    ));
                }
                None => {
                    return Err(format!(
                        "LIKE pattern '{pattern}': it is not allowed to end with the escape character"
                    ));
                }
            }
        } else if c == '%' {
            Piece::AnyRun
        } else if c == '_' {
            Piece::AnyOne
        } else {
            Piece::Char(c)
        });
    }
    Ok(out)
}

/// `pattern` (with `escape`) in arrow's LIKE syntax: wildcards as they are, and every
/// literal `%`, `_` or `\` escaped with `\`.
///
/// # Errors
/// The message for a misplaced escape character.
pub(crate) fn to_arrow(pattern: &str, escape: char) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len() + 4);
    for p in pieces(pattern, escape)? {
        match p {
            Piece::AnyRun => out.push('%'),
            Piece::AnyOne => out.push('_'),
            Piece::Char(c @ ('%' | '_' | '\\')) => {
                out.push('\\');
                out.push(c);
            }
            Piece::Char(c) => out.push(c),
        }
    }
    Ok(out)
}

/// The literal text every match of `pattern` starts with (up to its first wildcard).
///
/// # Errors
/// The message for a misplaced escape character.
pub(crate) fn literal_prefix(pattern: &str, escape: char) -> Result<String, String> {
    Ok(pieces(pattern, escape)?
        .into_iter()
        .map_while(|p| match p {
            Piece::Char(c) => Some(c),
            _ => None,
        })
        .collect())
}

/// The least string above every string that starts with `prefix` (in the byte order of
/// UTF-8, which is the order of code points): `prefix` with its last character replaced by
/// the next one. `None` when there is no such string (empty, or only `char::MAX`s).
pub(crate) fn successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        // The next scalar value, stepping over the surrogate range.
        let next = (u32::from(last) + 1..=u32::from(char::MAX)).find_map(char::from_u32);
        if let Some(n) = next {
            chars.push(n);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_translate_escape_and_prefix() {
        assert_eq!(to_arrow("a%b_c", '\\').unwrap(), "a%b_c");
        assert_eq!(to_arrow(r"a\%b\_c\\", '\\').unwrap(), r"a\%b\_c\\");
        assert_eq!(to_arrow("a!%b!!c", '!').unwrap(), r"a\%b!c");
        assert_eq!(to_arrow(r"a\b", '!').unwrap(), r"a\\b");
        assert!(to_arrow(r"a\b", '\\').unwrap_err().contains("precede 'b'"));
        assert!(to_arrow(r"ab\", '\\').unwrap_err().contains("end with"));
        assert_eq!(literal_prefix("abc%", '\\').unwrap(), "abc");
        assert_eq!(literal_prefix(r"a\%c%", '\\').unwrap(), "a%c");
        assert_eq!(literal_prefix("ab_c", '\\').unwrap(), "ab");
        assert_eq!(literal_prefix("%abc", '\\').unwrap(), "");
        assert_eq!(literal_prefix("abc", '\\').unwrap(), "abc");
    }

    #[test]
    fn successors_bound_every_extension() {
        assert_eq!(successor("abc").as_deref(), Some("abd"));
        assert_eq!(successor("az").as_deref(), Some("a{"));
        assert_eq!(successor("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
        let max = char::MAX.to_string();
        assert_eq!(successor(&format!("a{max}")).as_deref(), Some("b"));
        assert_eq!(successor(&max), None);
        assert_eq!(successor(""), None);
        for p in ["abc", "a\u{D7FF}", "é", "z\u{10FFFF}"] {
            let s = successor(p).unwrap();
            for ext in ["", "a", "\u{10FFFF}\u{10FFFF}", "zzz"] {
                let v = format!("{p}{ext}");
                assert!(
                    v.as_bytes() >= p.as_bytes() && v.as_bytes() < s.as_bytes(),
                    "{v:?}"
                );
            }
        }
    }
}
