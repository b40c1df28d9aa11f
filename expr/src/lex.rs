//! The lexer of the expression language: text into tokens, each with the range of
//! characters it came from (for error positions), and each describable in SQL words.

use crate::error::SyntaxError;
use crate::{ArithOp, CmpOp, ExprError, Result};

/// A token's kind and value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// A bare word: a keyword, a function or a column name.
    Ident(String),
    /// A back-quoted name.
    Quoted(String),
    /// A quoted string.
    Str(String),
    /// A number, as written.
    Num(String),
    Op(CmpOp),
    Arith(ArithOp),
    Concat,
    LParen,
    RParen,
    Comma,
    Dot,
}

/// A token and where it is: characters `start..end` of the text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Words with a meaning in the grammar, named as keywords in messages.
const KEYWORDS: [&str; 26] = [
    "AND",
    "OR",
    "NOT",
    "IS",
    "NULL",
    "IN",
    "BETWEEN",
    "LIKE",
    "ILIKE",
    "ESCAPE",
    "DISTINCT",
    "FROM",
    "FOR",
    "TRUE",
    "FALSE",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "AS",
    "INTERVAL",
    "DATE",
    "TIMESTAMP",
    "CURRENT_DATE",
    "CURRENT_TIMESTAMP",
];

/// True for a word of the grammar (case-insensitive).
pub(crate) fn is_keyword(word: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// How a message names a token: `keyword LIKE`, `name x`, `the string 'a'`, `(`.
pub(crate) fn describe(t: Option<&Tok>) -> String {
    let short = |s: &str| -> String {
        let mut chars = s.chars();
        let head: String = chars.by_ref().take(30).collect();
        if chars.next().is_some() {
            format!("{head}…")
        } else {
            head
        }
    };
    match t {
        None => "end of input".into(),
        Some(Tok::Ident(s)) if is_keyword(s) => format!("keyword {}", s.to_ascii_uppercase()),
        Some(Tok::Ident(s)) => format!("name `{}`", short(s)),
        Some(Tok::Quoted(s)) => format!("name `{}`", short(s)),
        Some(Tok::Str(s)) => format!("string '{}'", short(s)),
        Some(Tok::Num(n)) => format!("number {}", short(n)),
        Some(Tok::Op(op)) => format!("`{}`", op.symbol()),
        Some(Tok::Arith(op)) => format!("`{}`", op.symbol()),
        Some(Tok::Concat) => "`||`".into(),
        Some(Tok::LParen) => "`(`".into(),
        Some(Tok::RParen) => "`)`".into(),
        Some(Tok::Comma) => "`,`".into(),
        Some(Tok::Dot) => "`.`".into(),
    }
}

/// Splits `text` into tokens.
///
/// # Errors
/// [`ExprError::Syntax`] at an unterminated string or name, a malformed number or a
/// character outside the language.
pub(crate) fn lex(text: &str) -> Result<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let fail = |msg: String, start: usize, end: usize| {
        ExprError::Syntax(SyntaxError::new(msg, text, start, end))
    };
    let mut i = 0;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let tok = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '(' => {
                i += 1;
                Tok::LParen
            }
            ')' => {
                i += 1;
                Tok::RParen
            }
            ',' => {
                i += 1;
                Tok::Comma
            }
            '.' if !chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
                i += 1;
                Tok::Dot
            }
            '\'' | '"' | '`' => {
                let quote = c;
                let mut v = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            let what = if quote == '`' { "name" } else { "string" };
                            return Err(fail(
                                format!("unterminated {what}: no closing {quote}"),
                                start,
                                start + 1,
                            ));
                        }
                        Some(&ch) if ch == quote => {
                            if chars.get(i + 1) == Some(&quote) {
                                v.push(quote);
                                i += 2;
                            } else {
                                i += 1;
                                break;
                            }
                        }
                        Some(&ch) => {
                            v.push(ch);
                            i += 1;
                        }
                    }
                }
                if quote == '`' {
                    Tok::Quoted(v)
                } else {
                    Tok::Str(v)
                }
            }
            '=' => {
                i += if chars.get(i + 1) == Some(&'=') { 2 } else { 1 };
                Tok::Op(CmpOp::Eq)
            }
            '!' if chars.get(i + 1) == Some(&'=') => {
                i += 2;
                Tok::Op(CmpOp::Ne)
            }
            '<' => {
                let (op, n) = match chars.get(i + 1) {
                    Some('=') => (CmpOp::Le, 2),
                    Some('>') => (CmpOp::Ne, 2),
                    _ => (CmpOp::Lt, 1),
                };
                i += n;
                Tok::Op(op)
            }
            '>' => {
                let (op, n) = if chars.get(i + 1) == Some(&'=') {
                    (CmpOp::Ge, 2)
                } else {
                    (CmpOp::Gt, 1)
                };
                i += n;
                Tok::Op(op)
            }
            '+' | '-' | '*' | '/' | '%' => {
                i += 1;
                Tok::Arith(match c {
                    '+' => ArithOp::Add,
                    '-' => ArithOp::Sub,
                    '*' => ArithOp::Mul,
                    '/' => ArithOp::Div,
                    _ => ArithOp::Mod,
                })
            }
            '|' if chars.get(i + 1) == Some(&'|') => {
                i += 2;
                Tok::Concat
            }
            c if c.is_ascii_digit() || c == '.' => {
                i += 1;
                while let Some(&ch) = chars.get(i) {
                    let exp_sign =
                        (ch == '-' || ch == '+') && matches!(chars.get(i - 1), Some('e' | 'E'));
                    if ch.is_ascii_digit() || ch == '.' || ch == 'e' || ch == 'E' || exp_sign {
                        i += 1;
                    } else {
                        break;
                    }
                }
                let n: String = chars[start..i].iter().collect();
                if n.parse::<f64>().is_err() {
                    return Err(fail(format!("malformed number {n}"), start, i));
                }
                Tok::Num(n)
            }
            c if c.is_alphabetic() || c == '_' => {
                while chars
                    .get(i)
                    .is_some_and(|ch| ch.is_alphanumeric() || *ch == '_' || *ch == '$')
                {
                    i += 1;
                }
                Tok::Ident(chars[start..i].iter().collect())
            }
            other => {
                let shown = if other.is_control() {
                    format!("U+{:04X}", u32::from(other))
                } else {
                    format!("`{other}`")
                };
                return Err(fail(
                    format!("unexpected character {shown}"),
                    start,
                    start + 1,
                ));
            }
        };
        out.push(Token { tok, start, end: i });
    }
    Ok(out)
}
