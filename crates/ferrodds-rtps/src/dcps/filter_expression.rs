//! DDS's SQL subset for content-filtered topics and query conditions (DDS 1.4, Annex B):
//! comparisons of a sample's members with literals, parameters (`%0` … `%99`) and other
//! members; `BETWEEN`, `LIKE`, `AND`, `OR`, `NOT` and parentheses. An expression is parsed
//! once against the topic's type — every member name resolved to its place in the sample,
//! every literal checked against the member it is compared with — and its parameters are
//! bound when the filter is made, so that matching a sample only walks values.

use std::cmp::Ordering;
use std::sync::Arc;

use ferrodds_cdr::dynamic::{DynamicType, DynamicValue, EnumType};

/// Why an expression or a parameter cannot make a filter: what, and where in the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// The text does not follow the grammar.
    #[error("at character {at}: expected {expected}, found {found}")]
    Syntax {
        /// Character offset in the expression.
        at: usize,
        /// What the grammar wanted there.
        expected: &'static str,
        /// What was there.
        found: String,
    },
    /// A member name the type does not have (or that names a struct, sequence or union).
    #[error("{path}: {why}")]
    Member {
        /// The dotted name.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// `%n` with fewer than `n + 1` parameters given.
    #[error("%{index}: only {given} parameters given")]
    MissingParameter {
        /// The parameter's number.
        index: usize,
        /// How many were given.
        given: usize,
    },
    /// More nesting (parentheses and NOTs) or more comparisons than a filter may hold: a
    /// peer's expression arrives over the network, and the parse, the evaluation and the
    /// drop of the tree all recurse as deep as it nests.
    #[error("at character {at}: more than {limit} {what}")]
    TooComplex {
        /// Character offset in the expression.
        at: usize,
        /// The limit.
        limit: usize,
        /// What there are too many of.
        what: &'static str,
    },
    /// A literal or parameter that cannot be compared with the member beside it.
    #[error("{what} cannot be compared with {member}")]
    Mismatch {
        /// The literal as written.
        what: String,
        /// The member's name.
        member: String,
    },
}

/// A comparison operator.
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

/// A member of the sample: where it is, and what kind of value it holds.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    /// Indexes through nested structs (base members first, as values hold them).
    path: Vec<usize>,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Number,
    Text,
    Bool,
    Enum(Arc<EnumType>),
}

/// A literal as the expression or a parameter writes it.
#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Int(i128),
    Float(f64),
    Text(String),
    Bool(bool),
    /// A bare name in the expression: an enumerator.
    Name(String),
    /// A parameter that is neither a number, a quoted text nor a boolean: an enumerator, or
    /// the text itself.
    Bare(String),
}

#[derive(Debug, Clone)]
enum Operand {
    Field(Field),
    Value(Value),
}

/// An operand as parsed, before a literal meets the member it is compared with.
#[derive(Debug, Clone)]
enum Term {
    Field(Field),
    Literal(Literal),
}

/// A comparable value: a literal resolved against the member it meets, or a member's.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(i128),
    Float(f64),
    Text(String),
    Bool(bool),
}

#[derive(Debug, Clone)]
enum Node {
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Compare(Operand, Op, Operand),
    Between(Field, Value, Value),
}

/// A filter expression with its parameters bound: what a content-filtered topic's reader
/// or a query condition keeps.
#[derive(Debug, Clone)]
pub struct FilterExpression {
    text: String,
    parameters: Vec<String>,
    root: Node,
}

impl FilterExpression {
    /// `text` over samples of `ty` (a struct), with `%n` standing for `parameters[n]`
    /// (literals as text: `5`, `2.5`, `'BLUE'`, `TRUE`, an enumerator's name).
    pub fn new(ty: &DynamicType, text: &str, parameters: &[&str]) -> Result<Self, FilterError> {
        let tokens = lex(text)?;
        let mut p = Parser {
            tokens,
            at: 0,
            ty,
            parameters,
            end: text.chars().count(),
            depth: 0,
            comparisons: 0,
        };
        let root = p.condition()?;
        if let Some(t) = p.tokens.get(p.at) {
            return Err(p.unexpected(t.at, "AND, OR or the end"));
        }
        Ok(FilterExpression {
            text: text.to_owned(),
            parameters: parameters.iter().map(|&p| p.to_owned()).collect(),
            root,
        })
    }

