//! Splitting the SQL-style texts of UPDATE and MERGE (assignment lists, `--when` clauses)
//! at their top-level separators and keywords, before each piece goes to the expression
//! parser. "Top level" means outside quotes (`'…'`, `"…"`, `` `…` ``), parentheses and
//! `CASE … END`, so a `THEN` or `,` inside a condition never splits it.

use crate::{Error, Result};

/// One top-level word or separator position of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// A word (identifier or keyword) at `[start, end)`.
    Word(usize, usize),
    /// A separator character at this byte offset.
    Char(usize, char),
}

/// The top-level words and separators of `text`, with whether CASE/parentheses were
/// balanced. Quoted spans are skipped whole.
fn top_level(text: &str) -> Result<Vec<Piece>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut depth: usize = 0;
    let mut case_depth: usize = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\'' | b'"' | b'`' => {
                let quote = c;
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => {
                            return Err(Error::InvalidArgument(format!(
                                "unterminated quote in `{text}`"
                            )));
                        }
                        Some(&q) if q == quote => {
                            if bytes.get(i + 1) == Some(&quote) {
                                i += 2;
                            } else {
                                i += 1;
                                break;
                            }
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| Error::InvalidArgument(format!("unbalanced `)` in `{text}`")))?;
                i += 1;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                if word.eq_ignore_ascii_case("CASE") {
                    case_depth += 1;
                } else if word.eq_ignore_ascii_case("END") && case_depth > 0 {
                    case_depth -= 1;
                } else if depth == 0 && case_depth == 0 {
                    out.push(Piece::Word(start, i));
                }
            }
            _ => {
                if depth == 0 && case_depth == 0 && c.is_ascii() {
                    out.push(Piece::Char(i, c as char));
                }
                // Multi-byte UTF-8 characters only occur inside names or quotes.
                i += 1;
            }
        }
    }
    if depth != 0 {
        return Err(Error::InvalidArgument(format!(
            "unbalanced `(` in `{text}`"
        )));
    }
    Ok(out)
}

/// `text` split at its top-level occurrences of `sep` (pieces trimmed).
///
/// # Errors
/// Unterminated quotes or unbalanced parentheses.
pub(crate) fn split_top_level(text: &str, sep: char) -> Result<Vec<&str>> {
    let mut parts = Vec::new();
    let mut start = 0;
    for p in top_level(text)? {
        if let Piece::Char(at, c) = p
            && c == sep
        {
            parts.push(text[start..at].trim());
            start = at + 1;
        }
    }
    parts.push(text[start..].trim());
    Ok(parts)
}

/// Byte range of the first top-level occurrence of the keyword `kw` (case-insensitive,
/// whole word) in `text`.
///
/// # Errors
/// Unterminated quotes or unbalanced parentheses.
pub(crate) fn find_keyword(text: &str, kw: &str) -> Result<Option<(usize, usize)>> {
    Ok(top_level(text)?.into_iter().find_map(|p| match p {
        Piece::Word(s, e) if text[s..e].eq_ignore_ascii_case(kw) => Some((s, e)),
        _ => None,
    }))
}

/// Byte offset of the first top-level `=` that is an assignment (not part of `<=`, `>=`,
/// `!=`, `==`).
///
/// # Errors
/// Unterminated quotes or unbalanced parentheses.
pub(crate) fn find_assignment_eq(text: &str) -> Result<Option<usize>> {
    let bytes = text.as_bytes();
    Ok(top_level(text)?.into_iter().find_map(|p| match p {
        Piece::Char(at, '=') => {
            let before = at.checked_sub(1).map(|b| bytes[b]);
            let after = bytes.get(at + 1).copied();
            let compound = matches!(before, Some(b'<' | b'>' | b'!' | b'=')) || after == Some(b'=');
            (!compound).then_some(at)
        }
        _ => None,
    }))
}

/// `text` without a leading keyword `kw` (case-insensitive, whole word), if it starts so.
pub(crate) fn strip_keyword<'a>(text: &'a str, kw: &str) -> Option<&'a str> {
    let t = text.trim_start();
    let head = t.get(..kw.len())?;
    if !head.eq_ignore_ascii_case(kw) {
        return None;
    }
    let rest = &t[kw.len()..];
    match rest.chars().next() {
        None => Some(rest),
        Some(c) if c.is_ascii_alphanumeric() || c == '_' => None,
        Some(_) => Some(rest.trim_start()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_only_at_top_level() {
        assert_eq!(
            split_top_level("a = 1, b = coalesce(x, 'a,b'), c = `x,y`", ',').unwrap(),
            vec!["a = 1", "b = coalesce(x, 'a,b')", "c = `x,y`"]
        );
        let text = "MATCHED AND CASE WHEN s.a = 1 THEN true ELSE false END THEN DELETE";
        let (s, _) = find_keyword(text, "THEN").unwrap().unwrap();
        assert_eq!(&text[s..], "THEN DELETE");
        assert_eq!(find_keyword("x = 'THEN'", "THEN").unwrap(), None);
        assert!(split_top_level("(a", ',').is_err());
        assert!(split_top_level("'a", ',').is_err());
    }

    #[test]
    fn finds_the_assignment_sign() {
        assert_eq!(find_assignment_eq("a = b <= c").unwrap(), Some(2));
        assert_eq!(find_assignment_eq("a <= c").unwrap(), None);
        assert_eq!(find_assignment_eq("`a=b` = 1").unwrap(), Some(6));
        assert_eq!(strip_keyword("  WHEN x", "when"), Some("x"));
        assert_eq!(strip_keyword("WHENEVER", "when"), None);
    }
}
