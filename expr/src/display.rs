//! The text form of an unbound [`Expr`]: SQL in the `--filter` language that
//! [`parse_expr`](crate::parse_expr) reads back to the same predicate. Used where a
//! predicate built through the API must be recorded as text (`commitInfo`
//! `operationParameters.predicate`).

use std::fmt;

use crate::lex::is_keyword;
use crate::{ArithOp, Expr, Literal};
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::scalar::text::{
    format_date, format_decimal, format_naive_timestamp, format_timestamp,
};
use alluvium_txlog::schema::DataType;

/// Names printed back-quoted besides the grammar's keywords: function names and typed
/// literal prefixes, kept quoted so that no later grammar change can re-read them.
const QUOTED_NAMES: [&str; 3] = ["CAST", "COALESCE", "TIMESTAMP_NTZ"];

fn write_name(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    let mut chars = name.chars();
    let bare = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_keyword(name)
        && !QUOTED_NAMES.iter().any(|k| k.eq_ignore_ascii_case(name));
    if bare {
        f.write_str(name)
    } else {
        write!(f, "`{}`", name.replace('`', "``"))
    }
}

fn write_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    write!(f, "'{}'", s.replace('\'', "''"))
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Number(n) => f.write_str(n),
            Literal::String(s) => write_string(f, s),
            Literal::Boolean(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            Literal::Null => f.write_str("NULL"),
            Literal::Interval(i) => write!(f, "{i}"),
            Literal::Typed(s) => match s {
                Scalar::Null => f.write_str("NULL"),
                Scalar::Boolean(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
                Scalar::Byte(v) => write!(f, "{v}"),
                Scalar::Short(v) => write!(f, "{v}"),
                Scalar::Integer(v) => write!(f, "{v}"),
                Scalar::Long(v) => write!(f, "{v}"),
                Scalar::Float(v) => write!(f, "{v}"),
                Scalar::Double(v) => write!(f, "{v}"),
                Scalar::String(v) => write_string(f, v),
                // The grammar has no binary literal: the bytes as hex text.
                Scalar::Binary(v) => {
                    let hex: String = v.iter().map(|b| format!("{b:02x}")).collect();
                    write_string(f, &hex)
                }
                Scalar::Date(d) => write!(f, "DATE '{}'", format_date(*d)),
                Scalar::Timestamp(t) => write!(f, "TIMESTAMP '{}'", format_timestamp(*t)),
                Scalar::TimestampNtz(t) => {
                    write!(f, "TIMESTAMP '{}'", format_naive_timestamp(*t))
                }
                Scalar::Decimal { value, scale, .. } => {
                    f.write_str(&format_decimal(*value, *scale))
                }
            },
        }
    }
}

/// Binding strength, loosest first: what needs parentheses inside what.
fn level(e: &Expr) -> u8 {
    match e {
        Expr::Or(..) => 0,
        Expr::And(..) => 1,
        Expr::Not(..) => 2,
        Expr::Cmp(..)
        | Expr::IsNull { .. }
        | Expr::In { .. }
        | Expr::Like { .. }
        | Expr::IsDistinctFrom { .. } => 3,
        Expr::Arith(_, ArithOp::Add | ArithOp::Sub, _) | Expr::Concat(..) => 4,
        Expr::Arith(..) => 5,
        Expr::Neg(_) => 6,
        Expr::Column(_)
        | Expr::Literal(_)
        | Expr::Case { .. }
        | Expr::Coalesce(_)
        | Expr::Cast(..)
        | Expr::DatePart(..)
        | Expr::Call { .. } => 7,
    }
}

/// `e`, in parentheses when it binds more loosely than `min`.
fn write_at(f: &mut fmt::Formatter<'_>, e: &Expr, min: u8) -> fmt::Result {
    if level(e) < min {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

/// True for a literal printed as a number (which a leading `-` would join).
/// The operands of a chain of one connective (`AND` or `OR`, as `e`'s kind), left to right.
fn chain_terms<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::And(l, r) | Expr::Or(l, r) => {
            chain_terms_of(l, e, out);
            chain_terms_of(r, e, out);
        }
        _ => out.push(e),
    }
}

fn chain_terms_of<'a>(child: &'a Expr, parent: &Expr, out: &mut Vec<&'a Expr>) {
    if std::mem::discriminant(child) == std::mem::discriminant(parent) {
        chain_terms(child, out);
    } else {
        out.push(child);
    }
}