    /// The expression as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parameters as given (what `%n` stands for).
    pub fn parameters(&self) -> &[String] {
        &self.parameters
    }

    /// Whether `sample` (a value of the type the expression was made for) passes.
    pub fn matches(&self, sample: &DynamicValue) -> bool {
        eval(&self.root, sample)
    }
}

fn eval(node: &Node, sample: &DynamicValue) -> bool {
    match node {
        Node::And(a, b) => eval(a, sample) && eval(b, sample),
        Node::Or(a, b) => eval(a, sample) || eval(b, sample),
        Node::Not(a) => !eval(a, sample),
        Node::Compare(a, op, b) => {
            let (Some(a), Some(b)) = (operand(a, sample), operand(b, sample)) else {
                return false;
            };
            match op {
                Op::Like => matches!((&a, &b), (Value::Text(s), Value::Text(p)) if like(s, p)),
                op => compare(&a, &b).is_some_and(|o| holds(*op, o)),
            }
        }
        Node::Between(f, low, high) => field_value(f, sample).is_some_and(|v| {
            compare(&v, low).is_some_and(|o| o != Ordering::Less)
                && compare(&v, high).is_some_and(|o| o != Ordering::Greater)
        }),
    }
}

fn holds(op: Op, o: Ordering) -> bool {
    match op {
        Op::Eq => o == Ordering::Equal,
        Op::Ne => o != Ordering::Equal,
        Op::Lt => o == Ordering::Less,
        Op::Le => o != Ordering::Greater,
        Op::Gt => o == Ordering::Greater,
        Op::Ge => o != Ordering::Less,
        Op::Like => false,
    }
}

fn operand(o: &Operand, sample: &DynamicValue) -> Option<Value> {
    match o {
        Operand::Field(f) => field_value(f, sample),
        Operand::Value(v) => Some(v.clone()),
    }
}

/// The value of member `f` in `sample` (`None`: an absent optional member, which no
/// comparison keeps).
fn field_value(f: &Field, sample: &DynamicValue) -> Option<Value> {
    let mut v = sample;
    for &i in &f.path {
        match v {
            DynamicValue::Struct(members) => v = members.get(i)?.as_ref()?,
            _ => return None,
        }
    }
    Some(match v {
        DynamicValue::Bool(b) => Value::Bool(*b),
        DynamicValue::Int(i) => Value::Int(i128::from(*i)),
        DynamicValue::UInt(u) => Value::Int(i128::from(*u)),
        DynamicValue::Enum(e) => Value::Int(i128::from(*e)),
        DynamicValue::Float(x) => Value::Float(*x),
        DynamicValue::Float32(x) => Value::Float(f64::from(*x)),
        DynamicValue::Char(c) => Value::Text(c.to_string()),
        DynamicValue::String(s) => Value::Text(s.clone()),
        _ => return None,
    })
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Int(x), Value::Float(y)) => (*x as f64).partial_cmp(y),
        (Value::Float(x), Value::Int(y)) => x.partial_cmp(&(*y as f64)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Text(x), Value::Text(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// SQL's LIKE: `%` any run of characters, `_` any one.
fn like(s: &str, pattern: &str) -> bool {
    let s: Vec<char> = s.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    // Iterative with one backtrack point, linear in practice and never recursive.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if j < p.len() && (p[j] == '_' || p[j] == s[i]) {
            i += 1;
            j += 1;
        } else if j < p.len() && p[j] == '%' {
            star = Some((j, i));
            j += 1;
        } else if let Some((sj, si)) = star {
            j = sj + 1;
            i = si + 1;
            star = Some((sj, si + 1));
        } else {
            return false;
        }
    }
    p[j..].iter().all(|&c| c == '%')
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Int(i128),
    Float(f64),
    Text(String),
    Param(usize),
    Op(Op),
    Open,
    Close,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// Character offset.
    at: usize,
}

