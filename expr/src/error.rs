//! The expression error type: every failure parsing, binding or evaluating an expression,
//! worded in SQL terms (positions, keywords, column and function names), never in the
//! parser's own vocabulary.

use std::fmt;

use alluvium_txlog::LogError;

/// Result alias for expression work.
pub type Result<T, E = ExprError> = std::result::Result<T, E>;

/// A failure parsing, binding or evaluating an expression. Every variant is a problem
/// with the expression or the values it meets, except [`ExprError::Arrow`] (a kernel
/// failure) and [`ExprError::Log`] (a type the log format cannot map).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExprError {
    /// The text is not in the grammar: where, and what was expected there.
    #[error("{0}")]
    Syntax(SyntaxError),
    /// A column the schema does not have, with the nearest name it does have.
    #[error("invalid expression: unknown column `{column}`{}", did_you_mean(suggestion.as_deref()))]
    UnknownColumn {
        /// The column as written (dotted for a nested field).
        column: String,
        /// The nearest existing name at that level, if one is close.
        suggestion: Option<String>,
    },
    /// The expression is invalid: operands of the wrong types, a form that needs a literal,
    /// a non-deterministic function where determinism is required, or a failure on a value
    /// (overflow, division by zero, a failed cast or conversion).
    #[error("invalid expression: {0}")]
    Invalid(String),
    /// A log-format failure (a type without an Arrow mapping, a bad partition value).
    #[error(transparent)]
    Log(#[from] LogError),
    /// An Arrow kernel failed.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
}

impl ExprError {
    /// For a syntax error, the offending line of the text with a caret under the offending
    /// part (two lines, each indented by two spaces), as a terminal shows it below the
    /// message; `None` for other errors.
    pub fn pointer(&self) -> Option<String> {
        match self {
            ExprError::Syntax(s) => Some(s.pointer()),
            _ => None,
        }
    }
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |s| format!("; did you mean `{s}`?"))
}

/// Where a text leaves the grammar: the message (what was expected, what was found), the
/// text, and the offending part as a range of characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    message: String,
    text: String,
    /// Character offsets of the offending part (`start == end` at the end of the text).
    start: usize,
    end: usize,
}

/// At most this many characters of a long line are shown around the offending part.
const CONTEXT: usize = 60;

impl SyntaxError {
    /// A syntax error in `text` at characters `start..end`.
    pub(crate) fn new(message: impl Into<String>, text: &str, start: usize, end: usize) -> Self {
        SyntaxError {
            message: message.into(),
            text: text.to_string(),
            start,
            end: end.max(start),
        }
    }

    /// What was expected and what was found (`expected an expression after AND, found end
    /// of input`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The whole text that was parsed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The 1-based line of the offending part.
    pub fn line(&self) -> usize {
        1 + self
            .text
            .chars()
            .take(self.start)
            .filter(|c| *c == '\n')
            .count()
    }

    /// The 1-based column (in characters) of the offending part on its line.
    pub fn column(&self) -> usize {
        let before: Vec<char> = self.text.chars().take(self.start).collect();
        let line_start = before.iter().rposition(|c| *c == '\n').map_or(0, |i| i + 1);
        1 + before.len() - line_start
    }

    /// The offending line with a caret under the offending part, as two lines indented by
    /// two spaces. Tabs show as spaces and control characters as `?`, so that the caret
    /// stays aligned and the text cannot drive a terminal; a long line is cut around the
    /// offending part (`…` marks a cut).
    pub fn pointer(&self) -> String {
        let chars: Vec<char> = self.text.chars().collect();
        let line_start = chars[..self.start.min(chars.len())]
            .iter()
            .rposition(|c| *c == '\n')
            .map_or(0, |i| i + 1);
        let line_end = chars[line_start..]
            .iter()
            .position(|c| *c == '\n')
            .map_or(chars.len(), |i| line_start + i);
        let (start, end) = (self.start - line_start, self.end.min(line_end) - line_start);
        let line: Vec<char> = chars[line_start..line_end]
            .iter()
            .map(|c| {
                if c.is_control() {
                    if *c == '\t' { ' ' } else { '?' }
                } else {
                    *c
                }
            })
            .collect();
        let from = start.saturating_sub(CONTEXT);
        let to = line.len().min(end.max(start + 1) + CONTEXT);
        let mut shown: String = line[from..to.max(from)].iter().collect();
        let mut offset = start - from;
        if from > 0 {
            shown.insert(0, '…');
            offset += 1;
        }
        if to < line.len() {
            shown.push('…');
        }
        let carets = "^".repeat((end - start).max(1));
        format!("  {}\n  {}{carets}", shown.trim_end(), " ".repeat(offset))
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.text.contains('\n') {
            write!(
                f,
                "syntax error at line {}, column {}: {}",
                self.line(),
                self.column(),
                self.message
            )
        } else {
            write!(
                f,
                "syntax error at column {}: {}",
                self.column(),
                self.message
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointer_puts_a_caret_under_the_offending_text() {
        let e = SyntaxError::new("expected X", "a = 1 LIKE", 6, 10);
        assert_eq!(e.column(), 7);
        assert_eq!(e.to_string(), "syntax error at column 7: expected X");
        assert_eq!(e.pointer(), "  a = 1 LIKE\n        ^^^^");
        // At the end of the text: one caret after it.
        let e = SyntaxError::new("expected X", "a =", 3, 3);
        assert_eq!(e.pointer(), "  a =\n     ^");
        // Second line, tabs as spaces.
        let e = SyntaxError::new("m", "a = 1\n\tAND #", 11, 12);
        assert_eq!((e.line(), e.column()), (2, 6));
        assert_eq!(e.pointer(), "   AND #\n       ^");
        assert!(
            e.to_string()
                .starts_with("syntax error at line 2, column 6")
        );
        // A long line is cut around the offending part.
        let text = format!("{} = 1 # {}", "x".repeat(200), "y".repeat(200));
        let e = SyntaxError::new("m", &text, 205, 206);
        let p = e.pointer();
        let lines: Vec<&str> = p.lines().collect();
        assert!(
            lines[0].starts_with("  …") && lines[0].ends_with('…'),
            "{p}"
        );
        let caret = lines[1].chars().position(|c| c == '^').unwrap();
        assert_eq!(lines[0].chars().nth(caret), Some('#'), "{p}");
    }
}