/// Whether `e` is the tree the parser builds from `terms` (its balanced join: the first
/// `ceil(n/2)` terms on the left).
fn is_parsed_shape(e: &Expr, terms: &[&Expr]) -> bool {
    if let [only] = terms {
        return std::ptr::eq(e, *only);
    }
    let (l, r) = match e {
        Expr::And(l, r) | Expr::Or(l, r) => (l, r),
        _ => return false,
    };
    let k = terms.len().div_ceil(2);
    is_parsed_shape(l, &terms[..k]) && is_parsed_shape(r, &terms[k..])
}

/// Prints an `AND`/`OR` chain so that it parses back to the same tree: flat (`a OR b OR c`)
/// when the tree is the one the parser builds from those operands, else its two sides
/// each in parentheses (a tree built through the API).
fn write_chain(f: &mut fmt::Formatter<'_>, e: &Expr, sep: &str, operand_level: u8) -> fmt::Result {
    let mut terms = Vec::new();
    chain_terms(e, &mut terms);
    if is_parsed_shape(e, &terms) {
        for (i, t) in terms.iter().enumerate() {
            if i > 0 {
                f.write_str(sep)?;
            }
            write_at(f, t, operand_level)?;
        }
        return Ok(());
    }
    let (Expr::And(l, r) | Expr::Or(l, r)) = e else {
        return write!(f, "{e}");
    };
    write!(f, "({l}){sep}({r})")
}

fn numeric_literal(e: &Expr) -> bool {
    match e {
        Expr::Literal(Literal::Number(_)) => true,
        Expr::Literal(Literal::Typed(s)) => s.as_f64().is_some(),
        _ => false,
    }
}