fn lex(text: &str) -> Result<Vec<Token>, FilterError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let syntax = |at: usize, expected: &'static str| FilterError::Syntax {
        at,
        expected,
        found: chars
            .get(at)
            .map_or("the end".to_owned(), |c| format!("'{c}'")),
    };
    while i < chars.len() {
        let c = chars[i];
        let at = i;
        let tok = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '(' => {
                i += 1;
                Tok::Open
            }
            ')' => {
                i += 1;
                Tok::Close
            }
            '=' => {
                i += 1;
                Tok::Op(Op::Eq)
            }
            '<' | '>' | '!' => {
                let next = chars.get(i + 1).copied();
                let (op, len) = match (c, next) {
                    ('<', Some('=')) => (Op::Le, 2),
                    ('<', Some('>')) => (Op::Ne, 2),
                    ('>', Some('=')) => (Op::Ge, 2),
                    ('!', Some('=')) => (Op::Ne, 2),
                    ('<', _) => (Op::Lt, 1),
                    ('>', _) => (Op::Gt, 1),
                    _ => return Err(syntax(i, "an operator")),
                };
                i += len;
                Tok::Op(op)
            }
            '\'' | '`' => {
                // 'text', with '' for a quote inside; DDS also allows `text'.
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(syntax(i, "the closing quote")),
                        Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                            s.push('\'');
                            i += 2;
                        }
                        Some('\'') => {
                            i += 1;
                            break;
                        }
                        Some(&c) => {
                            s.push(c);
                            i += 1;
                        }
                    }
                }
                Tok::Text(s)
            }
            '%' => {
                let start = i + 1;
                let mut end = start;
                while end < chars.len() && chars[end].is_ascii_digit() && end - start < 2 {
                    end += 1;
                }
                if end == start {
                    return Err(syntax(start, "a parameter number (%0 to %99)"));
                }
                i = end;
                let n: String = chars[start..end].iter().collect();
                Tok::Param(n.parse().map_err(|_| syntax(start, "a parameter number"))?)
            }
            c if c.is_ascii_digit()
                || ((c == '-' || c == '+')
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                let start = i;
                i += 1;
                let mut float = false;
                while i < chars.len() {
                    let d = chars[i];
                    if d.is_ascii_digit() {
                        i += 1;
                    } else if (d == '.' || d == 'e' || d == 'E') && !float {
                        float = true;
                        i += 1;
                        if d != '.' && matches!(chars.get(i), Some('-' | '+')) {
                            i += 1;
                        }
                    } else if float && (d == 'e' || d == 'E') {
                        i += 1;
                        if matches!(chars.get(i), Some('-' | '+')) {
                            i += 1;
                        }
                    } else {
                        break;
                    }
                }
                let s: String = chars[start..i].iter().collect();
                if float {
                    Tok::Float(s.parse().map_err(|_| syntax(start, "a number"))?)
                } else if let Some(hex) = s.strip_prefix("0x") {
                    Tok::Int(i128::from_str_radix(hex, 16).map_err(|_| syntax(start, "a number"))?)
                } else {
                    Tok::Int(s.parse().map_err(|_| syntax(start, "a number"))?)
                }
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_alphanumeric() || matches!(chars[i], '_' | '.' | ':'))
                {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                if name.eq_ignore_ascii_case("LIKE") {
                    Tok::Op(Op::Like)
                } else {
                    Tok::Name(name)
                }
            }
            _ => {
                return Err(syntax(
                    i,
                    "a member, a literal, an operator or a parenthesis",
                ))
            }
        };
        out.push(Token { tok, at });
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    ty: &'a DynamicType,
    parameters: &'a [&'a str],
    /// Characters in the text (where "the end" is).
    end: usize,
    /// Parentheses and NOTs open around what is being parsed.
    depth: usize,
    /// Comparisons parsed so far.
    comparisons: usize,
}

/// The most parentheses and NOTs one inside the other in a filter expression.
const MAX_DEPTH: usize = 64;

