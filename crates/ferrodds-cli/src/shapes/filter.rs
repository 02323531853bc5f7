//! Content filters of the shape application: `-c RED` (the color equals RED) and `--cft
//! "<expression>"`, an expression in the subset of the DDS filter grammar (DDS 1.4 Annex B)
//! that ShapeType needs: the members `color`, `x`, `y`, `shapesize`; integer and
//! `'string'` literals; `=`, `<>` (or `!=`), `<`, `<=`, `>`, `>=`, `LIKE` (`%` any string,
//! `_` any character), `BETWEEN a AND b`, `NOT BETWEEN`; `AND`, `OR`, `NOT` and
//! parentheses. Keywords are case-insensitive. Parameters (`%0`) are not supported.
//!
//! FerroDDS applies the filter in the reader, to every sample as it arrives (see
//! `Subscriber::create_reader_with_filter`); this module only turns the text into the
//! predicate.

use std::fmt;
use std::sync::Arc;

use super::shape::ShapeType;

/// A parsed filter, cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Filter(Arc<Expr>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Color,
    X,
    Y,
    Shapesize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Int(i64),
    Text(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Like,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Operand {
    Field(Field),
    Value(Value),
}

#[derive(Debug)]
enum Expr {
    Compare(Operand, Op, Operand),
    Between(Operand, Operand, Operand),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

/// Why an expression was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FilterError(String);

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Int(i64),
    Text(String),
    Op(Op),
    Open,
    Close,
}

fn tokenize(s: &str) -> Result<Vec<Token>, FilterError> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            '\'' | '`' | '"' => {
                // 'text' ('' inside is one quote); RTI also accepts other quotes.
                let quote = c;
                let mut text = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(FilterError("unterminated string literal".into())),
                        Some(&q) if q == quote && chars.get(i + 1) == Some(&quote) => {
                            text.push(quote);
                            i += 2;
                        }
                        Some(&q) if q == quote || (quote == '`' && q == '\'') => {
                            i += 1;
                            break;
                        }
                        Some(&ch) => {
                            text.push(ch);
                            i += 1;
                        }
                    }
                }
                out.push(Token::Text(text));
            }
            '=' => {
                out.push(Token::Op(Op::Eq));
                i += 1;
            }
            '<' | '>' | '!' => {
                let next = chars.get(i + 1).copied();
                let (op, len) = match (c, next) {
                    ('<', Some('=')) => (Op::Le, 2),
                    ('<', Some('>')) => (Op::Ne, 2),
                    ('<', _) => (Op::Lt, 1),
                    ('>', Some('=')) => (Op::Ge, 2),
                    ('>', _) => (Op::Gt, 1),
                    ('!', Some('=')) => (Op::Ne, 2),
                    _ => return Err(FilterError(format!("unexpected `{c}`"))),
                };
                out.push(Token::Op(op));
                i += len;
            }
            c if c.is_ascii_digit() || c == '-' || c == '+' => {
                let start = i;
                i += 1;
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                let n = text
                    .parse()
                    .map_err(|_| FilterError(format!("`{text}` is not an integer")))?;
                out.push(Token::Int(n));
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if word.eq_ignore_ascii_case("like") {
                    out.push(Token::Op(Op::Like));
                } else {
                    out.push(Token::Word(word));
                }
            }
            '%' => {
                return Err(FilterError(
                    "filter parameters (%n) are not supported".into(),
                ))
            }
            c => return Err(FilterError(format!("unexpected `{c}`"))),
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn keyword(&mut self, k: &str) -> bool {
        if matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case(k)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Expr, FilterError> {
        let mut left = self.and()?;
        while self.keyword("or") {
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, FilterError> {
        let mut left = self.not()?;
        while self.keyword("and") {
            left = Expr::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, FilterError> {
        if self.keyword("not") {
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        if self.peek() == Some(&Token::Open) {
            self.at += 1;
            let e = self.or()?;
            return match self.next() {
                Some(Token::Close) => Ok(e),
                _ => Err(FilterError("missing `)`".into())),
            };
        }
        self.predicate()
    }

    fn operand(&mut self) -> Result<Operand, FilterError> {
        match self.next() {
            Some(Token::Int(n)) => Ok(Operand::Value(Value::Int(n))),
            Some(Token::Text(t)) => Ok(Operand::Value(Value::Text(t))),
            Some(Token::Word(w)) => {
                let field = match w.to_ascii_lowercase().as_str() {
                    "color" => Field::Color,
                    "x" => Field::X,
                    "y" => Field::Y,
                    "shapesize" => Field::Shapesize,
                    _ => return Err(FilterError(format!("ShapeType has no member `{w}`"))),
                };
                Ok(Operand::Field(field))
            }
            other => Err(FilterError(format!(
                "expected a member or a value, found {other:?}"
            ))),
        }
    }

    fn predicate(&mut self) -> Result<Expr, FilterError> {
        let left = self.operand()?;
        let negated = self.keyword("not");
        if self.keyword("between") {
            let low = self.operand()?;
            if !self.keyword("and") {
                return Err(FilterError("BETWEEN needs AND".into()));
            }
            let high = self.operand()?;
            let e = Expr::Between(left, low, high);
            return Ok(if negated { Expr::Not(Box::new(e)) } else { e });
        }
        if negated {
            return Err(FilterError("NOT here needs BETWEEN".into()));
        }
        let op = match self.next() {
            Some(Token::Op(op)) => op,
            other => {
                return Err(FilterError(format!(
                    "expected an operator, found {other:?}"
                )))
            }
        };
        let right = self.operand()?;
        Ok(Expr::Compare(left, op, right))
    }
}

/// SQL's LIKE: `%` any string, `_` any one character.
fn like(text: &[char], pattern: &[char]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some(('%', rest)) => (0..=text.len()).any(|i| like(&text[i..], rest)),
        Some(('_', rest)) => !text.is_empty() && like(&text[1..], rest),
        Some((c, rest)) => text.first() == Some(c) && like(&text[1..], rest),
    }
}

fn value(o: &Operand, s: &ShapeType) -> Value {
    match o {
        Operand::Value(v) => v.clone(),
        Operand::Field(Field::Color) => Value::Text(s.color.clone()),
        Operand::Field(Field::X) => Value::Int(i64::from(s.x)),
        Operand::Field(Field::Y) => Value::Int(i64::from(s.y)),
        Operand::Field(Field::Shapesize) => Value::Int(i64::from(s.shapesize)),
    }
}

fn compare(a: &Value, op: Op, b: &Value) -> bool {
    use std::cmp::Ordering;
    if op == Op::Like {
        return match (a, b) {
            (Value::Text(t), Value::Text(p)) => like(
                &t.chars().collect::<Vec<_>>(),
                &p.chars().collect::<Vec<_>>(),
            ),
            _ => false,
        };
    }
    let ord = match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Text(x), Value::Text(y)) => x.cmp(y),
        _ => return false,
    };
    match op {
        Op::Eq => ord == Ordering::Equal,
        Op::Ne => ord != Ordering::Equal,
        Op::Lt => ord == Ordering::Less,
        Op::Le => ord != Ordering::Greater,
        Op::Gt => ord == Ordering::Greater,
        Op::Ge => ord != Ordering::Less,
        Op::Like => false,
    }
}

fn eval(e: &Expr, s: &ShapeType) -> bool {
    match e {
        Expr::Compare(a, op, b) => compare(&value(a, s), *op, &value(b, s)),
        Expr::Between(v, low, high) => {
            let v = value(v, s);
            compare(&v, Op::Ge, &value(low, s)) && compare(&v, Op::Le, &value(high, s))
        }
        Expr::Not(e) => !eval(e, s),
        Expr::And(a, b) => eval(a, s) && eval(b, s),
        Expr::Or(a, b) => eval(a, s) || eval(b, s),
    }
}

/// Type checks: comparisons between a text and an integer are refused up front, as a
/// DDS implementation refuses to create such a content-filtered topic.
fn check(e: &Expr) -> Result<(), FilterError> {
    fn kind(o: &Operand) -> bool {
        matches!(
            o,
            Operand::Field(Field::Color) | Operand::Value(Value::Text(_))
        )
    }
    match e {
        Expr::Compare(a, op, b) => {
            if kind(a) != kind(b) {
                return Err(FilterError("a string is compared with a number".into()));
            }
            if *op == Op::Like && !kind(a) {
                return Err(FilterError("LIKE compares strings".into()));
            }
            Ok(())
        }
        Expr::Between(v, l, h) => {
            if kind(v) != kind(l) || kind(v) != kind(h) {
                return Err(FilterError("BETWEEN mixes strings and numbers".into()));
            }
            Ok(())
        }
        Expr::Not(e) => check(e),
        Expr::And(a, b) | Expr::Or(a, b) => {
            check(a)?;
            check(b)
        }
    }
}

impl Filter {
    /// Parses a filter expression.
    pub(crate) fn parse(text: &str) -> Result<Filter, FilterError> {
        let tokens = tokenize(text)?;
        if tokens.is_empty() {
            return Err(FilterError("empty expression".into()));
        }
        let mut p = Parser { tokens, at: 0 };
        let e = p.or()?;
        if let Some(t) = p.peek() {
            return Err(FilterError(format!(
                "unexpected {t:?} after the expression"
            )));
        }
        check(&e)?;
        Ok(Filter(Arc::new(e)))
    }

    /// `color = '<color>'`.
    pub(crate) fn color(color: &str) -> Filter {
        Filter(Arc::new(Expr::Compare(
            Operand::Field(Field::Color),
            Op::Eq,
            Operand::Value(Value::Text(color.to_string())),
        )))
    }

    /// True if `s` passes.
    pub(crate) fn matches(&self, s: &ShapeType) -> bool {
        eval(&self.0, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(color: &str, x: i32, y: i32, size: i32) -> ShapeType {
        ShapeType {
            color: color.into(),
            x,
            y,
            shapesize: size,
            additional_payload_size: Vec::new(),
        }
    }

    fn passes(expr: &str, s: &ShapeType) -> bool {
        Filter::parse(expr)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .matches(s)
    }

    #[test]
    fn the_suites_expressions() {
        assert!(passes("shapesize <= 20", &shape("BLUE", 0, 0, 20)));
        assert!(!passes("shapesize <= 20", &shape("BLUE", 0, 0, 21)));
        assert!(Filter::color("RED").matches(&shape("RED", 1, 2, 3)));
        assert!(!Filter::color("RED").matches(&shape("BLUE", 1, 2, 3)));
    }

    #[test]
    fn grammar() {
        let s = shape("GREEN", 100, 50, 30);
        assert!(passes("color = 'GREEN' AND x > 50", &s));
        assert!(passes("color <> 'RED' and (x < 10 or y >= 50)", &s));
        assert!(passes("NOT color = 'RED'", &s));
        assert!(passes("x BETWEEN 100 AND 200", &s));
        assert!(!passes("x NOT BETWEEN 100 AND 200", &s));
        assert!(passes("color LIKE 'GR%'", &s));
        assert!(passes("color like 'GR_EN'", &s));
        assert!(!passes("color LIKE 'GR_'", &s));
        assert!(passes("50 = y", &s));
        assert!(passes("shapesize != -1", &s));
        assert!(passes("color = 'it''s' OR x = 100", &s));
        assert!(!passes("color = 'it''s'", &s));
    }

    #[test]
    fn refused() {
        for bad in [
            "",
            "shapesize <=",
            "colour = 'RED'",
            "color = 3",
            "x LIKE 'a'",
            "color = %0",
            "(x = 1",
            "x = 1 y = 2",
            "color = 'RED",
        ] {
            assert!(Filter::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