fn write_type(f: &mut fmt::Formatter<'_>, t: &DataType) -> fmt::Result {
    match t {
        DataType::Primitive(p) => f.write_str(&p.name()),
        // Only primitive targets parse; name the type for diagnostics.
        other => write!(f, "{other}"),
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column(path) => {
                for (i, name) in path.iter().enumerate() {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    write_name(f, name)?;
                }
                Ok(())
            }
            Expr::Literal(l) => write!(f, "{l}"),
            Expr::Cmp(l, op, r) => {
                write_at(f, l, 4)?;
                write!(f, " {} ", op.symbol())?;
                write_at(f, r, 4)
            }
            Expr::IsNull { expr: e, negated } => {
                write_at(f, e, 4)?;
                f.write_str(if *negated { " IS NOT NULL" } else { " IS NULL" })
            }
            Expr::In {
                expr: e,
                list: values,
                negated,
            } => {
                write_at(f, e, 4)?;
                f.write_str(if *negated { " NOT IN (" } else { " IN (" })?;
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str(")")
            }
            Expr::And(..) => write_chain(f, self, " AND ", 2),
            Expr::Or(..) => write_chain(f, self, " OR ", 1),
            Expr::Not(e) => {
                f.write_str("NOT ")?;
                write_at(f, e, 2)
            }
            Expr::Arith(l, op, r) => {
                let lvl = level(self);
                write_at(f, l, lvl)?;
                write!(f, " {} ", op.symbol())?;
                write_at(f, r, lvl + 1)
            }
            Expr::Concat(l, r) => {
                write_at(f, l, 4)?;
                f.write_str(" || ")?;
                write_at(f, r, 5)
            }
            Expr::Neg(e) => match &**e {
                // A nested minus, or a number that carries its own sign, follows after a
                // space (`- -x`, `- -5`): parentheses would make the text read back nest
                // deeper than the text that was parsed, and fail the depth limit.
                Expr::Neg(_) => write!(f, "- {e}"),
                Expr::Literal(Literal::Number(n)) if n.starts_with(['-', '+']) => {
                    write!(f, "- {n}")
                }
                // `-5` would read back as the literal -5: an unsigned number keeps its
                // parentheses (the parsed text had them too).
                inner if numeric_literal(inner) => write!(f, "-({e})"),
                _ => {
                    f.write_str("-")?;
                    write_at(f, e, 6)
                }
            },
            Expr::Case {
                branches,
                otherwise,
            } => {
                f.write_str("CASE")?;
                for (c, v) in branches {
                    write!(f, " WHEN {c} THEN {v}")?;
                }
                if let Some(o) = otherwise {
                    write!(f, " ELSE {o}")?;
                }
                f.write_str(" END")
            }
            Expr::Coalesce(args) => {
                f.write_str("COALESCE(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
            Expr::Cast(e, t) => {
                write!(f, "CAST({e} AS ")?;
                write_type(f, t)?;
                f.write_str(")")
            }
            Expr::DatePart(field, e) => write!(f, "{}({e})", field.name()),
            Expr::Like {
                expr,
                pattern,
                escape,
                case_insensitive,
                negated,
            } => {
                write_at(f, expr, 4)?;
                f.write_str(match (negated, case_insensitive) {
                    (false, false) => " LIKE ",
                    (false, true) => " ILIKE ",
                    (true, false) => " NOT LIKE ",
                    (true, true) => " NOT ILIKE ",
                })?;
                write_at(f, pattern, 4)?;
                if let Some(c) = escape {
                    f.write_str(" ESCAPE ")?;
                    write_string(f, &c.to_string())?;
                }
                Ok(())
            }
            Expr::IsDistinctFrom {
                left,
                right,
                negated,
            } => {
                write_at(f, left, 4)?;
                f.write_str(if *negated {
                    " IS NOT DISTINCT FROM "
                } else {
                    " IS DISTINCT FROM "
                })?;
                write_at(f, right, 4)
            }
            Expr::Call { function, args } => {
                write!(f, "{}(", function.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MAX_EXPR_DEPTH, parse_expr};

    /// Regression (fuzz target `filter_expr`): a chain of unary minus signs near the depth
    /// limit was printed as `-(-(-(...)))`, whose parentheses nest twice as deep, so the
    /// printed text no longer parsed. Signs now print as `- -x`.
    #[test]
    fn long_minus_chains_print_as_deep_as_they_parse() {
        let chain = format!("c > {}TIMES", "-".repeat(43));
        for text in [
            chain.as_str(),
            "c > --5",
            "c > -+5",
            "c > -(5)",
            "c > ---(5)",
            "c > -(-(x))",
            "c > - -5 + 1",
        ] {
            let e = parse_expr(text).unwrap();
            let printed = e.to_string();
            assert_eq!(
                parse_expr(&printed).unwrap(),
                e,
                "{text} printed as {printed}"
            );
        }
        let deepest = format!("c > {}x", "-".repeat(MAX_EXPR_DEPTH - 2));
        let e = parse_expr(&deepest).unwrap();
        assert_eq!(parse_expr(&e.to_string()).unwrap(), e);
    }

    /// Regression (fuzz target `filter_expr`): `a OR b OR c OR d OR e` parses as a balanced
    /// tree, which was printed as `a OR b OR c OR (d OR e)` and read back as another tree.
    #[test]
    fn long_chains_print_as_the_parser_builds_them() {
        for text in [
            "a OR b OR c OR d OR e",
            "a AND b AND c AND d AND e AND f AND g",
            "a OR (b OR c)",
            "(a OR b) OR c OR d",
            "a AND (b AND c AND d) AND e",
            "--(1)%v6 OR NOT vi = 7 OR JOTi = 7 OR NOT vi = 6 OR NOT vi",
        ] {
            let e = parse_expr(text).unwrap();
            let printed = e.to_string();
            assert_eq!(
                parse_expr(&printed).unwrap(),
                e,
                "{text} printed as {printed}"
            );
        }
        // A right-leaning tree built through the API keeps its shape too.
        let col = |n: &str| Expr::Column(vec![n.to_string()]);
        let built = col("a").or(col("b").or(col("c").or(col("d"))));
        assert_eq!(parse_expr(&built.to_string()).unwrap(), built);
    }

    /// Printing then parsing gives the predicate back, whatever nesting needs parentheses.
    #[test]
    fn display_round_trips_through_the_parser() {
        for text in [
            "a = 1",
            "a = 1 AND b = 'x''y'",
            "(a = 1 OR b = 2) AND c = 3",
            "a = 1 OR b = 2 AND c = 3",
            "NOT (a = 1 AND b IS NULL)",
            "NOT a IS NOT NULL",
            "`odd name` IN (1, 2, 3) OR s.f NOT IN ('a')",
            "`and` = TRUE",
            "d = DATE '2024-01-02'",
            "a = NULL OR a != -1.50",
            "a = 1 AND (b = 2 AND c = 3)",
            "a + 1 > b * 2",
            "a - (b - c) = a - b - c",
            "a * (b + c) / d % 2 = 0",
            "-a + -(-b) - -5 = -(5)",
            "- - a = 1",
            "-(a + b) * c",
            "a || 'x' || b = 'y'",
            "a || (b + 1)",
            "(a = b) = (c = d)",
            "(a + 1) IS NULL",
            "a + 1 IN (1, 2) AND b - 1 NOT IN (-3)",
            "CASE WHEN a > 1 THEN 'x' WHEN b IS NULL THEN 'y' ELSE 'z' END = 'x'",
            "CASE WHEN a OR b THEN 1 + 2 END",
            "CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END",
            "COALESCE(a, b + 1, -c, NULL)",
            "CAST(a AS int) + CAST(b AS decimal(10,2)) = CAST('1' AS bigint)",
            "CAST(CAST(a AS string) || 'x' AS binary)",
            "CAST(a AS timestamp_ntz) > TIMESTAMP '2020-01-01 00:00:00'",
            "`case` + `end` * `when` = `cast`",
            "t.id = s.id AND t.`v`.x > s.v * 1.5e3",
            "NOT (a + 1 > 2)",
            "a BETWEEN b - 1 AND b + 1",
            "name LIKE 'a%' AND name NOT LIKE '%b_'",
            "name ILIKE 'A%' OR name NOT ILIKE p",
            "name LIKE 'a!%%' ESCAPE '!' AND x LIKE '%''%' ESCAPE ''''",
            "(a = b) LIKE 'x' AND (a LIKE b) = TRUE",
            "a || 'x' LIKE b || '%'",
            "a IS DISTINCT FROM b AND c IS NOT DISTINCT FROM NULL",
            "(a IS DISTINCT FROM b) IS NOT DISTINCT FROM TRUE",
            "a + 1 IS DISTINCT FROM b * 2",
            "lower(name) = upper(trim(x)) || ltrim(y) || rtrim(z)",
            "length(s) > 3 AND substring(s, 2, 3) = 'abc' AND substr(s, -1) = 'z'",
            "substring(s FROM 2 FOR 3) = substring(s FROM 2)",
            "concat(a, '-', b) = 'x' AND starts_with(a, 'p') AND ends_with(a, b) AND contains(a, 'q')",
            "replace(a, 'x') = replace(a, 'x', 'y')",
            "abs(a) + round(b, 2) - round(c) > floor(d) * ceil(e)",
            "greatest(a, b, 1) = least(c, NULL) AND nullif(a, 0) IS NULL",
            "date_trunc('MONTH', ts) = to_timestamp('2024-01-01', 'yyyy-MM-dd')",
            "to_date(s) = current_date AND ts < current_timestamp() AND now() > ts",
            "EXTRACT(YEAR FROM ts) = 2024 AND HOUR(ts) > QUARTER(d) + WEEKOFYEAR(d)",
            "DAYOFWEEK(d) + DAYOFYEAR(d) + MINUTE(ts) + SECOND(ts) = 1",
            "ts > current_timestamp - INTERVAL 1 DAY",
            "d + INTERVAL '1' MONTH < DATE '2024-01-01' + INTERVAL 1 YEAR 2 MONTHS",
            "ts + INTERVAL 2 HOURS 30 MINUTES 1.5 SECONDS - INTERVAL '1 day 2 hours' > ts",
            "ts - -INTERVAL 1 DAY > ts + INTERVAL -1 DAY -3 HOURS",
            "INTERVAL 1 WEEK + d = d + INTERVAL 7 DAYS + INTERVAL 0 DAY",
            "d + INTERVAL 1 DAY - 2 = d",
            "`like` LIKE `escape` ESCAPE '#' AND `interval` = `current_date`",
            "`distinct` IS DISTINCT FROM `from` AND `for` = `ilike`",
        ] {
            let parsed = parse_expr(text).unwrap();
            let printed = parsed.to_string();
            assert_eq!(
                parse_expr(&printed).unwrap(),
                parsed,
                "{text} printed as {printed}"
            );
        }
    }

    /// Expressions built through the API (so not shaped by the parser) print as SQL that
    /// parses back to the very same tree, whatever their nesting.
    #[test]
    fn built_trees_round_trip() {
        use crate::{DateField, Function, Interval};
        use alluvium_txlog::schema::{DataType, PrimitiveType};
        let leaves = [
            Expr::column("a"),
            Expr::path(["t", "b c"]),
            Expr::lit(5),
            Expr::lit(-2),
            Expr::lit("it's"),
            Expr::lit(1.25),
            Expr::lit(true),
            Expr::lit(Literal::Null),
        ];
        // Every binary form over every pair of leaves and small trees.
        let mut trees: Vec<Expr> = leaves.to_vec();
        for round in 0..2 {
            let current = trees.clone();
            let step = if round == 0 { 1 } else { 7 };
            for (i, x) in current.iter().enumerate().step_by(step) {
                for y in current.iter().skip(i % 5).step_by(step * 3) {
                    let (x, y) = (x.clone(), y.clone());
                    trees.extend([
                        x.clone().add(y.clone()),
                        x.clone().sub(y.clone()),
                        x.clone().mul(y.clone()),
                        x.clone().div(y.clone()),
                        x.clone().rem(y.clone()),
                        x.clone().concat(y.clone()),
                        x.clone().neg(),
                        x.clone().lt(y.clone()),
                        x.clone().eq(y.clone()).and(y.clone().is_null()),
                        x.clone().or(y.clone().not()),
                        Expr::case_when(vec![(x.clone(), y.clone())], Some(x.clone())),
                        Expr::coalesce(vec![x.clone(), y.clone()]),
                        x.clone()
                            .cast(DataType::Primitive(PrimitiveType::Decimal(7, 3))),
                        x.clone().like("a%").escape('!'),
                        x.clone().not_ilike("A\\_%"),
                        x.clone().is_distinct_from(y.clone()),
                        x.clone().is_not_distinct_from(y.clone()).not(),
                        x.clone().lower().concat(y.clone().upper()),
                        x.clone().substring(y.clone(), Some(x.clone())),
                        Expr::call(Function::Greatest, vec![x.clone(), y.clone()]),
                        x.clone().date_trunc("DAY").lt(Expr::current_timestamp()),
                        x.clone().add(Expr::lit(Interval {
                            months: -14,
                            days: 3,
                            micros: -3_723_000_001,
                        })),
                        x.clone().sub(Expr::lit(Interval::days(1)).neg()),
                        x.clone().date_part(DateField::DayOfWeek),
                    ]);
                }
            }
        }
        assert!(trees.len() > 1000, "{}", trees.len());
        for e in trees {
            let printed = e.to_string();
            assert_eq!(parse_expr(&printed).unwrap(), e, "{printed}");
        }
    }

    /// A small fuzzer in the test suite: token soups from the whole grammar that parse
    /// must print as SQL that parses back to the same tree (the `filter_expr` fuzz target
    /// checks the same on arbitrary bytes).
    #[test]
    fn token_soups_that_parse_round_trip() {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        const WORDS: [&str; 70] = [
            "a",
            "b",
            "s",
            "(",
            ")",
            ",",
            "=",
            "<",
            ">=",
            "<>",
            "+",
            "-",
            "*",
            "/",
            "%",
            "||",
            "AND",
            "OR",
            "NOT",
            "IS",
            "NULL",
            "DISTINCT",
            "FROM",
            "IN",
            "BETWEEN",
            "LIKE",
            "ILIKE",
            "ESCAPE",
            "'x'",
            "'%'",
            "'!'",
            "''''",
            "1",
            "2.5",
            "-3",
            "0",
            "INTERVAL",
            "DAY",
            "HOURS",
            "'1 day'",
            "SECOND",
            "1.5",
            "MONTH",
            "lower",
            "substring",
            "FOR",
            "EXTRACT",
            "YEAR",
            "CAST",
            "AS",
            "int",
            "CASE",
            "WHEN",
            "THEN",
            "ELSE",
            "END",
            "current_date",
            "now",
            "greatest",
            "TRUE",
            "DATE",
            "'2020-01-01'",
            "`x y`",
            ".",
            "round",
            "COALESCE",
            "date_trunc",
            "'MONTH'",
            "concat",
            "nullif",
        ];
        let mut rng = StdRng::seed_from_u64(7);
        let mut parsed = 0;
        for _ in 0..200_000 {
            let n = rng.random_range(1..14);
            let text: Vec<&str> = (0..n)
                .map(|_| WORDS[rng.random_range(0..WORDS.len())])
                .collect();
            let text = text.join(" ");
            let Ok(e) = parse_expr(&text) else { continue };
            parsed += 1;
            let printed = e.to_string();
            match parse_expr(&printed) {
                Ok(again) => assert_eq!(again, e, "{text} printed as {printed}"),
                Err(err) => panic!("{text} printed as {printed}, which does not parse: {err}"),
            }
        }
        assert!(parsed > 5_000, "{parsed}");
    }

    #[test]
    fn simple_predicates_print_as_written() {
        let e = Expr::column("id")
            .cmp(crate::CmpOp::Gt, Literal::Number("10".into()))
            .and(Expr::column("p").cmp(crate::CmpOp::Eq, Literal::String("x".into())));
        assert_eq!(e.to_string(), "id > 10 AND p = 'x'");
    }
}