/// The most comparisons in a filter expression (AND and OR chains make a tree as deep as
/// they are long).
const MAX_COMPARISONS: usize = 1024;

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|t| &t.tok)
    }

    fn here(&self) -> usize {
        self.tokens.get(self.at).map_or(self.end, |t| t.at)
    }

    fn unexpected(&self, at: usize, expected: &'static str) -> FilterError {
        let found = self
            .tokens
            .iter()
            .find(|t| t.at == at)
            .map_or("the end".to_owned(), |t| describe(&t.tok));
        FilterError::Syntax {
            at,
            expected,
            found,
        }
    }

    fn peek_keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(n)) if n.eq_ignore_ascii_case(word))
    }

    fn keyword(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Name(n)) if n.eq_ignore_ascii_case(word)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn condition(&mut self) -> Result<Node, FilterError> {
        let mut left = self.conjunction()?;
        while self.keyword("OR") {
            left = Node::Or(Box::new(left), Box::new(self.conjunction()?));
        }
        Ok(left)
    }

    fn conjunction(&mut self) -> Result<Node, FilterError> {
        let mut left = self.negation()?;
        while self.keyword("AND") {
            left = Node::And(Box::new(left), Box::new(self.negation()?));
        }
        Ok(left)
    }

    fn negation(&mut self) -> Result<Node, FilterError> {
        let nests = self.peek() == Some(&Tok::Open) || self.peek_keyword("NOT");
        if nests {
            if self.depth == MAX_DEPTH {
                return Err(FilterError::TooComplex {
                    at: self.here(),
                    limit: MAX_DEPTH,
                    what: "parentheses and NOTs one inside the other",
                });
            }
            self.depth += 1;
        }
        let node = self.negation_inner();
        if nests {
            self.depth -= 1;
        }
        node
    }

    fn negation_inner(&mut self) -> Result<Node, FilterError> {
        if self.keyword("NOT") {
            return Ok(Node::Not(Box::new(self.negation()?)));
        }
        if self.peek() == Some(&Tok::Open) {
            self.at += 1;
            let inner = self.condition()?;
            if self.peek() != Some(&Tok::Close) {
                return Err(self.unexpected(self.here(), "')'"));
            }
            self.at += 1;
            return Ok(inner);
        }
        self.comparisons += 1;
        if self.comparisons > MAX_COMPARISONS {
            return Err(FilterError::TooComplex {
                at: self.here(),
                limit: MAX_COMPARISONS,
                what: "comparisons",
            });
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Node, FilterError> {
        let left = self.term()?;
        let negated = self.keyword("NOT");
        if self.keyword("BETWEEN") {
            let Term::Field(field) = left else {
                return Err(self.unexpected(self.here(), "a member before BETWEEN"));
            };
            let low = self.term()?;
            if !self.keyword("AND") {
                return Err(self.unexpected(self.here(), "AND"));
            }
            let high = self.term()?;
            let (low, high) = (value_for(&field, low)?, value_for(&field, high)?);
            let between = Node::Between(field, low, high);
            return Ok(if negated {
                Node::Not(Box::new(between))
            } else {
                between
            });
        }
        if negated {
            return Err(self.unexpected(self.here(), "BETWEEN"));
        }
        let op = match self.peek() {
            Some(Tok::Op(op)) => *op,
            _ => {
                return Err(self.unexpected(self.here(), "a comparison (=, <>, <, <=, >, >=, LIKE)"))
            }
        };
        self.at += 1;
        let right = self.term()?;
        let (left, right) = match (left, right) {
            (Term::Field(a), Term::Field(b)) => (Operand::Field(a), Operand::Field(b)),
            (Term::Field(f), l @ Term::Literal(_)) => {
                let v = value_for(&f, l)?;
                (Operand::Field(f), Operand::Value(v))
            }
            (l @ Term::Literal(_), Term::Field(f)) => {
                let v = value_for(&f, l)?;
                (Operand::Value(v), Operand::Field(f))
            }
            (Term::Literal(Literal::Name(n)), _) | (_, Term::Literal(Literal::Name(n))) => {
                return Err(FilterError::Member {
                    path: n,
                    why: "no such member".to_owned(),
                })
            }
            (Term::Literal(_), Term::Literal(_)) => {
                return Err(self.unexpected(self.here(), "a member on one side of the comparison"))
            }
        };
        if op == Op::Like {
            for o in [&left, &right] {
                if let Operand::Field(f) = o {
                    if !matches!(f.kind, Kind::Text) {
                        return Err(FilterError::Mismatch {
                            what: "LIKE".to_owned(),
                            member: f.name.clone(),
                        });
                    }
                }
            }
        }
        Ok(Node::Compare(left, op, right))
    }

    /// A member, a literal, or a parameter (as its literal).
    fn term(&mut self) -> Result<Term, FilterError> {
        let at = self.here();
        let literal = match self.peek().cloned() {
            Some(Tok::Name(n)) if n.eq_ignore_ascii_case("TRUE") => Literal::Bool(true),
            Some(Tok::Name(n)) if n.eq_ignore_ascii_case("FALSE") => Literal::Bool(false),
            Some(Tok::Name(n)) => match field(self.ty, &n) {
                Some(f) => {
                    self.at += 1;
                    return Ok(Term::Field(f?));
                }
                // Not a member: an enumerator, resolved against the member it meets.
                None => Literal::Name(n),
            },
            Some(Tok::Int(i)) => Literal::Int(i),
            Some(Tok::Float(x)) => Literal::Float(x),
            Some(Tok::Text(s)) => Literal::Text(s),
            Some(Tok::Param(i)) => {
                let text = self
                    .parameters
                    .get(i)
                    .ok_or(FilterError::MissingParameter {
                        index: i,
                        given: self.parameters.len(),
                    })?;
                parameter(text)
            }
            _ => return Err(self.unexpected(at, "a member, a literal or a parameter")),
        };
        self.at += 1;
        Ok(Term::Literal(literal))
    }
}

/// Member `path` (dotted) of struct `ty`: `None` when the first name is no member (it may
/// be an enumerator); an error when the path starts as a member but does not lead to one
/// that holds a number, a string, a character, a boolean or an enumeration.
fn field(ty: &DynamicType, path: &str) -> Option<Result<Field, FilterError>> {
    let err = |why: String| {
        Some(Err(FilterError::Member {
            path: path.to_owned(),
            why,
        }))
    };
    let mut indexes = Vec::new();
    let mut at = ty;
    for (depth, name) in path.split('.').enumerate() {
        let DynamicType::Struct(s) = at else {
            return err(format!("{} is not a struct", at.name()));
        };
        let members = s.all_members();
        let Some(i) = members.iter().position(|m| m.name == name) else {
            if depth == 0 {
                return None;
            }
            return err(format!("{} has no member {name}", s.name));
        };
        indexes.push(i);
        at = &members[i].ty;
    }
    let kind = match at {
        DynamicType::Bool => Kind::Bool,
        DynamicType::String { .. }
        | DynamicType::WString
        | DynamicType::Char
        | DynamicType::WChar => Kind::Text,
        DynamicType::Enum(e) => Kind::Enum(Arc::clone(e)),
        t if t.is_primitive() => Kind::Number,
        t => return err(format!("a {} cannot be compared", t.name())),
    };
    Some(Ok(Field {
        name: path.to_owned(),
        path: indexes,
        kind,
    }))
}

/// `term`, a literal compared with member `f`, as a value of the member's kind.
fn value_for(f: &Field, term: Term) -> Result<Value, FilterError> {
    let Term::Literal(literal) = term else {
        return Err(FilterError::Mismatch {
            what: "another member".to_owned(),
            member: f.name.clone(),
        });
    };
    let mismatch = |l: &Literal| FilterError::Mismatch {
        what: format!("{l:?}"),
        member: f.name.clone(),
    };
    Ok(match (&f.kind, literal) {
        (Kind::Number, Literal::Int(i)) => Value::Int(i),
        (Kind::Number, Literal::Float(x)) => Value::Float(x),
        (Kind::Text, Literal::Text(s)) => Value::Text(s),
        (Kind::Bool, Literal::Bool(b)) => Value::Bool(b),
        (Kind::Enum(_), Literal::Int(i)) => Value::Int(i),
        (Kind::Text, Literal::Bare(n)) => Value::Text(n),
        (Kind::Enum(e), Literal::Name(n) | Literal::Text(n) | Literal::Bare(n)) => {
            match e.enumerators.iter().find(|(name, _)| *name == n) {
                Some((_, v)) => Value::Int(i128::from(*v)),
                None => {
                    return Err(FilterError::Member {
                        path: n,
                        why: format!("not an enumerator of {} (nor a member)", e.name),
                    })
                }
            }
        }
        (_, Literal::Name(n)) => {
            return Err(FilterError::Member {
                path: n,
                why: "no such member".to_owned(),
            })
        }
        (_, l) => return Err(mismatch(&l)),
    })
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => n.clone(),
        Tok::Int(i) => i.to_string(),
        Tok::Float(x) => x.to_string(),
        Tok::Text(s) => format!("'{s}'"),
        Tok::Param(i) => format!("%{i}"),
        Tok::Op(op) => format!("{op:?}"),
        Tok::Open => "'('".to_owned(),
        Tok::Close => "')'".to_owned(),
    }
}

