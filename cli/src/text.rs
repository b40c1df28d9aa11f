//! Making untrusted text safe to print on a terminal or in line-oriented output.
//!
//! Paths and values come from the table, which anyone may have written: a newline in a
//! file name would forge an extra line of `files` output, and an ANSI escape could rewrite
//! what the terminal shows. Such characters are printed as visible escapes instead.

use std::borrow::Cow;

/// Whether `c` must not reach the output raw: control characters (C0, DEL, C1, which
/// include newlines and the escape that starts ANSI sequences), the Unicode line and
/// paragraph separators, and the bidirectional overrides and isolates that reorder what a
/// terminal displays.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every unsafe character written as an escape (`\n`, `\r`, `\t`, otherwise
/// `\u{..}` with the code point in hex). Text without one is returned as is, so ordinary
/// output does not change.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::escape_control;

    #[test]
    fn escapes_only_unsafe_characters() {
        assert_eq!(escape_control("part-0.parquet"), "part-0.parquet");
        assert_eq!(escape_control("ünï cödé"), "ünï cödé");
        assert_eq!(escape_control("a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(escape_control("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(escape_control("x\u{7f}\u{85}"), "x\\u{7f}\\u{85}");
        assert_eq!(escape_control("abc\u{202e}fed"), "abc\\u{202e}fed");
    }
}
