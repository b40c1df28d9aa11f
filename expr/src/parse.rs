//! The parser of the expression language (predicates and values), with errors that name
//! the position and what was expected there.
//!
//! ```text
//! expr      := or
//! or        := and ("OR" and)*
//! and       := not ("AND" not)*
//! not       := "NOT" not | predicate
//! predicate := sum [ cmp sum
//!                  | "IS" ["NOT"] "NULL" | "IS" ["NOT"] "DISTINCT" "FROM" sum
//!                  | ["NOT"] "IN" "(" literal ("," literal)* ")"
//!                  | ["NOT"] "BETWEEN" sum "AND" sum
//!                  | ["NOT"] ("LIKE" | "ILIKE") sum ["ESCAPE" 'c'] ]
//! sum       := product (("+" | "-" | "||") product)*          (left-associative)
//! product   := unary (("*" | "/" | "%") unary)*               (left-associative)
//! unary     := "-" unary | "+" unary | operand                 (`-5` is the literal -5)
//! operand   := column | literal | "(" expr ")"
//!            | "CASE" ("WHEN" expr "THEN" expr)+ ["ELSE" expr] "END"
//!            | "CASE" sum ("WHEN" sum "THEN" expr)+ ["ELSE" expr] "END"   (= CASE WHEN sum = v ...)
//!            | "COALESCE" "(" expr ("," expr)* ")" | "CAST" "(" expr "AS" type ")"
//!            | "EXTRACT" "(" field "FROM" expr ")" | field_function "(" expr ")"
//!            | "SUBSTRING" "(" expr ("FROM" expr ["FOR" expr] | "," expr ["," expr]) ")"
//!            | function "(" [expr ("," expr)*] ")" | "CURRENT_DATE" | "CURRENT_TIMESTAMP"
//! column    := name ("." name)*          name: identifier or `back-quoted`
//! literal   := ["-"] number | 'string' | TRUE | FALSE | NULL | DATE 'x' | TIMESTAMP 'x'
//!            | INTERVAL (["-"] number | 'n') unit ((["-"] number | 'n') unit)* | INTERVAL 'n unit ...'
//! cmp       := "=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">="
//! type      := int | integer | long | bigint | short | smallint | byte | tinyint | double
//!            | float | real | string | boolean | date | timestamp | timestamp_ntz | binary
//!            | decimal ["(" p ["," s] ")"]
//! unit      := YEAR | MONTH | WEEK | DAY | HOUR | MINUTE | SECOND | MILLISECOND | MICROSECOND
//!              (singular or plural)
//! ```
//! Keywords are case-insensitive; `''` inside a string is a quote. `||` sits with `+` and
//! `-` as in Spark. `CASE`, `WHEN`, `THEN`, `ELSE` and `END` are reserved (a column of that
//! name is written back-quoted); function names are functions only before `(`, except
//! `CURRENT_DATE` and `CURRENT_TIMESTAMP`, which need no parentheses. `x BETWEEN a AND b`
//! is read as `x >= a AND x <= b`. The functions are [`Function`]'s; the calendar fields
//! are [`DateField`]'s.

use crate::error::SyntaxError;
use crate::function::{arity_words, plural};
use crate::interval::{IntervalUnit, UNIT_NAMES};
use crate::lex::{Tok, Token, describe, lex};
use crate::suggest::nearest;
use crate::{ArithOp, CmpOp, DateField, Expr, ExprError, Function, Interval, Literal, Result};
use alluvium_txlog::schema::{DataType, PrimitiveType};

/// The deepest expression accepted, counting parentheses and every node of the tree (AND
/// and OR chains are built as balanced trees, so `n` terms add about `log2(n)` levels).
/// Parsing, binding, data skipping, evaluation and dropping all recurse over the tree; at
/// this depth they fit a 2 MiB thread stack even in debug builds.
pub const MAX_EXPR_DEPTH: usize = 64;