/// A parameter's text as a literal: a number, `'text'`, TRUE/FALSE, or else a name (an
/// enumerator) — or, failing those, the text itself as a string.
fn parameter(text: &str) -> Literal {
    let t = text.trim();
    if let Ok(tokens) = lex(t) {
        if let [Token { tok, .. }] = tokens.as_slice() {
            match tok {
                Tok::Int(i) => return Literal::Int(*i),
                Tok::Float(x) => return Literal::Float(*x),
                Tok::Text(s) => return Literal::Text(s.clone()),
                Tok::Name(n) if n.eq_ignore_ascii_case("TRUE") => return Literal::Bool(true),
                Tok::Name(n) if n.eq_ignore_ascii_case("FALSE") => return Literal::Bool(false),
                Tok::Name(n) => return Literal::Bare(n.clone()),
                _ => {}
            }
        }
    }
    Literal::Text(t.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodds_cdr::dynamic::{Member, StructType};
    use ferrodds_cdr::Extensibility;

    fn shape_type() -> DynamicType {
        let color = DynamicType::Enum(Arc::new(EnumType {
            name: "Tone".into(),
            bit_bound: 32,
            enumerators: vec![("LIGHT".into(), 0), ("DARK".into(), 1)],
        }));
        let inner = DynamicType::Struct(Arc::new(StructType {
            name: "Where".into(),
            extensibility: Extensibility::Final,
            base: None,
            members: vec![Member::new("z", 0, DynamicType::Float64)],
        }));
        DynamicType::Struct(Arc::new(StructType {
            name: "ShapeType".into(),
            extensibility: Extensibility::Appendable,
            base: None,
            members: vec![
                Member::new("color", 0, DynamicType::String { bound: None }),
                Member::new("x", 1, DynamicType::Int32),
                Member::new("y", 2, DynamicType::Int32),
                Member::new("tone", 3, color),
                Member::new("at", 4, inner),
                Member::new("big", 5, DynamicType::Bool),
            ],
        }))
    }

    fn shape(color: &str, x: i64, y: i64, tone: i32, z: f64, big: bool) -> DynamicValue {
        DynamicValue::Struct(vec![
            Some(DynamicValue::String(color.into())),
            Some(DynamicValue::Int(x)),
            Some(DynamicValue::Int(y)),
            Some(DynamicValue::Enum(tone)),
            Some(DynamicValue::Struct(vec![Some(DynamicValue::Float(z))])),
            Some(DynamicValue::Bool(big)),
        ])
    }

    fn keeps(expr: &str, params: &[&str], sample: &DynamicValue) -> bool {
        FilterExpression::new(&shape_type(), expr, params)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .matches(sample)
    }

    #[test]
    fn comparisons_logic_and_parameters_select_as_sql_does() {
        let s = shape("BLUE", 30, 200, 1, 2.5, true);
        assert!(keeps("x < 50 AND y >= 200", &[], &s));
        assert!(!keeps("x < 50 AND y > 200", &[], &s));
        assert!(keeps("x > 50 OR color = 'BLUE'", &[], &s));
        assert!(keeps("NOT (x > 50) AND NOT color <> 'BLUE'", &[], &s));
        assert!(keeps("x BETWEEN %0 AND %1", &["10", "30"], &s));
        assert!(!keeps("x NOT BETWEEN 10 AND 30", &[], &s));
        assert!(keeps("color = %0", &["'BLUE'"], &s));
        assert!(
            keeps("color = %0", &["BLUE"], &s),
            "a bare parameter is text"
        );
        assert!(keeps(
            "tone = DARK AND tone = %0 AND tone = 1",
            &["DARK"],
            &s
        ));
        assert!(keeps("at.z > 2 AND at.z <= 2.5e0", &[], &s));
        assert!(keeps("big = TRUE", &[], &s));
        assert!(keeps("x < y", &[], &s), "member against member");
        assert!(keeps("50 > x", &[], &s), "literal first");
        assert!(keeps("color LIKE 'B_U%'", &[], &s));
        assert!(!keeps("color LIKE 'B%X'", &[], &s));
        assert!(keeps("color like '%'", &[], &s));
        assert!(keeps("x = -30 OR x = +30", &[], &s));
    }

    #[test]
    fn errors_say_what_and_where() {
        let ty = shape_type();
        let err = |e: &str, p: &[&str]| FilterExpression::new(&ty, e, p).unwrap_err();
        assert!(matches!(err("x <", &[]), FilterError::Syntax { at: 3, .. }));
        assert!(matches!(
            err("x < 5 y", &[]),
            FilterError::Syntax { at: 6, .. }
        ));
        assert!(matches!(err("(x < 5", &[]), FilterError::Syntax { .. }));
        assert!(matches!(
            err("color = 'open", &[]),
            FilterError::Syntax { .. }
        ));
        assert!(matches!(err("width > 3", &[]), FilterError::Member { .. }));
        assert!(matches!(err("at.w > 3", &[]), FilterError::Member { .. }));
        assert!(matches!(err("at > 3", &[]), FilterError::Member { .. }));
        assert!(matches!(
            err("tone = PURPLE", &[]),
            FilterError::Member { .. }
        ));
        assert!(matches!(
            err("x = 'text'", &[]),
            FilterError::Mismatch { .. }
        ));
        assert!(matches!(
            err("x LIKE 'a%'", &[]),
            FilterError::Mismatch { .. }
        ));
        assert!(matches!(
            err("x = %1", &["1"]),
            FilterError::MissingParameter { index: 1, given: 1 }
        ));
        assert!(matches!(err("1 = 1", &[]), FilterError::Syntax { .. }));
        assert_eq!(
            err("x <", &[]).to_string(),
            "at character 3: expected a member, a literal or a parameter, found the end"
        );
    }

    /// A peer's expression (SEDP's content filter property, up to 64 KiB) nested or chained
    /// without end is refused, not parsed into a tree whose parse, evaluation or drop would
    /// overflow the stack; what a person writes still parses.
    #[test]
    fn nesting_and_length_are_bounded() {
        let ty = shape_type();
        let open = "(".repeat(30_000) + "x = 1" + &")".repeat(30_000);
        assert!(matches!(
            FilterExpression::new(&ty, &open, &[]),
            Err(FilterError::TooComplex { limit: 64, .. })
        ));
        let nots = "NOT ".repeat(15_000) + "x = 1";
        assert!(matches!(
            FilterExpression::new(&ty, &nots, &[]),
            Err(FilterError::TooComplex { limit: 64, .. })
        ));
        let chain = vec!["x = 1"; 6_000].join(" OR ");
        assert!(matches!(
            FilterExpression::new(&ty, &chain, &[]),
            Err(FilterError::TooComplex { limit: 1024, .. })
        ));
        let deep = "(".repeat(64) + "x = 1" + &")".repeat(64);
        assert!(keeps(&deep, &[], &shape("a", 1, 0, 0, 0.0, false)));
        let long = vec!["x = 1"; 1024].join(" OR ");
        assert!(keeps(&long, &[], &shape("a", 1, 0, 0, 0.0, false)));
    }

    #[test]
    fn like_never_backtracks_without_end() {
        let long = "a".repeat(10_000);
        assert!(!like(&long, "%a%a%a%a%b"));
        assert!(like(&long, "%a%a%a%a%"));
        assert!(like("", "%"));
        assert!(!like("", "_"));
    }
}
