//! A small SQL-style expression parser (predicates and values).
//!
//! ```text
//! expr      := or
//! or        := and ("OR" and)*
//! and       := not ("AND" not)*
//! not       := "NOT" not | predicate
//! predicate := sum [ cmp sum | "IS" ["NOT"] "NULL" | ["NOT"] "IN" "(" literal ("," literal)* ")"
//!                  | ["NOT"] "BETWEEN" sum "AND" sum ]
//! sum       := product (("+" | "-" | "||") product)*          (left-associative)
//! product   := unary (("*" | "/" | "%") unary)*               (left-associative)
//! unary     := "-" unary | "+" unary | operand                 (`-5` is the literal -5)
//! operand   := column | literal | "(" expr ")"
//!            | "CASE" ("WHEN" expr "THEN" expr)+ ["ELSE" expr] "END"
//!            | "CASE" sum ("WHEN" sum "THEN" expr)+ ["ELSE" expr] "END"   (= CASE WHEN sum = v ...)
//!            | "COALESCE" "(" expr ("," expr)* ")" | "CAST" "(" expr "AS" type ")"
//!            | ("YEAR" | "MONTH" | "DAY" | "DAYOFMONTH") "(" expr ")"
//! column    := name ("." name)*          name: identifier or `back-quoted`
//! literal   := ["-"] number | 'string' | TRUE | FALSE | NULL | DATE 'x' | TIMESTAMP 'x'
//! cmp       := "=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">="
//! type      := int | integer | long | bigint | short | smallint | byte | tinyint | double
//!            | float | real | string | boolean | date | timestamp | timestamp_ntz | binary
//!            | decimal ["(" p ["," s] ")"]
//! ```
//! Keywords are case-insensitive; `''` inside a string is a quote. `||` sits with `+` and
//! `-` as in Spark. `CASE`, `WHEN`, `THEN`, `ELSE` and `END` are reserved (a column of that
//! name is written back-quoted); `CAST`, `COALESCE`, `YEAR`, `MONTH`, `DAY` and `DAYOFMONTH` are functions only before `(`.

use crate::{ArithOp, CmpOp, DateField, Expr, Literal};
use crate::{ExprError, Result};
use alluvium_txlog::schema::{DataType, PrimitiveType};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Quoted(String),
    Str(String),
    Num(String),
    Op(CmpOp),
    Arith(ArithOp),
    Concat,
    LParen,
    RParen,
    Comma,
    Dot,
}

fn err(msg: impl Into<String>) -> ExprError {
    ExprError::Invalid(msg.into())
}

fn lex(s: &str) -> Result<Vec<Tok>> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => {
                out.push(Tok::LParen);
                i += 1;
            }
            ')' => {
                out.push(Tok::RParen);
                i += 1;
            }
            ',' => {
                out.push(Tok::Comma);
                i += 1;
            }
            '.' if !chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
                out.push(Tok::Dot);
                i += 1;
            }
            '\'' | '"' => {
                let quote = c;
                let mut v = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(err(format!("unterminated string starting at {v:?}"))),
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
                out.push(Tok::Str(v));
            }
            '`' => {
                let mut v = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(err("unterminated `quoted` name")),
                        Some('`') if chars.get(i + 1) == Some(&'`') => {
                            v.push('`');
                            i += 2;
                        }
                        Some('`') => {
                            i += 1;
                            break;
                        }
                        Some(&ch) => {
                            v.push(ch);
                            i += 1;
                        }
                    }
                }
                out.push(Tok::Quoted(v));
            }
            '=' => {
                i += if chars.get(i + 1) == Some(&'=') { 2 } else { 1 };
                out.push(Tok::Op(CmpOp::Eq));
            }
            '!' if chars.get(i + 1) == Some(&'=') => {
                i += 2;
                out.push(Tok::Op(CmpOp::Ne));
            }
            '<' => {
                let (op, n) = match chars.get(i + 1) {
                    Some('=') => (CmpOp::Le, 2),
                    Some('>') => (CmpOp::Ne, 2),
                    _ => (CmpOp::Lt, 1),
                };
                i += n;
                out.push(Tok::Op(op));
            }
            '>' => {
                let (op, n) = if chars.get(i + 1) == Some(&'=') {
                    (CmpOp::Ge, 2)
                } else {
                    (CmpOp::Gt, 1)
                };
                i += n;
                out.push(Tok::Op(op));
            }
            '+' | '-' | '*' | '/' | '%' => {
                out.push(Tok::Arith(match c {
                    '+' => ArithOp::Add,
                    '-' => ArithOp::Sub,
                    '*' => ArithOp::Mul,
                    '/' => ArithOp::Div,
                    _ => ArithOp::Mod,
                }));
                i += 1;
            }
            '|' if chars.get(i + 1) == Some(&'|') => {
                out.push(Tok::Concat);
                i += 2;
            }
            c if c.is_ascii_digit() || c == '.' => {
                let start = i;
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
                let text: String = chars[start..i].iter().collect();
                if text.parse::<f64>().is_err() {
                    return Err(err(format!("invalid number {text:?}")));
                }
                out.push(Tok::Num(text));
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|ch| ch.is_alphanumeric() || *ch == '_' || *ch == '$')
                {
                    i += 1;
                }
                out.push(Tok::Ident(chars[start..i].iter().collect()));
            }
            other => return Err(err(format!("unexpected character {other:?}"))),
        }
    }
    Ok(out)
}