fn too_deep() -> ExprError {
    ExprError::Invalid(format!(
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
        return terms
            .pop()
            .ok_or_else(|| ExprError::Invalid("empty expression".into()));
    }
    let right = terms.split_off(terms.len().div_ceil(2));
    let (left, left_depth) = balanced(terms, join)?;
    let (right, right_depth) = balanced(right, join)?;
    node(
        join(Box::new(left), Box::new(right)),
        1 + left_depth.max(right_depth),
    )
}

/// Words the operand position refuses: they only continue or close another form.
const NOT_AN_OPERAND: [&str; 10] = [
    "AND", "OR", "NOT", "IS", "IN", "BETWEEN", "WHEN", "THEN", "ELSE", "END",
];

/// The type names `CAST` accepts, for messages.
const TYPE_NAMES: [&str; 16] = [
    "int",
    "integer",
    "bigint",
    "long",
    "smallint",
    "short",
    "tinyint",
    "byte",
    "double",
    "float",
    "real",
    "string",
    "boolean",
    "date",
    "timestamp",
    "binary",
];

struct Parser<'t> {
    text: &'t str,
    /// The text's length in characters (the position of "end of input").
    len: usize,
    toks: Vec<Token>,
    pos: usize,
    /// Open parentheses and NOTs above the current position.
    nesting: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.peek_at(self.pos)
    }

    fn peek_at(&self, i: usize) -> Option<&Tok> {
        self.toks.get(i).map(|t| &t.tok)
    }

    fn keyword_at(&self, i: usize, kw: &str) -> bool {
        matches!(self.peek_at(i), Some(Tok::Ident(s)) if s.eq_ignore_ascii_case(kw))
    }

    fn keyword(&self, kw: &str) -> bool {
        self.keyword_at(self.pos, kw)
    }

    fn eat_keyword(&mut self, kw: &str) -> bool {
        if self.keyword(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// The characters of token `i` (an empty range at the end of the text past the last).
    fn span(&self, i: usize) -> (usize, usize) {
        self.toks
            .get(i)
            .map_or((self.len, self.len), |t| (t.start, t.end))
    }

    /// A syntax error about token `i`.
    fn error_at(&self, i: usize, message: impl Into<String>) -> ExprError {
        let (start, end) = self.span(i);
        ExprError::Syntax(SyntaxError::new(message, self.text, start, end))
    }

    /// A syntax error about tokens `from..=to`.
    fn error_over(&self, from: usize, to: usize, message: impl Into<String>) -> ExprError {
        let (start, _) = self.span(from);
        let (_, end) = self.span(to);
        ExprError::Syntax(SyntaxError::new(message, self.text, start, end))
    }

    /// "expected `what`, found <the current token>", at the current token.
    fn expected(&self, what: &str) -> ExprError {
        self.error_at(
            self.pos,
            format!("expected {what}, found {}", describe(self.peek())),
        )
    }

    fn expect(&mut self, t: &Tok, what: &str) -> Result<()> {
        if self.peek() == Some(t) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.expected(what))
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
            if self.eat_keyword("NULL") {
                return node(
                    Expr::IsNull {
                        expr: Box::new(left),
                        negated,
                    },
                    depth + 1,
                );
            }
            if self.eat_keyword("DISTINCT") {
                if !self.eat_keyword("FROM") {
                    return Err(self.expected("FROM after IS DISTINCT"));
                }
                let (right, d) = self.sum()?;
                return node(
                    Expr::IsDistinctFrom {
                        left: Box::new(left),
                        right: Box::new(right),
                        negated,
                    },
                    1 + depth.max(d),
                );
            }
            let is = if negated { "IS NOT" } else { "IS" };
            return Err(self.expected(&format!("NULL or DISTINCT FROM after {is}")));
        }
        let not_at = self.pos;
        let negated = self.eat_keyword("NOT");
        if self.eat_keyword("IN") {
            self.expect(&Tok::LParen, "`(` after IN")?;
            let mut list = Vec::new();
            if self.peek() != Some(&Tok::RParen) {
                loop {
                    list.push(self.literal("the IN list")?);
                    if self.peek() == Some(&Tok::Comma) {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
            }
            self.expect(&Tok::RParen, "`,` or `)` closing the IN list")?;
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
                return Err(self.expected("AND in BETWEEN"));
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
        let like = self.keyword("LIKE");
        if like || self.keyword("ILIKE") {
            self.pos += 1;
            let (pattern, d) = self.sum()?;
            let escape = if self.eat_keyword("ESCAPE") {
                let at = self.pos;
                let Some(Tok::Str(s)) = self.peek().cloned() else {
                    return Err(self.expected("a one-character string after ESCAPE"));
                };
                let mut chars = s.chars();
                let (Some(c), None) = (chars.next(), chars.next()) else {
                    return Err(self.error_at(
                        at,
                        format!(
                            "ESCAPE takes a single character, found string '{s}' of {}",
                            plural(s.chars().count(), "character")
                        ),
                    ));
                };
                self.pos += 1;
                Some(c)
            } else {
                None
            };
            return node(
                Expr::Like {
                    expr: Box::new(left),
                    pattern: Box::new(pattern),
                    escape,
                    case_insensitive: !like,
                    negated,
                },
                1 + depth.max(d),
            );
        }
        if negated {
            self.pos = not_at;
            return Err(self.error_at(
                not_at + 1,
                format!(
                    "expected IN, BETWEEN, LIKE or ILIKE after NOT, found {}",
                    describe(self.peek_at(not_at + 1))
                ),
            ));
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

    /// A literal (an element of an IN list).
    fn literal(&mut self, context: &str) -> Result<Literal> {
        let start = self.pos;
        match self.unary()?.0 {
            Expr::Literal(l) => Ok(l),
            _ => Err(self.error_over(
                start,
                self.pos.saturating_sub(1).max(start),
                format!("{context} takes literals only (numbers, strings, TRUE, FALSE, NULL)"),
            )),
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
                return Err(self.expected("THEN in CASE"));
            }
            let (value, d) = self.or()?;
            depth = depth.max(d);
            branches.push((cond, value));
        }
        if branches.is_empty() {
            return Err(self.expected("WHEN in CASE"));
        }
        let otherwise = if self.eat_keyword("ELSE") {
            let (e, d) = self.or()?;
            depth = depth.max(d);
            Some(Box::new(e))
        } else {
            None
        };
        if !self.eat_keyword("END") {
            return Err(self.expected(if otherwise.is_some() {
                "END closing CASE"
            } else {
                "WHEN, ELSE or END in CASE"
            }));
        }
        node(
            Expr::Case {
                branches,
                otherwise,
            },
            depth + 1,
        )
    }

    /// Comma-separated arguments up to the closing `)` (the `(` is consumed), with the
    /// deepest argument's depth.
    fn arguments(&mut self, what: &str) -> Result<(Vec<Expr>, usize)> {
        let mut args = Vec::new();
        let mut depth = 0;
        if self.peek() == Some(&Tok::RParen) {
            self.pos += 1;
            return Ok((args, depth));
        }
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
        self.expect(&Tok::RParen, &format!("`,` or `)` closing {what}"))?;
        Ok((args, depth))
    }

    /// The arguments of `COALESCE(` up to its `)`.
    fn coalesce(&mut self, name_at: usize) -> Result<Node> {
        let (args, depth) = self.arguments("COALESCE")?;
        if args.is_empty() {
            return Err(self.error_over(
                name_at,
                self.pos - 1,
                "COALESCE takes at least 1 argument, found none",
            ));
        }
        node(Expr::Coalesce(args), depth + 1)
    }

    /// A call of `function` (`name(` consumed; the name is token `name_at`).
    fn call(&mut self, function: Function, name_at: usize) -> Result<Node> {
        let name = match self.peek_at(name_at) {
            Some(Tok::Ident(n)) => n.clone(),
            _ => function.name().to_string(),
        };
        let (args, depth) = self.arguments(&name)?;
        let (min, max) = function.arity();
        if args.len() < min || max.is_some_and(|m| args.len() > m) {
            return Err(self.error_over(
                name_at,
                self.pos - 1,
                format!(
                    "{name} takes {}, found {}",
                    arity_words(min, max),
                    if args.is_empty() {
                        "none".to_string()
                    } else {
                        args.len().to_string()
                    }
                ),
            ));
        }
        node(Expr::Call { function, args }, depth + 1)
    }

    /// `SUBSTRING(s FROM pos [FOR len])` or `SUBSTRING(s, pos [, len])` after the `(`.
    fn substring(&mut self, name_at: usize) -> Result<Node> {
        let (s, d0) = self.or()?;
        if !self.eat_keyword("FROM") {
            // The ordinary call form: put the first argument back in front of the rest.
            if self.peek() == Some(&Tok::RParen) {
                return Err(self.expected("`,` or FROM and the start position in SUBSTRING"));
            }
            self.expect(&Tok::Comma, "`,` or FROM in SUBSTRING")?;
            // `arguments` takes an empty list; after the comma the start is required (else
            // `substring(s, )` would parse as a one-argument call that prints unparseably).
            if self.peek() == Some(&Tok::RParen) {
                return Err(self.expected("the start position in SUBSTRING"));
            }
            let (mut rest, d) = self.arguments("SUBSTRING")?;
            rest.insert(0, s);
            if rest.len() > 3 {
                return Err(self.error_over(
                    name_at,
                    self.pos - 1,
                    format!("SUBSTRING takes 2 or 3 arguments, found {}", rest.len()),
                ));
            }
            return node(
                Expr::Call {
                    function: Function::Substring,
                    args: rest,
                },
                1 + d.max(d0),
            );
        }
        let (start, d1) = self.or()?;
        let mut args = vec![s, start];
        let mut depth = d0.max(d1);
        if self.eat_keyword("FOR") {
            let (len, d2) = self.or()?;
            args.push(len);
            depth = depth.max(d2);
        }
        self.expect(&Tok::RParen, "FOR or `)` closing SUBSTRING")?;
        node(
            Expr::Call {
                function: Function::Substring,
                args,
            },
            depth + 1,
        )
    }

    /// `EXTRACT(field FROM x)` after the `(`.
    fn extract(&mut self) -> Result<Node> {
        let at = self.pos;
        let Some(Tok::Ident(name)) = self.peek().cloned() else {
            return Err(self.expected("a field (YEAR, MONTH, DAY, HOUR, ...) in EXTRACT"));
        };
        let Some(field) = DateField::from_extract(&name) else {
            let message = if ["SECOND", "SECONDS", "S", "SEC", "SECS"]
                .iter()
                .any(|s| s.eq_ignore_ascii_case(&name))
            {
                "EXTRACT(SECOND FROM x) gives fractional seconds in Spark, which alluvium does not support; SECOND(x) gives whole seconds".to_string()
            } else {
                let fields = [
                    "YEAR",
                    "QUARTER",
                    "MONTH",
                    "WEEK",
                    "DAY",
                    "DAYOFWEEK",
                    "DOY",
                    "HOUR",
                    "MINUTE",
                ];
                format!(
                    "unknown field {name} in EXTRACT{}; the fields are {}",
                    nearest(&name, fields)
                        .map(|f| format!(" (did you mean {f}?)"))
                        .unwrap_or_default(),
                    fields.join(", ")
                )
            };
            return Err(self.error_at(at, message));
        };
        self.pos += 1;
        if !self.eat_keyword("FROM") {
            return Err(self.expected("FROM in EXTRACT"));
        }
        let (e, depth) = self.or()?;
        self.expect(&Tok::RParen, "`)` closing EXTRACT")?;
        node(Expr::DatePart(field, Box::new(e)), depth + 1)
    }

    /// The argument of `YEAR(` (`MONTH(`, `HOUR(`, ...) up to its `)`.
    fn date_part(&mut self, field: DateField) -> Result<Node> {
        let (e, depth) = self.or()?;
        self.expect(&Tok::RParen, &format!("`)` closing {}", field.name()))?;
        node(Expr::DatePart(field, Box::new(e)), depth + 1)
    }

    /// The rest of `CAST(` up to its `)`.
    fn cast(&mut self) -> Result<Node> {
        let (e, depth) = self.or()?;
        if !self.eat_keyword("AS") {
            return Err(self.expected("AS and a type in CAST"));
        }
        let ty = self.type_name()?;
        self.expect(&Tok::RParen, "`)` closing CAST")?;
        node(Expr::Cast(Box::new(e), DataType::Primitive(ty)), depth + 1)
    }

    fn type_name(&mut self) -> Result<PrimitiveType> {
        let at = self.pos;
        let Some(Tok::Ident(name)) = self.peek().cloned() else {
            return Err(self.expected("a type (int, bigint, double, decimal(p,s), string, ...)"));
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
                    self.expect(&Tok::RParen, "`)` closing the decimal type")?;
                }
                match (u8::try_from(p), u8::try_from(s)) {
                    (Ok(p), Ok(s)) if (1..=38).contains(&p) && s <= p => {
                        PrimitiveType::Decimal(p, s)
                    }
                    _ => {
                        return Err(self.error_over(
                            at,
                            self.pos - 1,
                            format!(
                                "invalid type decimal({p},{s}): the precision is 1 to 38 and the scale at most the precision"
                            ),
                        ));
                    }
                }
            }
            other => {
                let hint = nearest(other, TYPE_NAMES.iter().copied().chain(["decimal"]))
                    .map(|t| format!("; did you mean {t}?"))
                    .unwrap_or_default();
                return Err(self.error_at(at, format!("unknown type {name} in CAST{hint}")));
            }
        })
    }

    fn small_number(&mut self) -> Result<u32> {
        match self.peek().cloned() {
            Some(Tok::Num(n)) => match n.parse::<u32>() {
                Ok(v) => {
                    self.pos += 1;
                    Ok(v)
                }
                Err(_) => {
                    Err(self.error_at(self.pos, format!("{n} is not a decimal precision or scale")))
                }
            },
            _ => Err(self.expected("a number in the decimal type")),
        }
    }

    fn name(&mut self) -> Result<String> {
        match self.peek().cloned() {
            Some(Tok::Ident(s)) | Some(Tok::Quoted(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.expected("a field name after `.`")),
        }
    }

    /// True if the tokens at the current position are another part of an interval:
    /// `[sign] (number | 'string') unit`.
    fn interval_part_follows(&self) -> bool {
        let mut i = self.pos;
        if matches!(
            self.peek_at(i),
            Some(Tok::Arith(ArithOp::Add | ArithOp::Sub))
        ) {
            i += 1;
        }
        matches!(self.peek_at(i), Some(Tok::Num(_) | Tok::Str(_)))
            && matches!(self.peek_at(i + 1), Some(Tok::Ident(w)) if IntervalUnit::from_word(w).is_some())
    }

    /// An `INTERVAL` literal after the keyword: parts `[sign] value unit`, or one string
    /// holding them (`'1 day 2 hours'`).
    fn interval(&mut self) -> Result<Node> {
        let mut total = Interval::default();
        loop {
            let part_at = self.pos;
            let sign = match self.peek() {
                Some(Tok::Arith(ArithOp::Sub)) => "-",
                Some(Tok::Arith(ArithOp::Add)) => "+",
                _ => "",
            };
            if !sign.is_empty() {
                self.pos += 1;
            }
            let value_at = self.pos;
            let (value, quoted) = match self.peek().cloned() {
                Some(Tok::Num(n)) => (n, false),
                Some(Tok::Str(s)) => (s, true),
                _ => return Err(self.expected("a number or a quoted value in INTERVAL")),
            };
            self.pos += 1;
            let unit = match self.peek() {
                Some(Tok::Ident(w)) => IntervalUnit::from_word(w),
                _ => None,
            };
            let part = match unit {
                Some(unit) => {
                    self.pos += 1;
                    Interval::of(&format!("{sign}{value}"), unit)
                        .map_err(|m| self.error_over(part_at, self.pos - 1, m))?
                }
                // `INTERVAL '1 day 2 hours'`: the parts inside the string.
                None if quoted && sign.is_empty() && part_at == value_at => self
                    .interval_text(&value)
                    .map_err(|m| self.error_at(value_at, m))?,
                None => {
                    let hint = match self.peek() {
                        Some(Tok::Ident(w)) => nearest(w, UNIT_NAMES)
                            .map(|u| format!(" (did you mean {u}?)"))
                            .unwrap_or_default(),
                        _ => String::new(),
                    };
                    return Err(self.error_at(
                        self.pos,
                        format!(
                            "expected a unit (YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND) after the interval value, found {}{hint}",
                            describe(self.peek())
                        ),
                    ));
                }
            };
            total = total
                .checked_add(part)
                .ok_or_else(|| self.error_over(part_at, self.pos - 1, "interval out of range"))?;
            if unit.is_none() || !self.interval_part_follows() {
                return Ok((Expr::Literal(Literal::Interval(total)), 1));
            }
        }
    }

    /// The parts of an interval written as one string (`'1 day 2 hours'`).
    fn interval_text(&self, text: &str) -> std::result::Result<Interval, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.is_empty() || !words.len().is_multiple_of(2) {
            return Err(format!(
                "'{text}' is not an interval: expected pairs of a number and a unit ('1 day 2 hours'), or a unit after the string (INTERVAL '1' DAY)"
            ));
        }
        let mut total = Interval::default();
        for pair in words.chunks(2) {
            let unit = IntervalUnit::from_word(pair[1]).ok_or_else(|| {
                format!(
                    "'{text}' is not an interval: unknown unit {}{}",
                    pair[1],
                    nearest(pair[1], UNIT_NAMES)
                        .map(|u| format!(" (did you mean {u}?)"))
                        .unwrap_or_default()
                )
            })?;
            let part = Interval::of(pair[0], unit)?;
            total = total
                .checked_add(part)
                .ok_or_else(|| format!("'{text}': interval out of range"))?;
        }
        Ok(total)
    }

    /// "expected a value" at the current token, naming what it should follow.
    fn expected_value(&self) -> ExprError {
        let after = match self.pos.checked_sub(1).and_then(|i| self.peek_at(i)) {
            Some(t) => format!(" after {}", describe(Some(t))),
            None => String::new(),
        };
        self.expected(&format!(
            "a value (a column, a literal, a function call or `(`){after}"
        ))
    }

    fn operand(&mut self) -> Result<Node> {
        let leaf = |e| Ok((e, 1));
        let at = self.pos;
        match self.peek().cloned() {
            Some(Tok::LParen) => {
                self.pos += 1;
                let e = self.nested(Self::or)?;
                self.expect(&Tok::RParen, "`)`")?;
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
                let upper = s.to_ascii_uppercase();
                let called = self.peek_at(at + 1) == Some(&Tok::LParen);
                match upper.as_str() {
                    "TRUE" => return self.skip_then(leaf(Expr::Literal(Literal::Boolean(true)))),
                    "FALSE" => {
                        return self.skip_then(leaf(Expr::Literal(Literal::Boolean(false))));
                    }
                    "NULL" => return self.skip_then(leaf(Expr::Literal(Literal::Null))),
                    "DATE" | "TIMESTAMP" | "TIMESTAMP_NTZ" => {
                        if let Some(Tok::Str(v)) = self.peek_at(at + 1).cloned() {
                            self.pos += 2;
                            return leaf(Expr::Literal(Literal::String(v)));
                        }
                    }
                    "INTERVAL"
                        if matches!(
                            self.peek_at(at + 1),
                            Some(
                                Tok::Num(_) | Tok::Str(_) | Tok::Arith(ArithOp::Add | ArithOp::Sub)
                            )
                        ) =>
                    {
                        self.pos += 1;
                        return self.interval();
                    }
                    "CASE" => {
                        self.pos += 1;
                        return self.nested(Self::case);
                    }
                    "CURRENT_DATE" | "CURRENT_TIMESTAMP" if !called => {
                        self.pos += 1;
                        let function = if upper == "CURRENT_DATE" {
                            Function::CurrentDate
                        } else {
                            Function::CurrentTimestamp
                        };
                        return leaf(Expr::Call {
                            function,
                            args: vec![],
                        });
                    }
                    w if NOT_AN_OPERAND.contains(&w) => return Err(self.expected_value()),
                    _ => {}
                }
                if called {
                    self.pos += 2;
                    return self.nested(|p| p.called(&s, &upper, at));
                }
                self.pos += 1;
                leaf(self.column_rest(s)?)
            }
            Some(Tok::Quoted(s)) => {
                self.pos += 1;
                leaf(self.column_rest(s)?)
            }
            _ => Err(self.expected_value()),
        }
    }

    /// Consumes the current token and returns `r`.
    fn skip_then(&mut self, r: Result<Node>) -> Result<Node> {
        self.pos += 1;
        r
    }

    /// `name(` consumed: a special form, a function, or an unknown name.
    fn called(&mut self, name: &str, upper: &str, at: usize) -> Result<Node> {
        match upper {
            "CAST" => return self.cast(),
            "COALESCE" => return self.coalesce(at),
            "EXTRACT" => return self.extract(),
            "SUBSTRING" | "SUBSTR" => return self.substring(at),
            _ => {}
        }
        if let Some(field) = DateField::from_function(upper) {
            return self.date_part(field);
        }
        if let Some(f) = Function::lookup(name) {
            return self.call(f, at);
        }
        let hint = nearest(name, Function::all_names())
            .map(|f| format!("; did you mean `{f}`?"))
            .unwrap_or_default();
        Err(self.error_at(at, format!("unknown function `{name}`{hint}")))
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

/// Parses an expression such as `region = 'US' AND (x > 5 OR name LIKE 'a%')`.
///
/// # Errors
/// [`ExprError::Syntax`] at the first token outside the grammar, saying what was expected
/// there (with the nearest name for a misspelt function); [`ExprError::Invalid`] for an
/// expression nested deeper than [`MAX_EXPR_DEPTH`].
pub fn parse_expr(text: &str) -> Result<Expr> {
    let toks = lex(text)?;
    let mut p = Parser {
        text,
        len: text.chars().count(),
        toks,
        pos: 0,
        nesting: 0,
    };
    if p.toks.is_empty() {
        return Err(p.expected("an expression"));
    }
    let (e, _) = p.or()?;
    if p.pos != p.toks.len() {
        return Err(p.expected("an operator or the end of the expression"));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Interval;

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
    fn parses_the_sql_people_type() {
        let lit = |n: &str| Box::new(Expr::Literal(Literal::Number(n.into())));
        let string = |v: &str| Box::new(Expr::Literal(Literal::String(v.into())));
        let like = |e, p, escape, ci, neg| Expr::Like {
            expr: e,
            pattern: p,
            escape,
            case_insensitive: ci,
            negated: neg,
        };
        assert_eq!(
            parse_expr("a LIKE 'x%'").unwrap(),
            like(col("a"), string("x%"), None, false, false)
        );
        assert_eq!(
            parse_expr("a not ilike b escape '!'").unwrap(),
            like(col("a"), col("b"), Some('!'), true, true)
        );
        // LIKE binds like a comparison: looser than ||, tighter than AND.
        assert_eq!(
            parse_expr("a || 'x' LIKE 'y%' AND b").unwrap(),
            Expr::And(
                Box::new(like(
                    Box::new(Expr::Concat(col("a"), string("x"))),
                    string("y%"),
                    None,
                    false,
                    false
                )),
                col("b")
            )
        );
        assert_eq!(
            parse_expr("a IS NOT DISTINCT FROM b + 1").unwrap(),
            Expr::IsDistinctFrom {
                left: col("a"),
                right: Box::new(Expr::Arith(col("b"), ArithOp::Add, lit("1"))),
                negated: true,
            }
        );
        let call = |f, args| Expr::Call { function: f, args };
        assert_eq!(
            parse_expr("LOWER(a)").unwrap(),
            call(Function::Lower, vec![*col("a")])
        );
        for same in [
            "substring(s, 2, 3)",
            "SUBSTRING(s FROM 2 FOR 3)",
            "substr(s, 2, 3)",
        ] {
            assert_eq!(
                parse_expr(same).unwrap(),
                call(Function::Substring, vec![*col("s"), *lit("2"), *lit("3")]),
                "{same}"
            );
        }
        assert_eq!(
            parse_expr("substring(s FROM -2)").unwrap(),
            call(Function::Substring, vec![*col("s"), *lit("-2")])
        );
        for same in ["YEAR(ts)", "extract(year FROM ts)", "EXTRACT(YRS FROM ts)"] {
            assert_eq!(
                parse_expr(same).unwrap(),
                Expr::DatePart(DateField::Year, col("ts")),
                "{same}"
            );
        }
        assert_eq!(
            parse_expr("EXTRACT(DOW FROM ts)").unwrap(),
            Expr::DatePart(DateField::DayOfWeek, col("ts"))
        );
        for same in ["current_date", "CURRENT_DATE()", "current_date ( )"] {
            assert_eq!(
                parse_expr(same).unwrap(),
                call(Function::CurrentDate, vec![]),
                "{same}"
            );
        }
        assert_eq!(
            parse_expr("now()").unwrap(),
            call(Function::CurrentTimestamp, vec![])
        );
        let interval = |months, days, micros| {
            Box::new(Expr::Literal(Literal::Interval(Interval {
                months,
                days,
                micros,
            })))
        };
        for (text, months, days, micros) in [
            ("INTERVAL '1' DAY", 0, 1, 0),
            ("INTERVAL 1 DAY", 0, 1, 0),
            ("interval 3 days", 0, 3, 0),
            ("INTERVAL '1 day'", 0, 1, 0),
            ("INTERVAL 2 HOURS", 0, 0, 7_200_000_000),
            ("INTERVAL 1 YEAR 2 MONTHS", 14, 0, 0),
            ("INTERVAL '1 year 2 months 3 days'", 14, 3, 0),
            ("INTERVAL -1 DAY 2 HOURS", 0, -1, 7_200_000_000),
            ("INTERVAL '-1' MONTH", -1, 0, 0),
            ("INTERVAL 1 WEEK", 0, 7, 0),
            (
                "INTERVAL 1.5 SECONDS 10 MILLISECONDS 7 MICROSECONDS",
                0,
                0,
                1_510_007,
            ),
        ] {
            assert_eq!(
                parse_expr(text).unwrap(),
                *interval(months, days, micros),
                "{text}"
            );
        }
        // The sign of a following term is not part of the interval.
        assert_eq!(
            parse_expr("d + INTERVAL 1 DAY - 2").unwrap(),
            Expr::Arith(
                Box::new(Expr::Arith(col("d"), ArithOp::Add, interval(0, 1, 0))),
                ArithOp::Sub,
                lit("2")
            )
        );
        // Without a value after it, `interval` is a column.
        assert_eq!(
            parse_expr("interval = 1").unwrap(),
            Expr::Cmp(col("interval"), CmpOp::Eq, lit("1"))
        );
        // Function names without `(` are columns; so are the words of other forms.
        assert_eq!(parse_expr("lower").unwrap(), *col("lower"));
        assert_eq!(
            parse_expr("like = escape").unwrap(),
            Expr::Cmp(col("like"), CmpOp::Eq, col("escape"))
        );
    }

    /// Every syntax error names the column, what was expected and what was found, in SQL
    /// words (no parser token names), with a caret under the offending text.
    #[test]
    fn reports_errors() {
        for (bad, column, message) in [
            ("", 1, "expected an expression, found end of input"),
            (
                "a =",
                4,
                "expected a value (a column, a literal, a function call or `(`) after `=`, found end of input",
            ),
            ("a = 'x", 5, "unterminated string: no closing '"),
            ("(a = 1", 7, "expected `)`, found end of input"),
            (
                "a = 1 b",
                7,
                "expected an operator or the end of the expression, found name `b`",
            ),
            ("a IN 1", 6, "expected `(` after IN, found number 1"),
            (
                "a IS 5",
                6,
                "expected NULL or DISTINCT FROM after IS, found number 5",
            ),
            (
                "a IS NOT DISTINCT b",
                19,
                "expected FROM after IS DISTINCT, found name `b`",
            ),
            ("a == == 1", 6, "after `=`, found `=`"),
            ("#", 1, "unexpected character `#`"),
            (
                "AND",
                1,
                "expected a value (a column, a literal, a function call or `(`), found keyword AND",
            ),
            (
                "a NOT 1",
                7,
                "expected IN, BETWEEN, LIKE or ILIKE after NOT, found number 1",
            ),
            ("a = 1..2", 5, "malformed number 1..2"),
            ("a +", 4, "after `+`, found end of input"),
            ("a * * b", 5, "after `*`, found `*`"),
            ("a | b", 3, "unexpected character `|`"),
            ("CASE END", 6, "found keyword END"),
            (
                "CASE WHEN a END",
                13,
                "expected THEN in CASE, found keyword END",
            ),
            (
                "CASE WHEN a THEN 1",
                19,
                "expected WHEN, ELSE or END in CASE, found end of input",
            ),
            ("CASE WHEN a THEN 1 ELSE END", 25, "found keyword END"),
            (
                "COALESCE()",
                1,
                "COALESCE takes at least 1 argument, found none",
            ),
            (
                "COALESCE(a",
                11,
                "expected `,` or `)` closing COALESCE, found end of input",
            ),
            ("CAST(a)", 7, "expected AS and a type in CAST, found `)`"),
            (
                "CAST(a AS)",
                10,
                "expected a type (int, bigint, double, decimal(p,s), string, ...), found `)`",
            ),
            ("CAST(a AS widget)", 11, "unknown type widget in CAST"),
            (
                "CAST(a AS strng)",
                11,
                "unknown type strng in CAST; did you mean string?",
            ),
            ("CAST(a AS decimal(40,2))", 11, "invalid type decimal(40,2)"),
            ("CAST(a AS decimal(5,6))", 11, "invalid type decimal(5,6)"),
            (
                "CAST(a AS int",
                14,
                "expected `)` closing CAST, found end of input",
            ),
            ("a IN (b)", 7, "the IN list takes literals only"),
            (
                "a IN (1 + 1)",
                9,
                "expected `,` or `)` closing the IN list, found `+`",
            ),
            ("a LIKE", 7, "after keyword LIKE, found end of input"),
            (
                "a LIKE 'x' ESCAPE",
                18,
                "expected a one-character string after ESCAPE, found end of input",
            ),
            (
                "a LIKE 'x' ESCAPE 'ab'",
                19,
                "ESCAPE takes a single character, found string 'ab' of 2 characters",
            ),
            (
                "lowr(a) = 'x'",
                1,
                "unknown function `lowr`; did you mean `lower`?",
            ),
            ("upper(a, b)", 1, "upper takes exactly 1 argument, found 2"),
            (
                "current_date(1)",
                1,
                "current_date takes no arguments, found 1",
            ),
            (
                "substring(a)",
                12,
                "expected `,` or FROM and the start position in SUBSTRING, found `)`",
            ),
            (
                "substring(a, )",
                14,
                "expected the start position in SUBSTRING, found `)`",
            ),
            (
                "substring(a, 1, 2, 3)",
                1,
                "SUBSTRING takes 2 or 3 arguments, found 4",
            ),
            (
                "EXTRACT(YEAR a)",
                14,
                "expected FROM in EXTRACT, found name `a`",
            ),
            (
                "EXTRACT(YAER FROM a)",
                9,
                "unknown field YAER in EXTRACT (did you mean YEAR?)",
            ),
            ("EXTRACT(SECOND FROM a)", 9, "SECOND(x) gives whole seconds"),
            (
                "d + INTERVAL 1",
                15,
                "expected a unit (YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND) after the interval value, found end of input",
            ),
            (
                "d + INTERVAL 1 dya",
                16,
                "found name `dya` (did you mean DAY?)",
            ),
            (
                "d + INTERVAL 1.5 DAY",
                14,
                "interval 1.5 DAY: a whole number is needed",
            ),
            ("d + INTERVAL '1 fortnight'", 14, "unknown unit fortnight"),
            (
                "a.",
                3,
                "expected a field name after `.`, found end of input",
            ),
        ] {
            let e = match parse_expr(bad) {
                Err(ExprError::Syntax(e)) => e,
                other => panic!("{bad:?}: {other:?}"),
            };
            assert!(e.message().contains(message), "{bad:?}: {}", e.message());
            assert_eq!(e.column(), column, "{bad:?}: {e}");
            let shown = ExprError::Syntax(e.clone()).to_string();
            assert!(
                shown.starts_with(&format!("syntax error at column {column}: ")),
                "{shown}"
            );
            for rust in [
                "Ident", "LParen", "RParen", "Tok", "Num(", "Str(", "Some(", "None",
            ] {
                assert!(!shown.contains(rust), "{bad:?}: {shown}");
            }
            let pointer = e.pointer();
            let caret = pointer.lines().nth(1).and_then(|l| l.find('^'));
            assert_eq!(caret, Some(column + 1), "{bad:?}:\n{pointer}");
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