/// The deepest expression accepted, counting parentheses and every node of the tree (AND
/// and OR chains are built as balanced trees, so `n` terms add about `log2(n)` levels).
/// Parsing, binding, data skipping, evaluation and dropping all recurse over the tree; at
/// this depth they fit a 2 MiB thread stack even in debug builds.
pub const MAX_EXPR_DEPTH: usize = 64;

fn too_deep() -> ExprError {
    err(format!(
        "expression nests deeper than {MAX_EXPR_DEPTH} levels"
    ))
}

/// An expression and the depth of its tree.
type Node = (Expr, usize);

fn node(e: Expr, depth: usize) -> Result<Node> {
    if depth > MAX_EXPR_DEPTH {
        return Err(too_deep());
    }
    Ok((e, depth))
}

/// Joins `terms` (at least one) with an associative connective as a balanced tree; up to
/// three terms nest to the left, as written.
fn balanced(mut terms: Vec<Node>, join: fn(Box<Expr>, Box<Expr>) -> Expr) -> Result<Node> {
    if terms.len() <= 1 {
        return terms.pop().ok_or_else(|| err("empty expression"));
    }
    let right = terms.split_off(terms.len().div_ceil(2));
    let (left, left_depth) = balanced(terms, join)?;
    let (right, right_depth) = balanced(right, join)?;
    node(
        join(Box::new(left), Box::new(right)),
        1 + left_depth.max(right_depth),
    )
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    /// Open parentheses and NOTs above the current position.
    nesting: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s.eq_ignore_ascii_case(kw))
    }

    fn eat_keyword(&mut self, kw: &str) -> bool {
        if self.keyword(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Tok, what: &str) -> Result<()> {
        if self.peek() == Some(t) {
            self.pos += 1;
            Ok(())
        } else {
            Err(err(format!("expected {what}, found {}", self.describe())))
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "end of input".into(),
            Some(t) => format!("{t:?}"),
        }
    }

    /// Runs `f` one nesting level deeper (inside a parenthesis or a NOT).
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.nesting >= MAX_EXPR_DEPTH {
            return Err(too_deep());
        }
        self.nesting += 1;
        let r = f(self);
        self.nesting -= 1;
        r
    }

    fn or(&mut self) -> Result<Node> {
        let mut terms = vec![self.and()?];
        while self.eat_keyword("OR") {
            terms.push(self.and()?);
        }
        balanced(terms, Expr::Or)
    }

    fn and(&mut self) -> Result<Node> {
        let mut terms = vec![self.not()?];
        while self.eat_keyword("AND") {
            terms.push(self.not()?);
        }
        balanced(terms, Expr::And)
    }

    fn not(&mut self) -> Result<Node> {
        if self.eat_keyword("NOT") {
            let (e, depth) = self.nested(Self::not)?;
            return node(Expr::Not(Box::new(e)), depth + 1);
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Node> {
        let (left, depth) = self.sum()?;
        if let Some(Tok::Op(op)) = self.peek().cloned() {
            self.pos += 1;
            let (right, d) = self.sum()?;
            return node(
                Expr::Cmp(Box::new(left), op, Box::new(right)),
                1 + depth.max(d),
            );
        }
        if self.eat_keyword("IS") {
            let negated = self.eat_keyword("NOT");
            if !self.eat_keyword("NULL") {
                return Err(err(format!(
                    "expected NULL after IS, found {}",
                    self.describe()
                )));
            }
            return node(
                Expr::IsNull {
                    expr: Box::new(left),
                    negated,
                },
                depth + 1,
            );
        }
        let negated = if self.keyword("NOT") {
            self.pos += 1;
            true
        } else {
            false
        };
        if self.eat_keyword("IN") {
            self.expect(&Tok::LParen, "( after IN")?;
            let mut list = Vec::new();
            if self.peek() != Some(&Tok::RParen) {
                loop {
                    list.push(self.literal()?);
                    if self.peek() == Some(&Tok::Comma) {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
            }
            self.expect(&Tok::RParen, ") closing the IN list")?;
            return node(
                Expr::In {
                    expr: Box::new(left),
                    list,
                    negated,
                },
                depth + 1,
            );
        }
        if self.eat_keyword("BETWEEN") {
            let (low, low_depth) = self.sum()?;
            if !self.eat_keyword("AND") {
                return Err(err("expected AND in BETWEEN"));
            }
            let (high, high_depth) = self.sum()?;
            let e = Expr::And(
                Box::new(Expr::Cmp(Box::new(left.clone()), CmpOp::Ge, Box::new(low))),
                Box::new(Expr::Cmp(Box::new(left), CmpOp::Le, Box::new(high))),
            );
            let depth = 2 + depth.max(low_depth).max(high_depth);
            return if negated {
                node(Expr::Not(Box::new(e)), depth + 1)
            } else {
                node(e, depth)
            };
        }
        if negated {
            return Err(err("expected IN or BETWEEN after NOT"));
        }
        Ok((left, depth))
    }

    /// `+`, `-` and `||`, left-associative.
    fn sum(&mut self) -> Result<Node> {
        let (mut left, mut depth) = self.product()?;
        loop {
            let concat = match self.peek() {
                Some(Tok::Arith(ArithOp::Add | ArithOp::Sub)) => false,
                Some(Tok::Concat) => true,
                _ => return Ok((left, depth)),
            };
            let op = match self.peek() {
                Some(Tok::Arith(op)) => Some(*op),
                _ => None,
            };
            self.pos += 1;
            let (right, d) = self.product()?;
            let e = match (concat, op) {
                (false, Some(op)) => Expr::Arith(Box::new(left), op, Box::new(right)),
                _ => Expr::Concat(Box::new(left), Box::new(right)),
            };
            (left, depth) = node(e, 1 + depth.max(d))?;
        }
    }

    /// `*`, `/` and `%`, left-associative.
    fn product(&mut self) -> Result<Node> {
        let (mut left, mut depth) = self.unary()?;
        while let Some(Tok::Arith(op @ (ArithOp::Mul | ArithOp::Div | ArithOp::Mod))) =
            self.peek().cloned()
        {
            self.pos += 1;
            let (right, d) = self.unary()?;
            (left, depth) = node(
                Expr::Arith(Box::new(left), op, Box::new(right)),
                1 + depth.max(d),
            )?;
        }
        Ok((left, depth))
    }

    /// Unary minus and plus. A sign directly before a number is part of the literal, so
    /// `-5` stays the literal `-5` (and `x IN (-1)` a list of literals).
    fn unary(&mut self) -> Result<Node> {
        let sign = match self.peek() {
            Some(Tok::Arith(ArithOp::Sub)) => "-",
            Some(Tok::Arith(ArithOp::Add)) => "+",
            _ => return self.operand(),
        };
        self.pos += 1;
        if let Some(Tok::Num(n)) = self.peek().cloned() {
            self.pos += 1;
            return Ok((Expr::Literal(Literal::Number(format!("{sign}{n}"))), 1));
        }
        let (e, depth) = self.nested(Self::unary)?;
        if sign == "+" {
            return Ok((e, depth));
        }
        node(Expr::Neg(Box::new(e)), depth + 1)
    }

    fn literal(&mut self) -> Result<Literal> {
        match self.unary()?.0 {
            Expr::Literal(l) => Ok(l),
            other => Err(err(format!("expected a literal, found {other:?}"))),
        }
    }

    /// `CASE ... END` after the `CASE` keyword.
    fn case(&mut self) -> Result<Node> {
        let mut depth = 0;
        // The simple form `CASE x WHEN v THEN ...` compares `x` with each `v`.
        let (subject, subject_depth) = if self.keyword("WHEN") {
            (None, 0)
        } else {
            let (s, d) = self.sum()?;
            (Some(s), d)
        };
        let mut branches = Vec::new();
        while self.eat_keyword("WHEN") {
            let (mut cond, d) = if subject.is_some() {
                self.sum()?
            } else {
                self.or()?
            };
            depth = depth.max(d);
            if let Some(s) = &subject {
                cond = Expr::Cmp(Box::new(s.clone()), CmpOp::Eq, Box::new(cond));
                depth = depth.max(1 + d.max(subject_depth));
            }
            if !self.eat_keyword("THEN") {
                return Err(err(format!(
                    "expected THEN in CASE, found {}",
                    self.describe()
                )));
            }
            let (value, d) = self.or()?;
            depth = depth.max(d);
            branches.push((cond, value));
        }
        if branches.is_empty() {
            return Err(err(format!(
                "expected WHEN in CASE, found {}",
                self.describe()
            )));
        }
        let otherwise = if self.eat_keyword("ELSE") {
            let (e, d) = self.or()?;
            depth = depth.max(d);
            Some(Box::new(e))
        } else {
            None
        };
        if !self.eat_keyword("END") {
            return Err(err(format!(
                "expected END closing CASE, found {}",
                self.describe()
            )));
        }
        node(
            Expr::Case {
                branches,
                otherwise,
            },
            depth + 1,
        )
    }

    /// The arguments of `COALESCE(` up to its `)`.
    fn coalesce(&mut self) -> Result<Node> {
        let mut args = Vec::new();
        let mut depth = 0;
        loop {
            let (e, d) = self.or()?;
            depth = depth.max(d);
            args.push(e);
            if self.peek() == Some(&Tok::Comma) {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.expect(&Tok::RParen, ") closing COALESCE")?;
        node(Expr::Coalesce(args), depth + 1)
    }

    /// The argument of `YEAR(` (`MONTH(`, `DAY(`) up to its `)`.
    fn date_part(&mut self, field: DateField) -> Result<Node> {
        let (e, depth) = self.or()?;
        self.expect(&Tok::RParen, ") closing a date function")?;
        node(Expr::DatePart(field, Box::new(e)), depth + 1)
    }

    /// The rest of `CAST(` up to its `)`.
    fn cast(&mut self) -> Result<Node> {
        let (e, depth) = self.or()?;
        if !self.eat_keyword("AS") {
            return Err(err(format!(
                "expected AS in CAST, found {}",
                self.describe()
            )));
        }
        let ty = self.type_name()?;
        self.expect(&Tok::RParen, ") closing CAST")?;
        node(Expr::Cast(Box::new(e), DataType::Primitive(ty)), depth + 1)
    }

    fn type_name(&mut self) -> Result<PrimitiveType> {
        let Some(Tok::Ident(name)) = self.peek().cloned() else {
            return Err(err(format!("expected a type, found {}", self.describe())));
        };
        self.pos += 1;
        Ok(match name.to_ascii_lowercase().as_str() {
            "int" | "integer" => PrimitiveType::Integer,
            "long" | "bigint" => PrimitiveType::Long,
            "short" | "smallint" => PrimitiveType::Short,
            "byte" | "tinyint" => PrimitiveType::Byte,
            "double" => PrimitiveType::Double,
            "float" | "real" => PrimitiveType::Float,
            "string" => PrimitiveType::String,
            "boolean" => PrimitiveType::Boolean,
            "date" => PrimitiveType::Date,
            "timestamp" => PrimitiveType::Timestamp,
            "timestamp_ntz" => PrimitiveType::TimestampNtz,
            "binary" => PrimitiveType::Binary,
            "decimal" | "dec" | "numeric" => {
                let (mut p, mut s) = (10u32, 0u32);
                if self.peek() == Some(&Tok::LParen) {
                    self.pos += 1;
                    p = self.small_number()?;
                    if self.peek() == Some(&Tok::Comma) {
                        self.pos += 1;
                        s = self.small_number()?;
                    }
                    self.expect(&Tok::RParen, ") closing the decimal type")?;
                }
                if !(1..=38).contains(&p) || s > p {
                    return Err(err(format!("invalid type decimal({p},{s})")));
                }
                PrimitiveType::Decimal(p as u8, s as u8)
            }
            other => return Err(err(format!("unknown type {other:?} in CAST"))),
        })
    }

    fn small_number(&mut self) -> Result<u32> {
        match self.peek().cloned() {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                n.parse::<u32>()
                    .map_err(|_| err(format!("{n:?} is not a decimal precision or scale")))
            }
            _ => Err(err(format!(
                "expected a number in the decimal type, found {}",
                self.describe()
            ))),
        }
    }

    fn name(&mut self) -> Result<String> {
        match self.peek().cloned() {
            Some(Tok::Ident(s)) | Some(Tok::Quoted(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => Err(err(format!(
                "expected a column name after '.', found {}",
                self.describe()
            ))),
        }
    }

    fn operand(&mut self) -> Result<Node> {
        let leaf = |e| Ok((e, 1));
        match self.peek().cloned() {
            Some(Tok::LParen) => {
                self.pos += 1;
                let e = self.nested(Self::or)?;
                self.expect(&Tok::RParen, ")")?;
                Ok(e)
            }
            Some(Tok::Num(n)) => {
                self.pos += 1;
                leaf(Expr::Literal(Literal::Number(n)))
            }
            Some(Tok::Str(s)) => {
                self.pos += 1;
                leaf(Expr::Literal(Literal::String(s)))
            }
            Some(Tok::Ident(s)) => {
                self.pos += 1;
                let upper = s.to_ascii_uppercase();
                match upper.as_str() {
                    "TRUE" => return leaf(Expr::Literal(Literal::Boolean(true))),
                    "FALSE" => return leaf(Expr::Literal(Literal::Boolean(false))),
                    "NULL" => return leaf(Expr::Literal(Literal::Null)),
                    "DATE" | "TIMESTAMP" | "TIMESTAMP_NTZ" => {
                        if let Some(Tok::Str(v)) = self.peek().cloned() {
                            self.pos += 1;
                            return leaf(Expr::Literal(Literal::String(v)));
                        }
                    }
                    "CASE" => return self.nested(Self::case),
                    "YEAR" | "MONTH" | "DAY" | "DAYOFMONTH"
                        if self.peek() == Some(&Tok::LParen) =>
                    {
                        self.pos += 1;
                        let field = match upper.as_str() {
                            "YEAR" => DateField::Year,
                            "MONTH" => DateField::Month,
                            _ => DateField::Day,
                        };
                        return self.nested(|p| p.date_part(field));
                    }
                    "COALESCE" | "CAST" if self.peek() == Some(&Tok::LParen) => {
                        self.pos += 1;
                        return if upper == "CAST" {
                            self.nested(Self::cast)
                        } else {
                            self.nested(Self::coalesce)
                        };
                    }
                    "AND" | "OR" | "NOT" | "IS" | "IN" | "BETWEEN" | "WHEN" | "THEN" | "ELSE"
                    | "END" => {
                        return Err(err(format!("unexpected keyword {s}")));
                    }
                    _ => {}
                }
                leaf(self.column_rest(s)?)
            }
            Some(Tok::Quoted(s)) => {
                self.pos += 1;
                leaf(self.column_rest(s)?)
            }
            _ => Err(err(format!(
                "expected a column, a literal or '(', found {}",
                self.describe()
            ))),
        }
    }

    fn column_rest(&mut self, first: String) -> Result<Expr> {
        let mut path = vec![first];
        while self.peek() == Some(&Tok::Dot) {
            self.pos += 1;
            path.push(self.name()?);
        }
        Ok(Expr::Column(path))
    }
}

/// Parses a predicate such as `region = 'US' AND (x > 5 OR y IS NULL)`.
///
/// # Errors
/// [`ExprError::Invalid`] describing the first problem.
pub fn parse_expr(text: &str) -> Result<Expr> {
    let toks = lex(text)?;
    if toks.is_empty() {
        return Err(err("empty expression"));
    }
    let mut p = Parser {
        toks,
        pos: 0,
        nesting: 0,
    };
    let (e, _) = p.or()?;
    if p.pos != p.toks.len() {
        return Err(err(format!(
            "unexpected {} after the expression",
            p.describe()
        )));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(s: &str) -> Box<Expr> {
        Box::new(Expr::Column(vec![s.into()]))
    }

    #[test]
    fn parses_precedence_and_forms() {
        let e = parse_expr("a = 1 OR b > 'x' AND NOT c IS NULL").unwrap();
        let expected = Expr::Or(
            Box::new(Expr::Cmp(
                col("a"),
                CmpOp::Eq,
                Box::new(Expr::Literal(Literal::Number("1".into()))),
            )),
            Box::new(Expr::And(
                Box::new(Expr::Cmp(
                    col("b"),
                    CmpOp::Gt,
                    Box::new(Expr::Literal(Literal::String("x".into()))),
                )),
                Box::new(Expr::Not(Box::new(Expr::IsNull {
                    expr: col("c"),
                    negated: false,
                }))),
            )),
        );
        assert_eq!(e, expected);
        assert!(
            matches!(parse_expr("x NOT IN (1, 2.5, -3e2, 'it''s', NULL)").unwrap(), Expr::In { list: l, negated: true, .. } if l.len() == 5)
        );
        assert!(
            matches!(parse_expr("`we.ird`.inner <> 2").unwrap(), Expr::Cmp(c, CmpOp::Ne, _) if *c == Expr::Column(vec!["we.ird".into(), "inner".into()]))
        );
        assert!(matches!(
            parse_expr("d BETWEEN DATE '2020-01-01' AND '2020-12-31'").unwrap(),
            Expr::And(..)
        ));
        assert!(matches!(
            parse_expr("x IS NOT NULL").unwrap(),
            Expr::IsNull { negated: true, .. }
        ));
        assert!(parse_expr("flag").is_ok());
        assert!(parse_expr("a = -0.5").is_ok());
    }

    #[test]
    fn parses_value_expressions() {
        let lit = |n: &str| Box::new(Expr::Literal(Literal::Number(n.into())));
        // Precedence: * over +, + over comparison, left-associative.
        assert_eq!(
            parse_expr("a + 2 * b - 1 > 0").unwrap(),
            Expr::Cmp(
                Box::new(Expr::Arith(
                    Box::new(Expr::Arith(
                        col("a"),
                        ArithOp::Add,
                        Box::new(Expr::Arith(lit("2"), ArithOp::Mul, col("b"))),
                    )),
                    ArithOp::Sub,
                    lit("1"),
                )),
                CmpOp::Gt,
                lit("0"),
            )
        );
        // A sign before a number is part of the literal; elsewhere it is unary minus.
        assert_eq!(
            parse_expr("a-1").unwrap(),
            Expr::Arith(col("a"), ArithOp::Sub, lit("1"))
        );
        assert_eq!(
            parse_expr("-1").unwrap(),
            Expr::Literal(Literal::Number("-1".into()))
        );
        assert_eq!(parse_expr("-a").unwrap(), Expr::Neg(col("a")));
        assert_eq!(parse_expr("+a").unwrap(), *col("a"));
        assert_eq!(
            parse_expr("a || b || 'c'").unwrap(),
            Expr::Concat(
                Box::new(Expr::Concat(col("a"), col("b"))),
                Box::new(Expr::Literal(Literal::String("c".into())))
            )
        );
        assert_eq!(
            parse_expr("case when a then 1 else 2 end").unwrap(),
            Expr::Case {
                branches: vec![(*col("a"), *lit("1"))],
                otherwise: Some(lit("2")),
            }
        );
        assert_eq!(
            parse_expr("CASE a WHEN 1 THEN 2 END").unwrap(),
            Expr::Case {
                branches: vec![(Expr::Cmp(col("a"), CmpOp::Eq, lit("1")), *lit("2"))],
                otherwise: None,
            }
        );
        assert_eq!(
            parse_expr("coalesce(a, 0)").unwrap(),
            Expr::Coalesce(vec![*col("a"), *lit("0")])
        );
        for (text, ty) in [
            ("int", PrimitiveType::Integer),
            ("INTEGER", PrimitiveType::Integer),
            ("bigint", PrimitiveType::Long),
            ("long", PrimitiveType::Long),
            ("short", PrimitiveType::Short),
            ("smallint", PrimitiveType::Short),
            ("byte", PrimitiveType::Byte),
            ("tinyint", PrimitiveType::Byte),
            ("double", PrimitiveType::Double),
            ("float", PrimitiveType::Float),
            ("string", PrimitiveType::String),
            ("boolean", PrimitiveType::Boolean),
            ("date", PrimitiveType::Date),
            ("timestamp", PrimitiveType::Timestamp),
            ("timestamp_ntz", PrimitiveType::TimestampNtz),
            ("binary", PrimitiveType::Binary),
            ("decimal", PrimitiveType::Decimal(10, 0)),
            ("decimal(12)", PrimitiveType::Decimal(12, 0)),
            ("decimal(38, 4)", PrimitiveType::Decimal(38, 4)),
        ] {
            assert_eq!(
                parse_expr(&format!("CAST(a AS {text})")).unwrap(),
                Expr::Cast(col("a"), DataType::Primitive(ty)),
                "{text}"
            );
        }
        // CAST and COALESCE are names when not called; CASE words are reserved.
        assert_eq!(
            parse_expr("cast = 1").unwrap(),
            Expr::Cmp(col("cast"), CmpOp::Eq, lit("1"))
        );
        assert!(parse_expr("`end` = 1").is_ok());
        assert!(parse_expr("end = 1").is_err());
    }

    #[test]
    fn reports_errors() {
        for bad in [
            "",
            "a =",
            "a = 'x",
            "(a = 1",
            "a = 1 b",
            "a IN 1",
            "a IS 5",
            "a == == 1",
            "#",
            "AND",
            "a NOT 1",
            "a = 1..2",
            "a +",
            "a * * b",
            "a | b",
            "CASE END",
            "CASE WHEN a END",
            "CASE WHEN a THEN 1",
            "CASE WHEN a THEN 1 ELSE END",
            "COALESCE()",
            "COALESCE(a",
            "CAST(a)",
            "CAST(a AS)",
            "CAST(a AS widget)",
            "CAST(a AS decimal(40,2))",
            "CAST(a AS decimal(5,6))",
            "CAST(a AS int",
            "a IN (b)",
            "a IN (1 + 1)",
        ] {
            assert!(
                matches!(parse_expr(bad), Err(ExprError::Invalid(_))),
                "{bad:?}"
            );
        }
    }

    /// A 20 kB filter overflowed the stack: 5,000 nested parentheses or NOTs in the parser,
    /// and a chain of 5,000 ANDs in binding (reproduced with the `filter_expr` fuzz target on
    /// crafted inputs; its default input size stops just short of the crash).
    #[test]
    fn deep_expressions_are_refused_and_long_chains_stay_shallow() {
        for text in [
            format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000)),
            format!("{}a", "(".repeat(100_000)),
            format!("{}a", "NOT ".repeat(100_000)),
            format!("{}a", "NOT (".repeat(100_000)),
        ] {
            match parse_expr(&text) {
                Err(ExprError::Invalid(m)) => assert!(m.contains("deeper"), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        // At the limit: a comparison is two levels, each NOT one more.
        let nots = |n: usize| format!("{}a = 1", "NOT ".repeat(n));
        assert!(parse_expr(&nots(MAX_EXPR_DEPTH - 2)).is_ok());
        assert!(parse_expr(&nots(MAX_EXPR_DEPTH - 1)).is_err());
        // 2^17 terms: 17 levels of ORs above the comparisons.
        let chain = vec!["a = 1"; 1 << 17].join(" OR ");
        assert!(matches!(parse_expr(&chain), Ok(Expr::Or(..))));
        let chain = vec!["a"; 100_000].join(" AND ");
        assert!(matches!(parse_expr(&chain), Ok(Expr::And(..))));
        // Short chains nest to the left as written.
        let a = |s: &str| Box::new(Expr::Column(vec![s.into()]));
        assert_eq!(
            parse_expr("a AND b AND c").unwrap(),
            Expr::And(Box::new(Expr::And(a("a"), a("b"))), a("c"))
        );
        // The value forms are guarded too.
        for text in [
            format!("{}a", "-".repeat(100_000)),
            format!("{}a", "- ".repeat(100_000)),
            format!("{}a{}", "COALESCE(".repeat(100_000), ")".repeat(100_000)),
            format!("{}a{}", "CAST(".repeat(100_000), " AS int)".repeat(100_000)),
            format!(
                "{}1{}",
                "CASE WHEN a THEN ".repeat(100_000),
                " END".repeat(100_000)
            ),
            format!("{}1", "CASE WHEN a THEN 1 ELSE ".repeat(100_000)),
            vec!["a"; 100_000].join(" + "),
            vec!["a"; 100_000].join(" || "),
            vec!["a"; 100_000].join(" * "),
            format!("{}a{}", "(a + ".repeat(100_000), ")".repeat(100_000)),
        ] {
            match parse_expr(&text) {
                Err(ExprError::Invalid(m)) => assert!(m.contains("deeper"), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        let sum = |n: usize| vec!["a"; n].join(" + ");
        assert!(parse_expr(&sum(MAX_EXPR_DEPTH)).is_ok());
        assert!(parse_expr(&sum(MAX_EXPR_DEPTH + 1)).is_err());
        // Long IN lists are a single node.
        let list = format!("a IN ({})", vec!["1"; 100_000].join(", "));
        assert!(
            matches!(parse_expr(&list), Ok(Expr::In { list: l, negated: false, .. }) if l.len() == 100_000)
        );
    }

    #[test]
    fn date_functions_parse_print_and_type() {
        assert_eq!(
            parse_expr("year(ts) + DAYOFMONTH(d)").unwrap(),
            Expr::Arith(
                Box::new(Expr::DatePart(DateField::Year, col("ts"))),
                ArithOp::Add,
                Box::new(Expr::DatePart(DateField::Day, col("d")))
            )
        );
        let e = parse_expr("MONTH(CAST(ts AS date)) = 3").unwrap();
        assert_eq!(e.to_string(), "MONTH(CAST(ts AS date)) = 3");
        assert_eq!(parse_expr(&e.to_string()).unwrap(), e);
        // Without `(` the names are columns.
        assert_eq!(parse_expr("year").unwrap(), *col("year"));
        let schema = alluvium_txlog::schema::StructType::from_json(
            r#"{"type":"struct","fields":[{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},{"name":"s","type":"string","nullable":true,"metadata":{}}]}"#,
        )
        .unwrap();
        let mode = alluvium_txlog::column_mapping::ColumnMappingMode::None;
        let v = crate::bind_value(&parse_expr("YEAR(ts)").unwrap(), &schema, &[], mode).unwrap();
        assert_eq!(v.data_type(), &DataType::Primitive(PrimitiveType::Integer));
        assert!(crate::bind_value(&parse_expr("YEAR(s)").unwrap(), &schema, &[], mode).is_err());
    }
}
