//! Recursive descent over the preprocessed tokens into the [`crate::ast`], names resolved
//! (IDL 4.2 §7.5: the current scope, then each enclosing one) and constant expressions
//! evaluated as they are read — IDL declares everything before its use, so one pass does.

use crate::ast::*;
use crate::const_eval::{self, Value};
use crate::error::{Error, Location};
use crate::lexer::{Punct, Token, TokenKind};
use crate::source::{Pos, Sources};
use std::collections::HashMap;

/// Structs, unions, modules and sequences nested deeper than this are refused: the parser recurses
/// once per level, and a hostile file must not overflow the stack.
const MAX_NESTING: usize = 64;

/// What a name stands for.
#[derive(Debug, Clone)]
pub(crate) enum Symbol {
    Module,
    Struct,
    Union,
    Forward(ForwardKind),
    Enum,
    Bitmask,
    Typedef(TypeSpec, Vec<u32>),
    Const(ConstValue),
    Enumerator { ty: ScopedName, value: i64 },
}

impl Symbol {
    fn describe(&self) -> &'static str {
        match self {
            Symbol::Module => "a module",
            Symbol::Struct => "a struct",
            Symbol::Union => "a union",
            Symbol::Forward(_) => "a forward declaration",
            Symbol::Enum => "an enum",
            Symbol::Bitmask => "a bitmask",
            Symbol::Typedef(..) => "a typedef",
            Symbol::Const(..) => "a constant",
            Symbol::Enumerator { .. } => "an enumerator",
        }
    }

    fn is_type(&self) -> bool {
        matches!(
            self,
            Symbol::Struct
                | Symbol::Union
                | Symbol::Forward(_)
                | Symbol::Enum
                | Symbol::Bitmask
                | Symbol::Typedef(..)
        )
    }
}

/// An annotation as written: `@name` or `@name(params)`.
#[derive(Debug, Clone)]
struct Annotation {
    name: String,
    params: Vec<(Option<String>, AnnotationValue)>,
    pos: Pos,
}

#[derive(Debug, Clone)]
enum AnnotationValue {
    /// A name that is no constant: `FINAL`, `HASH`.
    Word(String),
    Value(ConstValue),
}

/// `#pragma keylist T a b`, applied once everything is parsed.
struct Keylist {
    ty: ScopedName,
    members: Vec<String>,
    pos: Pos,
}

pub(crate) struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    sources: &'a Sources,
    /// A `>>` of which one `>` closed a template and the other is still to be read.
    half_shr: bool,
    scope: Vec<String>,
    symbols: HashMap<ScopedName, (Symbol, Pos)>,
    keylists: Vec<Keylist>,
    depth: usize,
    /// Reading a bound inside `<...>` (outside parentheses): there `>>` closes two
    /// templates (`sequence<sequence<T, 2>>`) rather than shifting.
    in_template: bool,
}

/// Parses preprocessed tokens into the definitions of a specification.
pub(crate) fn parse(tokens: &[Token], sources: &Sources) -> Result<Vec<Definition>, Error> {
    let mut p = Parser {
        tokens,
        at: 0,
        sources,
        half_shr: false,
        scope: Vec::new(),
        symbols: HashMap::new(),
        keylists: Vec::new(),
        depth: 0,
        in_template: false,
    };
    let mut definitions = Vec::new();
    while p.peek().is_some() {
        p.definition(&mut definitions)?;
    }
    let keylists = std::mem::take(&mut p.keylists);
    for k in keylists {
        apply_keylist(&mut definitions, &k, sources)?;
    }
    Ok(definitions)
}

fn apply_keylist(defs: &mut [Definition], k: &Keylist, sources: &Sources) -> Result<(), Error> {
    fn find<'d>(defs: &'d mut [Definition], name: &ScopedName) -> Option<&'d mut Struct> {
        for d in defs {
            match d {
                Definition::Module(m) => {
                    if let Some(s) = find(&mut m.definitions, name) {
                        return Some(s);
                    }
                }
                Definition::Struct(s) if &s.name == name => return Some(s),
                _ => {}
            }
        }
        None
    }
    let Some(s) = find(defs, &k.ty) else {
        return Err(Error::WrongKind {
            location: sources.location(k.pos),
            name: k.ty.to_string(),
            expected: "a struct for `#pragma keylist`".into(),
            found: "something else".into(),
        });
    };
    for m in &k.members {
        match s.members.iter_mut().find(|x| &x.name == m) {
            Some(member) => member.key = true,
            None => {
                return Err(Error::Undeclared {
                    location: sources.location(k.pos),
                    name: format!("{}::{m}", k.ty),
                })
            }
        }
    }
    Ok(())
}

fn word(token: &Token) -> Option<&str> {
    match &token.kind {
        TokenKind::Ident {
            name,
            escaped: false,
        } => Some(name),
        _ => None,
    }
}

impl<'a> Parser<'a> {
    // ---- tokens

    fn peek(&self) -> Option<&'a Token> {
        self.tokens.get(self.at)
    }

    fn peek_kind(&self) -> Option<&'a TokenKind> {
        if self.half_shr {
            return Some(&TokenKind::Punct(Punct::Gt));
        }
        self.peek().map(|t| &t.kind)
    }

    fn pos(&self) -> Pos {
        match self.peek() {
            Some(t) => t.pos,
            // At the end: just after the last token.
            None => self.tokens.last().map_or(Pos::start(0), |t| Pos {
                column: t.pos.column.saturating_add(1),
                ..t.pos
            }),
        }
    }

    fn location(&self, pos: Pos) -> Location {
        self.sources.location(pos)
    }

    fn found(&self) -> String {
        if self.half_shr {
            return "`>`".into();
        }
        match self.peek() {
            Some(t) => t.kind.describe(),
            None => "the end of the input".into(),
        }
    }

    fn expected(&self, what: impl Into<String>) -> Error {
        Error::Syntax {
            location: self.location(self.pos()),
            expected: what.into(),
            found: self.found(),
        }
    }

    fn is_punct(&self, p: Punct) -> bool {
        self.peek_kind() == Some(&TokenKind::Punct(p))
    }

    fn eat_punct(&mut self, p: Punct) -> bool {
        if self.half_shr {
            if p == Punct::Gt {
                self.half_shr = false;
                self.at += 1;
                return true;
            }
            return false;
        }
        if self.is_punct(p) {
            self.at += 1;
            return true;
        }
        false
    }

    fn expect_punct(&mut self, p: Punct) -> Result<(), Error> {
        if self.eat_punct(p) {
            return Ok(());
        }
        Err(self.expected(format!("`{}`", p.text())))
    }

    /// A closing `>` of a template, which may be half of a `>>`.
    fn expect_close_angle(&mut self) -> Result<(), Error> {
        if self.eat_punct(Punct::Gt) {
            return Ok(());
        }
        if !self.half_shr && self.is_punct(Punct::Shr) {
            self.half_shr = true;
            return Ok(());
        }
        Err(self.expected("`>`"))
    }

    fn is_word(&self, w: &str) -> bool {
        !self.half_shr && self.peek().and_then(word) == Some(w)
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.at += 1;
            return true;
        }
        false
    }

    fn identifier(&mut self, what: &str) -> Result<(String, Pos), Error> {
        if !self.half_shr {
            if let Some(Token {
                kind: TokenKind::Ident { name, escaped },
                pos,
            }) = self.peek()
            {
                if *escaped || !is_keyword(name) {
                    self.at += 1;
                    return Ok((name.clone(), *pos));
                }
            }
        }
        Err(self.expected(what))
    }

    // ---- symbols

    fn scoped(&self, name: &str) -> ScopedName {
        let mut parts = self.scope.clone();
        parts.push(name.to_owned());
        ScopedName(parts)
    }

    fn declare(&mut self, name: ScopedName, symbol: Symbol, pos: Pos) -> Result<(), Error> {
        if let Some((existing, previous)) = self.symbols.get(&name) {
            let fine = matches!(
                (existing, &symbol),
                (Symbol::Module, Symbol::Module)
                    | (Symbol::Forward(_), Symbol::Forward(_))
                    | (Symbol::Forward(ForwardKind::Struct), Symbol::Struct)
                    | (Symbol::Forward(ForwardKind::Union), Symbol::Union)
            );
            if !fine {
                return Err(Error::Redeclared {
                    location: self.location(pos),
                    name: name.to_string(),
                    previous: self.location(*previous),
                });
            }
            // A forward declaration after the definition changes nothing.
            if matches!(symbol, Symbol::Forward(_)) && !matches!(existing, Symbol::Forward(_)) {
                return Ok(());
            }
        }
        self.symbols.insert(name, (symbol, pos));
        Ok(())
    }

    /// `a::b::C` or `::a::C` as written, resolved in the current scope.
    fn scoped_name(&mut self, what: &str) -> Result<(Vec<String>, bool, Pos), Error> {
        let pos = self.pos();
        let absolute = self.eat_punct(Punct::DoubleColon);
        let mut parts = vec![self.identifier(what)?.0];
        while self.eat_punct(Punct::DoubleColon) {
            parts.push(self.identifier("a name after `::`")?.0);
        }
        Ok((parts, absolute, pos))
    }

    fn lookup(&self, parts: &[String], absolute: bool) -> Option<(ScopedName, &Symbol)> {
        let depths: Vec<usize> = if absolute {
            vec![0]
        } else {
            (0..=self.scope.len()).rev().collect()
        };
        for depth in depths {
            let mut full = self.scope[..depth].to_vec();
            full.extend(parts.iter().cloned());
            let name = ScopedName(full);
            if let Some((symbol, _)) = self.symbols.get(&name) {
                return Some((name, symbol));
            }
        }
        None
    }

    fn resolve(
        &self,
        parts: &[String],
        absolute: bool,
        pos: Pos,
    ) -> Result<(ScopedName, Symbol), Error> {
        match self.lookup(parts, absolute) {
            Some((name, symbol)) => Ok((name, symbol.clone())),
            None => Err(Error::Undeclared {
                location: self.location(pos),
                name: format!("{}{}", if absolute { "::" } else { "" }, parts.join("::")),
            }),
        }
    }

    /// What a type name finally is, through typedefs.
    pub(crate) fn resolve_alias(&self, ty: &TypeSpec) -> TypeSpec {
        let mut ty = ty.clone();
        for _ in 0..MAX_NESTING {
            let TypeSpec::Named(name) = &ty else {
                return ty;
            };
            match self.symbols.get(name) {
                Some((Symbol::Typedef(inner, dims), _)) if dims.is_empty() => ty = inner.clone(),
                _ => return ty,
            }
        }
        ty
    }

    // ---- definitions

    fn definition(&mut self, out: &mut Vec<Definition>) -> Result<(), Error> {
        if let Some(Token {
            kind: TokenKind::Directive(text),
            pos,
        }) = self.peek()
        {
            self.at += 1;
            return self.keylist(text, *pos);
        }
        let annotations = self.annotations()?;
        if annotations.last().is_some_and(|a| a.name == "annotation") {
            return self.expect_punct(Punct::Semicolon);
        }
        let pos = self.pos();
        let file = pos.file as usize;
        let location = self.location(pos);
        if self.eat_word("module") {
            let (name, name_pos) = self.identifier("a module name")?;
            let scoped = self.scoped(&name);
            self.declare(scoped.clone(), Symbol::Module, name_pos)?;
            self.expect_punct(Punct::LBrace)?;
            self.enter()?;
            self.scope.push(name);
            let mut definitions = Vec::new();
            while !self.is_punct(Punct::RBrace) {
                if self.peek().is_none() {
                    return Err(self.expected("a definition or `}`"));
                }
                self.definition(&mut definitions)?;
            }
            self.scope.pop();
            self.depth -= 1;
            self.expect_punct(Punct::RBrace)?;
            out.push(Definition::Module(Module {
                name: scoped,
                definitions,
                location,
                file,
            }));
        } else if self.eat_word("struct") {
            let d = self.struct_def(&annotations, location, file)?;
            out.push(d);
        } else if self.eat_word("union") {
            let d = self.union_def(&annotations, location, file)?;
            out.push(d);
        } else if self.eat_word("enum") {
            let d = self.enum_def(&annotations, location, file)?;
            out.push(d);
        } else if self.eat_word("bitmask") {
            let d = self.bitmask_def(&annotations, location, file)?;
            out.push(d);
        } else if self.eat_word("typedef") {
            self.typedef(location, file, out)?;
        } else if self.eat_word("const") {
            let d = self.const_def(location, file)?;
            out.push(d);
        } else if let Some(w) = self
            .peek()
            .and_then(word)
            .filter(|w| UNSUPPORTED.contains(w))
        {
            return Err(Error::Unsupported {
                location,
                what: format!("`{w}`"),
            });
        } else {
            return Err(self.expected("a definition (`module`, `struct`, `union`, `enum`, `bitmask`, `typedef` or `const`)"));
        }
        self.expect_punct(Punct::Semicolon)
    }

    fn enter(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Error::Unsupported {
                location: self.location(self.pos()),
                what: format!("nesting deeper than {MAX_NESTING} levels"),
            });
        }
        Ok(())
    }

    fn keylist(&mut self, text: &str, pos: Pos) -> Result<(), Error> {
        let words: Vec<&str> = text.split_whitespace().skip(2).collect();
        let Some((ty, members)) = words.split_first() else {
            return Err(Error::Preprocessor {
                location: self.location(pos),
                message: "expected a type name after `#pragma keylist`".into(),
            });
        };
        let absolute = ty.starts_with("::");
        let parts: Vec<String> = ty
            .trim_start_matches("::")
            .split("::")
            .map(str::to_owned)
            .collect();
        let (name, symbol) = self.resolve(&parts, absolute, pos)?;
        if !matches!(symbol, Symbol::Struct) {
            return Err(Error::WrongKind {
                location: self.location(pos),
                name: name.to_string(),
                expected: "a struct".into(),
                found: symbol.describe().into(),
            });
        }
        self.keylists.push(Keylist {
            ty: name,
            members: members.iter().map(|m| (*m).to_owned()).collect(),
            pos,
        });
        Ok(())
    }

    fn struct_def(
        &mut self,
        annotations: &[Annotation],
        location: Location,
        file: usize,
    ) -> Result<Definition, Error> {
        let (name, name_pos) = self.identifier("a struct name")?;
        let scoped = self.scoped(&name);
        if self.is_punct(Punct::Semicolon) {
            self.declare(
                scoped.clone(),
                Symbol::Forward(ForwardKind::Struct),
                name_pos,
            )?;
            return Ok(Definition::Forward(Forward {
                name: scoped,
                kind: ForwardKind::Struct,
                location,
                file,
            }));
        }
        let base = if self.eat_punct(Punct::Colon) {
            let (parts, absolute, pos) = self.scoped_name("the base struct's name")?;
            let (base_name, symbol) = self.resolve(&parts, absolute, pos)?;
            let resolved = match symbol {
                Symbol::Struct => base_name,
                Symbol::Typedef(..) => {
                    match self.resolve_alias(&TypeSpec::Named(base_name.clone())) {
                        TypeSpec::Named(n)
                            if matches!(self.symbols.get(&n), Some((Symbol::Struct, _))) =>
                        {
                            n
                        }
                        _ => {
                            return Err(self.wrong_kind(
                                pos,
                                &base_name,
                                "a struct",
                                "a typedef of something else",
                            ))
                        }
                    }
                }
                other => {
                    return Err(self.wrong_kind(
                        pos,
                        &base_name,
                        "a struct (defined, not only declared)",
                        other.describe(),
                    ))
                }
            };
            Some(resolved)
        } else {
            None
        };
        // Declared before its members so that `sequence<Self>` resolves.
        self.declare(
            scoped.clone(),
            Symbol::Forward(ForwardKind::Struct),
            name_pos,
        )?;
        self.expect_punct(Punct::LBrace)?;
        self.enter()?;
        let mut members = Vec::new();
        while !self.eat_punct(Punct::RBrace) {
            if self.peek().is_none() {
                return Err(self.expected("a member or `}`"));
            }
            let member_annotations = self.annotations()?;
            let ty = self.type_spec()?;
            loop {
                let (member_name, pos, dimensions) = self.declarator("a member name")?;
                if members.iter().any(|m: &Member| m.name == member_name) {
                    return Err(Error::Invalid {
                        location: self.location(pos),
                        message: format!("`{name}` has two members named `{member_name}`"),
                    });
                }
                let member = self.member(
                    member_name,
                    ty.clone(),
                    dimensions,
                    pos,
                    &member_annotations,
                )?;
                members.push(member);
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
            self.expect_punct(Punct::Semicolon)?;
        }
        self.depth -= 1;
        self.symbols
            .insert(scoped.clone(), (Symbol::Struct, name_pos));
        let mut s = Struct {
            name: scoped,
            base,
            members,
            extensibility: None,
            autoid: AutoId::Sequential,
            nested: false,
            topic: false,
            location,
            file,
        };
        for a in annotations {
            match a.name.as_str() {
                "final" | "appendable" | "mutable" | "extensibility" => {
                    s.extensibility = Some(self.extensibility(a)?)
                }
                "autoid" => s.autoid = self.autoid(a)?,
                "nested" => s.nested = self.flag(a)?,
                "topic" => s.topic = true,
                _ => self.type_annotation_ignored(a, "struct")?,
            }
        }
        Ok(Definition::Struct(s))
    }

    fn member(
        &mut self,
        name: String,
        ty: TypeSpec,
        dimensions: Vec<u32>,
        pos: Pos,
        annotations: &[Annotation],
    ) -> Result<Member, Error> {
        let mut m = Member {
            name,
            ty,
            dimensions,
            key: false,
            id: None,
            hash_id: None,
            optional: false,
            must_understand: false,
            default: None,
            location: self.location(pos),
        };
        for a in annotations {
            match a.name.as_str() {
                "key" => m.key = self.flag(a)?,
                "optional" => m.optional = self.flag(a)?,
                "must_understand" => m.must_understand = self.flag(a)?,
                "id" => {
                    let v = self.integer_param(a, 0, 0x0fff_ffff)?;
                    m.id = Some(v as u32);
                }
                "hashid" => {
                    m.hash_id = Some(match a.params.first() {
                        None => m.name.clone(),
                        Some((_, AnnotationValue::Value(ConstValue::String(s)))) => s.clone(),
                        Some(_) => return Err(self.annotation_error(a, "expects a string")),
                    })
                }
                "default" => {
                    m.default = match a.params.first() {
                        Some((_, AnnotationValue::Value(v))) => Some(v.clone()),
                        _ => return Err(self.annotation_error(a, "expects a constant value")),
                    }
                }
                "final" | "appendable" | "mutable" | "extensibility" | "autoid" | "nested"
                | "topic" | "bit_bound" | "position" | "value" => {
                    return Err(self.annotation_error(a, "applies to a type, not a member"))
                }
                // Informational annotations (@unit, @range, @min, @max, @external,
                // @verbatim, vendors' own) change nothing in the types generated.
                _ => {}
            }
        }
        if m.key && m.optional {
            return Err(Error::Invalid {
                location: m.location,
                message: format!("key member `{}` cannot be @optional", m.name),
            });
        }
        Ok(m)
    }

    fn union_def(
        &mut self,
        annotations: &[Annotation],
        location: Location,
        file: usize,
    ) -> Result<Definition, Error> {
        let (name, name_pos) = self.identifier("a union name")?;
        let scoped = self.scoped(&name);
        if self.is_punct(Punct::Semicolon) {
            self.declare(
                scoped.clone(),
                Symbol::Forward(ForwardKind::Union),
                name_pos,
            )?;
            return Ok(Definition::Forward(Forward {
                name: scoped,
                kind: ForwardKind::Union,
                location,
                file,
            }));
        }
        if !self.eat_word("switch") {
            return Err(self.expected("`switch`"));
        }
        self.expect_punct(Punct::LParen)?;
        let disc_annotations = self.annotations()?;
        let disc_pos = self.pos();
        let discriminator = self.type_spec()?;
        let disc_kind = self.discriminator_kind(&discriminator, disc_pos)?;
        self.expect_punct(Punct::RParen)?;
        self.declare(
            scoped.clone(),
            Symbol::Forward(ForwardKind::Union),
            name_pos,
        )?;
        self.expect_punct(Punct::LBrace)?;
        self.enter()?;
        let mut cases: Vec<UnionCase> = Vec::new();
        let mut seen: HashMap<i128, Pos> = HashMap::new();
        let mut default_seen = false;
        while !self.eat_punct(Punct::RBrace) {
            let mut labels = Vec::new();
            let mut default = false;
            loop {
                let label_pos = self.pos();
                if self.eat_word("case") {
                    let value = self.const_expr()?;
                    let label = self.convert_label(value, &disc_kind, label_pos)?;
                    let key = label.as_integer().unwrap_or_default();
                    if seen.insert(key, label_pos).is_some() {
                        return Err(Error::Invalid {
                            location: self.location(label_pos),
                            message: format!("`{name}` has this case label twice"),
                        });
                    }
                    labels.push(label);
                } else if self.eat_word("default") {
                    if default_seen {
                        return Err(Error::Invalid {
                            location: self.location(label_pos),
                            message: format!("`{name}` has two `default` labels"),
                        });
                    }
                    default_seen = true;
                    default = true;
                } else {
                    break;
                }
                self.expect_punct(Punct::Colon)?;
            }
            if labels.is_empty() && !default {
                return Err(self.expected("`case`, `default` or `}`"));
            }
            let member_annotations = self.annotations()?;
            let ty = self.type_spec()?;
            let (member_name, pos, dimensions) = self.declarator("a branch's member name")?;
            if cases.iter().any(|c| c.member.name == member_name) {
                return Err(Error::Invalid {
                    location: self.location(pos),
                    message: format!("`{name}` has two branches named `{member_name}`"),
                });
            }
            let member = self.member(member_name, ty, dimensions, pos, &member_annotations)?;
            // XTypes 7.2.2.4.4.4.8: a union's branches are neither keys nor optional.
            if member.optional || member.key {
                return Err(Error::Invalid {
                    location: member.location,
                    message: format!("union branch `{}` cannot be @optional or @key", member.name),
                });
            }
            self.expect_punct(Punct::Semicolon)?;
            cases.push(UnionCase {
                labels,
                default,
                member,
            });
        }
        self.depth -= 1;
        if cases.is_empty() {
            return Err(Error::Invalid {
                location,
                message: format!("union `{name}` has no branch"),
            });
        }
        self.symbols
            .insert(scoped.clone(), (Symbol::Union, name_pos));
        let mut u = Union {
            name: scoped,
            discriminator,
            discriminator_key: disc_annotations.iter().any(|a| a.name == "key"),
            cases,
            extensibility: None,
            location,
            file,
        };
        for a in annotations {
            match a.name.as_str() {
                "final" | "appendable" | "mutable" | "extensibility" => {
                    u.extensibility = Some(self.extensibility(a)?)
                }
                _ => self.type_annotation_ignored(a, "union")?,
            }
        }
        Ok(Definition::Union(u))
    }

    fn discriminator_kind(&self, ty: &TypeSpec, pos: Pos) -> Result<DiscriminatorKind, Error> {
        match self.resolve_alias(ty) {
            TypeSpec::Primitive(Primitive::Boolean) => Ok(DiscriminatorKind::Boolean),
            TypeSpec::Primitive(Primitive::Char | Primitive::WChar) => Ok(DiscriminatorKind::Char),
            TypeSpec::Primitive(p) if p.integer_range().is_some() => Ok(DiscriminatorKind::Integer(p)),
            TypeSpec::Named(n) if matches!(self.symbols.get(&n), Some((Symbol::Enum, _))) => Ok(DiscriminatorKind::Enum(n)),
            _ => Err(Error::Invalid {
                location: self.location(pos),
                message: "a union's discriminator is an integer, char, wchar, boolean, octet or enum type".into(),
            }),
        }
    }

    fn convert_label(
        &self,
        value: Value,
        kind: &DiscriminatorKind,
        pos: Pos,
    ) -> Result<ConstValue, Error> {
        let what = match kind {
            DiscriminatorKind::Integer(p) => TypeSpec::Primitive(*p),
            DiscriminatorKind::Boolean => TypeSpec::Primitive(Primitive::Boolean),
            DiscriminatorKind::Char => TypeSpec::Primitive(Primitive::Char),
            DiscriminatorKind::Enum(n) => TypeSpec::Named(n.clone()),
        };
        self.convert(value, &what, pos)
    }

    fn enum_def(
        &mut self,
        annotations: &[Annotation],
        location: Location,
        file: usize,
    ) -> Result<Definition, Error> {
        let (name, name_pos) = self.identifier("an enum name")?;
        let scoped = self.scoped(&name);
        let mut bit_bound = None;
        for a in annotations {
            match a.name.as_str() {
                "bit_bound" => bit_bound = Some(self.integer_param(a, 1, 32)? as u32),
                _ => self.type_annotation_ignored(a, "enum")?,
            }
        }
        let bits = bit_bound.unwrap_or(32);
        // As the derive and Cyclone DDS read them: narrower enums are unsigned.
        let (min, max) = if bits >= 32 {
            (i128::from(i32::MIN), i128::from(u32::MAX))
        } else {
            (0, (1i128 << bits) - 1)
        };
        self.declare(scoped.clone(), Symbol::Enum, name_pos)?;
        self.expect_punct(Punct::LBrace)?;
        let mut enumerators: Vec<Enumerator> = Vec::new();
        let mut next: i128 = 0;
        loop {
            let annotations = self.annotations()?;
            let (e_name, pos) = self.identifier("an enumerator")?;
            let mut value = next;
            let mut default_literal = false;
            for a in &annotations {
                match a.name.as_str() {
                    "value" => value = self.integer_param(a, min, max)?,
                    "default_literal" => default_literal = true,
                    _ => {}
                }
            }
            if value < min || value > max {
                return Err(Error::Invalid {
                    location: self.location(pos),
                    message: format!(
                        "enumerator `{e_name}` = {value} does not fit @bit_bound({bits})"
                    ),
                });
            }
            if let Some(other) = enumerators
                .iter()
                .find(|e| i128::from(e.value) == value || e.name == e_name)
            {
                return Err(Error::Invalid {
                    location: self.location(pos),
                    message: format!(
                        "enumerator `{e_name}` = {value} repeats `{}` = {}",
                        other.name, other.value
                    ),
                });
            }
            // In range of i32..u32 by the check above.
            let value64 = value as i64;
            let ty = scoped.clone();
            // Enumerators are named in the enum's enclosing scope (IDL 4.2 §7.4.1.4.4.4.4)
            // and, as IDL 4 also allows, through the enum.
            self.declare(
                self.scoped(&e_name),
                Symbol::Enumerator {
                    ty: ty.clone(),
                    value: value64,
                },
                pos,
            )?;
            let mut through = scoped.0.clone();
            through.push(e_name.clone());
            self.symbols.insert(
                ScopedName(through),
                (Symbol::Enumerator { ty, value: value64 }, pos),
            );
            enumerators.push(Enumerator {
                name: e_name,
                value: value64,
                default_literal,
            });
            next = value + 1;
            if !self.eat_punct(Punct::Comma) {
                self.expect_punct(Punct::RBrace)?;
                break;
            }
            if self.eat_punct(Punct::RBrace) {
                break;
            }
        }
        Ok(Definition::Enum(Enum {
            name: scoped,
            bit_bound,
            enumerators,
            location,
            file,
        }))
    }

    fn bitmask_def(
        &mut self,
        annotations: &[Annotation],
        location: Location,
        file: usize,
    ) -> Result<Definition, Error> {
        let (name, name_pos) = self.identifier("a bitmask name")?;
        let scoped = self.scoped(&name);
        let mut bit_bound = 32;
        for a in annotations {
            match a.name.as_str() {
                "bit_bound" => bit_bound = self.integer_param(a, 1, 64)? as u32,
                _ => self.type_annotation_ignored(a, "bitmask")?,
            }
        }
        self.declare(scoped.clone(), Symbol::Bitmask, name_pos)?;
        self.expect_punct(Punct::LBrace)?;
        let mut flags: Vec<Flag> = Vec::new();
        let mut next: u32 = 0;
        loop {
            let annotations = self.annotations()?;
            let (f_name, pos) = self.identifier("a flag name")?;
            let mut position = next;
            for a in &annotations {
                if a.name == "position" {
                    position = self.integer_param(a, 0, 63)? as u32;
                }
            }
            if position >= bit_bound {
                return Err(Error::Invalid {
                    location: self.location(pos),
                    message: format!("flag `{f_name}` at position {position} does not fit @bit_bound({bit_bound})"),
                });
            }
            if let Some(other) = flags
                .iter()
                .find(|f| f.position == position || f.name == f_name)
            {
                return Err(Error::Invalid {
                    location: self.location(pos),
                    message: format!(
                        "flag `{f_name}` at {position} repeats `{}` at {}",
                        other.name, other.position
                    ),
                });
            }
            flags.push(Flag {
                name: f_name,
                position,
            });
            next = position + 1;
            if !self.eat_punct(Punct::Comma) {
                self.expect_punct(Punct::RBrace)?;
                break;
            }
            if self.eat_punct(Punct::RBrace) {
                break;
            }
        }
        Ok(Definition::Bitmask(Bitmask {
            name: scoped,
            bit_bound,
            flags,
            location,
            file,
        }))
    }

    fn typedef(
        &mut self,
        location: Location,
        file: usize,
        out: &mut Vec<Definition>,
    ) -> Result<(), Error> {
        if self.is_word("struct") || self.is_word("union") || self.is_word("enum") {
            return Err(Error::Unsupported {
                location,
                what: "a type defined inside `typedef` (define it first, then name it)".into(),
            });
        }
        let ty = self.type_spec()?;
        loop {
            let (name, pos, dimensions) = self.declarator("a typedef name")?;
            let scoped = self.scoped(&name);
            self.declare(
                scoped.clone(),
                Symbol::Typedef(ty.clone(), dimensions.clone()),
                pos,
            )?;
            out.push(Definition::Typedef(Typedef {
                name: scoped,
                ty: ty.clone(),
                dimensions,
                location: location.clone(),
                file,
            }));
            if !self.eat_punct(Punct::Comma) {
                return Ok(());
            }
        }
    }

    fn const_def(&mut self, location: Location, file: usize) -> Result<Definition, Error> {
        let ty_pos = self.pos();
        let ty = self.type_spec()?;
        let resolved = self.resolve_alias(&ty);
        let ok = match &resolved {
            TypeSpec::Primitive(_) | TypeSpec::String(_) | TypeSpec::WString(_) => true,
            TypeSpec::Named(n) => matches!(self.symbols.get(n), Some((Symbol::Enum, _))),
            TypeSpec::Sequence(..) => false,
        };
        if !ok {
            return Err(Error::Invalid {
                location: self.location(ty_pos),
                message: "a constant's type is a primitive, string or enum type".into(),
            });
        }
        let (name, pos) = self.identifier("the constant's name")?;
        self.expect_punct(Punct::Equals)?;
        let value_pos = self.pos();
        let value = self.const_expr()?;
        let value = self.convert(value, &ty, value_pos)?;
        let scoped = self.scoped(&name);
        self.declare(scoped.clone(), Symbol::Const(value.clone()), pos)?;
        Ok(Definition::Const(Const {
            name: scoped,
            ty,
            value,
            location,
            file,
        }))
    }

    // ---- types

    fn declarator(&mut self, what: &str) -> Result<(String, Pos, Vec<u32>), Error> {
        let (name, pos) = self.identifier(what)?;
        let mut dims = Vec::new();
        while self.eat_punct(Punct::LBracket) {
            dims.push(self.positive_bound("an array dimension")?);
            self.expect_punct(Punct::RBracket)?;
        }
        Ok((name, pos, dims))
    }

    fn positive_bound(&mut self, what: &str) -> Result<u32, Error> {
        let pos = self.pos();
        let v = self.const_expr()?;
        match v {
            Value::Integer(n) if n > 0 && n <= i128::from(u32::MAX) => Ok(n as u32),
            _ => Err(Error::Constant {
                location: self.location(pos),
                message: format!("{what} must be a positive integer below 2^32"),
            }),
        }
    }

    fn template_bound(&mut self, what: &str) -> Result<u32, Error> {
        let outer = std::mem::replace(&mut self.in_template, true);
        let b = self.positive_bound(what);
        self.in_template = outer;
        b
    }

    pub(crate) fn type_spec(&mut self) -> Result<TypeSpec, Error> {
        let pos = self.pos();
        let unsupported = |p: &Self, what: &str| Error::Unsupported {
            location: p.location(pos),
            what: what.into(),
        };
        let prim = |p: Primitive| Ok(TypeSpec::Primitive(p));
        let Some(w) = (if self.half_shr {
            None
        } else {
            self.peek().and_then(word)
        }) else {
            return self.named_type();
        };
        let w = w.to_owned();
        let simple = match w.as_str() {
            "boolean" => Some(Primitive::Boolean),
            "octet" => Some(Primitive::Octet),
            "char" => Some(Primitive::Char),
            "wchar" => Some(Primitive::WChar),
            "int8" => Some(Primitive::Int8),
            "uint8" => Some(Primitive::UInt8),
            "int16" | "short" => Some(Primitive::Int16),
            "uint16" => Some(Primitive::UInt16),
            "int32" => Some(Primitive::Int32),
            "uint32" => Some(Primitive::UInt32),
            "int64" => Some(Primitive::Int64),
            "uint64" => Some(Primitive::UInt64),
            "float" => Some(Primitive::Float),
            "double" => Some(Primitive::Double),
            _ => None,
        };
        if let Some(p) = simple {
            self.at += 1;
            return prim(p);
        }
        match w.as_str() {
            "long" => {
                self.at += 1;
                if self.eat_word("long") {
                    prim(Primitive::Int64)
                } else if self.is_word("double") {
                    Err(unsupported(self, "`long double`"))
                } else {
                    prim(Primitive::Int32)
                }
            }
            "unsigned" => {
                self.at += 1;
                if self.eat_word("short") {
                    prim(Primitive::UInt16)
                } else if self.eat_word("long") {
                    if self.eat_word("long") {
                        prim(Primitive::UInt64)
                    } else {
                        prim(Primitive::UInt32)
                    }
                } else {
                    Err(self.expected("`short` or `long` after `unsigned`"))
                }
            }
            "string" | "wstring" => {
                self.at += 1;
                let bound = if self.eat_punct(Punct::Lt) {
                    let b = self.template_bound("a string's bound")?;
                    self.expect_close_angle()?;
                    Some(b)
                } else {
                    None
                };
                Ok(if w == "string" {
                    TypeSpec::String(bound)
                } else {
                    TypeSpec::WString(bound)
                })
            }
            "sequence" => {
                self.at += 1;
                self.expect_punct(Punct::Lt)?;
                // Sequences of sequences recurse here (and in every generator) as deep as
                // they nest.
                self.enter()?;
                let element = self.type_spec();
                self.depth -= 1;
                let element = element?;
                let bound = if self.eat_punct(Punct::Comma) {
                    Some(self.template_bound("a sequence's bound")?)
                } else {
                    None
                };
                self.expect_close_angle()?;
                Ok(TypeSpec::Sequence(Box::new(element), bound))
            }
            "map" => Err(unsupported(self, "`map`")),
            "fixed" => Err(unsupported(self, "`fixed`")),
            "any" | "Object" | "ValueBase" => Err(unsupported(self, &format!("`{w}`"))),
            _ => self.named_type(),
        }
    }

    fn named_type(&mut self) -> Result<TypeSpec, Error> {
        let (parts, absolute, pos) = self.scoped_name("a type")?;
        let (name, symbol) = self.resolve(&parts, absolute, pos)?;
        if !symbol.is_type() {
            return Err(self.wrong_kind(pos, &name, "a type", symbol.describe()));
        }
        Ok(TypeSpec::Named(name))
    }

    fn wrong_kind(&self, pos: Pos, name: &ScopedName, expected: &str, found: &str) -> Error {
        Error::WrongKind {
            location: self.location(pos),
            name: name.to_string(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    // ---- annotations

    fn annotations(&mut self) -> Result<Vec<Annotation>, Error> {
        let mut out = Vec::new();
        while self.is_punct(Punct::At) {
            let pos = self.pos();
            self.at += 1;
            // `@annotation` declarations define annotations of their own: they change
            // nothing in the types, so they are skipped.
            let (name, _) = match self.peek() {
                Some(Token {
                    kind: TokenKind::Ident { name, .. },
                    pos,
                }) => {
                    self.at += 1;
                    (name.clone(), *pos)
                }
                _ => return Err(self.expected("an annotation name after `@`")),
            };
            let mut params = Vec::new();
            if name == "annotation" {
                // `@annotation Name { ... };` declares an annotation: what it declares
                // changes no type, so it is skipped (and `definition` reads the `;`).
                self.identifier("the annotation's name")?;
                if !self.is_punct(Punct::LBrace) {
                    return Err(self.expected("`{`"));
                }
                self.skip_balanced(Punct::LBrace, Punct::RBrace, "the annotation's declaration")?;
                out.push(Annotation { name, params, pos });
                return Ok(out);
            }
            if KNOWN_ANNOTATIONS.contains(&name.as_str()) {
                // `@key`, `@key()` and `@key(TRUE)` alike.
                if self.eat_punct(Punct::LParen) && !self.eat_punct(Punct::RParen) {
                    loop {
                        params.push(self.annotation_param()?);
                        if !self.eat_punct(Punct::Comma) {
                            break;
                        }
                    }
                    self.expect_punct(Punct::RParen)?;
                }
            } else if self.is_punct(Punct::LParen) {
                self.skip_balanced(Punct::LParen, Punct::RParen, "the annotation's parameters")?;
            }
            out.push(Annotation { name, params, pos });
        }
        Ok(out)
    }

    /// Skips from an opening `open` to its matching `close`.
    fn skip_balanced(&mut self, open: Punct, close: Punct, what: &str) -> Result<(), Error> {
        let mut depth = 0usize;
        loop {
            let Some(t) = self.peek() else {
                return Err(self.expected(format!("`{}` to close {what}", close.text())));
            };
            self.at += 1;
            match t.kind {
                TokenKind::Punct(p) if p == open => depth += 1,
                TokenKind::Punct(p) if p == close => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
    }

    fn annotation_param(&mut self) -> Result<(Option<String>, AnnotationValue), Error> {
        let mut name = None;
        if let (Some(TokenKind::Ident { name: n, .. }), Some(TokenKind::Punct(Punct::Equals))) = (
            self.peek().map(|t| &t.kind),
            self.tokens.get(self.at + 1).map(|t| &t.kind),
        ) {
            name = Some(n.clone());
            self.at += 2;
        }
        // A lone word that names nothing: an enumerator of the annotation's own enum.
        if let (
            Some(TokenKind::Ident { name: w, .. }),
            Some(TokenKind::Punct(Punct::RParen | Punct::Comma)),
        ) = (
            self.peek().map(|t| &t.kind),
            self.tokens.get(self.at + 1).map(|t| &t.kind),
        ) {
            if w != "TRUE" && w != "FALSE" && self.lookup(std::slice::from_ref(w), false).is_none()
            {
                self.at += 1;
                return Ok((name, AnnotationValue::Word(w.clone())));
            }
        }
        let value = self.const_expr()?;
        Ok((name, AnnotationValue::Value(const_eval::to_const(value))))
    }

    fn annotation_error(&self, a: &Annotation, message: &str) -> Error {
        Error::Invalid {
            location: self.location(a.pos),
            message: format!("@{} {message}", a.name),
        }
    }

    fn type_annotation_ignored(&self, a: &Annotation, what: &str) -> Result<(), Error> {
        match a.name.as_str() {
            "key" | "id" | "optional" | "must_understand" | "hashid" | "default" => {
                Err(self.annotation_error(a, &format!("applies to a member, not to a {what}")))
            }
            _ => Ok(()),
        }
    }

    /// `@key`, `@key(TRUE)`, `@key(FALSE)`.
    fn flag(&self, a: &Annotation) -> Result<bool, Error> {
        match a.params.first() {
            None => Ok(true),
            Some((_, AnnotationValue::Value(ConstValue::Boolean(b)))) => Ok(*b),
            Some(_) => Err(self.annotation_error(a, "expects TRUE or FALSE")),
        }
    }

    fn integer_param(&self, a: &Annotation, min: i128, max: i128) -> Result<i128, Error> {
        match a.params.first() {
            Some((_, AnnotationValue::Value(v))) => match v.as_integer() {
                Some(n) if n >= min && n <= max && !matches!(v, ConstValue::Boolean(_)) => Ok(n),
                _ => {
                    Err(self
                        .annotation_error(a, &format!("expects an integer from {min} to {max}")))
                }
            },
            _ => Err(self.annotation_error(a, &format!("expects an integer from {min} to {max}"))),
        }
    }

    fn extensibility(&self, a: &Annotation) -> Result<Extensibility, Error> {
        let word = match a.name.as_str() {
            "final" => "FINAL".to_owned(),
            "appendable" => "APPENDABLE".to_owned(),
            "mutable" => "MUTABLE".to_owned(),
            _ => match a.params.first() {
                Some((_, AnnotationValue::Word(w))) => w.to_ascii_uppercase(),
                _ => String::new(),
            },
        };
        match word.as_str() {
            "FINAL" => Ok(Extensibility::Final),
            "APPENDABLE" => Ok(Extensibility::Appendable),
            "MUTABLE" => Ok(Extensibility::Mutable),
            _ => Err(self.annotation_error(a, "expects FINAL, APPENDABLE or MUTABLE")),
        }
    }

    fn autoid(&self, a: &Annotation) -> Result<AutoId, Error> {
        match a.params.first() {
            // `AutoidKind value default HASH` (IDL 4.2 §8.3.1.2).
            None => Ok(AutoId::Hash),
            Some((_, AnnotationValue::Word(w))) if w.eq_ignore_ascii_case("HASH") => {
                Ok(AutoId::Hash)
            }
            Some((_, AnnotationValue::Word(w))) if w.eq_ignore_ascii_case("SEQUENTIAL") => {
                Ok(AutoId::Sequential)
            }
            Some(_) => Err(self.annotation_error(a, "expects SEQUENTIAL or HASH")),
        }
    }

    // ---- constant expressions

    pub(crate) fn const_expr(&mut self) -> Result<Value, Error> {
        self.binary(0)
    }

    /// Precedence climbing over IDL's binary operators, loosest first: `|`, `^`, `&`,
    /// shifts, `+ -`, `* / %`.
    fn binary(&mut self, level: usize) -> Result<Value, Error> {
        const LEVELS: [&[Punct]; 6] = [
            &[Punct::Pipe],
            &[Punct::Caret],
            &[Punct::Amp],
            &[Punct::Shl, Punct::Shr],
            &[Punct::Plus, Punct::Minus],
            &[Punct::Star, Punct::Slash, Punct::Percent],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut left = self.binary(level + 1)?;
        loop {
            let Some(op) = ops.iter().copied().find(|p| {
                !self.half_shr && self.is_punct(*p) && !(self.in_template && *p == Punct::Shr)
            }) else {
                return Ok(left);
            };
            let pos = self.pos();
            self.at += 1;
            let right = self.binary(level + 1)?;
            left = const_eval::binary(op, left, right).map_err(|message| Error::Constant {
                location: self.location(pos),
                message,
            })?;
        }
    }

    fn unary(&mut self) -> Result<Value, Error> {
        let pos = self.pos();
        for op in [Punct::Minus, Punct::Plus, Punct::Tilde] {
            if self.eat_punct(op) {
                self.enter()?;
                let v = self.unary()?;
                self.depth -= 1;
                return const_eval::unary(op, v).map_err(|message| Error::Constant {
                    location: self.location(pos),
                    message,
                });
            }
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Value, Error> {
        let pos = self.pos();
        if self.half_shr {
            return Err(self.expected("a constant expression"));
        }
        let Some(token) = self.peek() else {
            return Err(self.expected("a constant expression"));
        };
        let value = match &token.kind {
            TokenKind::Integer(v) => {
                Value::Integer(i128::try_from(*v).map_err(|_| Error::Constant {
                    location: self.location(pos),
                    message: "integer literal too large".into(),
                })?)
            }
            TokenKind::Float(f) => Value::Float(*f),
            TokenKind::Char(c) | TokenKind::WideChar(c) => Value::Char(*c),
            TokenKind::Str(s) | TokenKind::WideStr(s) => {
                // Adjacent string literals are one string.
                let mut s = s.clone();
                self.at += 1;
                while let Some(TokenKind::Str(more) | TokenKind::WideStr(more)) =
                    self.peek().map(|t| &t.kind)
                {
                    s.push_str(more);
                    self.at += 1;
                }
                return Ok(Value::String(s));
            }
            TokenKind::Ident {
                name,
                escaped: false,
            } if name == "TRUE" => Value::Boolean(true),
            TokenKind::Ident {
                name,
                escaped: false,
            } if name == "FALSE" => Value::Boolean(false),
            TokenKind::Punct(Punct::LParen) => {
                self.at += 1;
                self.enter()?;
                let outer = std::mem::replace(&mut self.in_template, false);
                let v = self.const_expr();
                self.in_template = outer;
                let v = v?;
                self.depth -= 1;
                self.expect_punct(Punct::RParen)?;
                return Ok(v);
            }
            TokenKind::Ident { .. } | TokenKind::Punct(Punct::DoubleColon) => {
                let (parts, absolute, pos) = self.scoped_name("a constant")?;
                let (name, symbol) = self.resolve(&parts, absolute, pos)?;
                return match symbol {
                    Symbol::Const(v) => Ok(const_eval::from_const(&v)),
                    Symbol::Enumerator { ty, value } => Ok(Value::Enumerator {
                        ty,
                        name: name.name().to_owned(),
                        value,
                    }),
                    other => Err(self.wrong_kind(
                        pos,
                        &name,
                        "a constant or enumerator",
                        other.describe(),
                    )),
                };
            }
            _ => return Err(self.expected("a constant expression")),
        };
        self.at += 1;
        Ok(value)
    }

    /// `value` as a constant of type `ty` (range-checked; integers widen to floats).
    fn convert(&self, value: Value, ty: &TypeSpec, pos: Pos) -> Result<ConstValue, Error> {
        let resolved = self.resolve_alias(ty);
        let enum_name = match &resolved {
            TypeSpec::Named(n) if matches!(self.symbols.get(n), Some((Symbol::Enum, _))) => {
                Some(n.clone())
            }
            _ => None,
        };
        const_eval::convert(value, &resolved, enum_name.as_ref()).map_err(|message| {
            Error::Constant {
                location: self.location(pos),
                message,
            }
        })
    }
}

enum DiscriminatorKind {
    Integer(Primitive),
    Boolean,
    Char,
    Enum(ScopedName),
}

/// Words that cannot name anything (IDL 4.2 §7.2.4, those this compiler reads).
fn is_keyword(w: &str) -> bool {
    KEYWORDS.contains(&w)
}

const KEYWORDS: &[&str] = &[
    "module",
    "struct",
    "union",
    "switch",
    "case",
    "default",
    "enum",
    "bitmask",
    "bitset",
    "typedef",
    "const",
    "sequence",
    "string",
    "wstring",
    "boolean",
    "octet",
    "char",
    "wchar",
    "short",
    "long",
    "unsigned",
    "float",
    "double",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "TRUE",
    "FALSE",
    "map",
    "fixed",
    "any",
    "interface",
    "exception",
    "valuetype",
    "native",
    "attribute",
    "readonly",
    "oneway",
    "void",
    "in",
    "out",
    "inout",
    "raises",
    "local",
    "abstract",
    "custom",
    "Object",
    "ValueBase",
];

const UNSUPPORTED: &[&str] = &[
    "bitset",
    "interface",
    "exception",
    "valuetype",
    "native",
    "abstract",
    "local",
    "custom",
    "component",
    "home",
    "eventtype",
    "porttype",
    "connector",
    "import",
    "typeid",
    "typeprefix",
];

/// Annotations whose parameters are read; others' are skipped unread.
const KNOWN_ANNOTATIONS: &[&str] = &[
    "key",
    "id",
    "autoid",
    "optional",
    "final",
    "appendable",
    "mutable",
    "extensibility",
    "must_understand",
    "default",
    "nested",
    "topic",
    "bit_bound",
    "position",
    "value",
    "hashid",
    "default_literal",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_str;

    fn parse(text: &str) -> Vec<Definition> {
        match parse_str("t.idl", text) {
            Ok(spec) => spec.definitions,
            Err(e) => panic!("{e}"),
        }
    }

    fn error(text: &str) -> Error {
        match parse_str("t.idl", text) {
            Ok(spec) => panic!("parsed: {:?}", spec.definitions),
            Err(e) => e,
        }
    }

    /// Line and column of an error.
    fn at(e: &Error) -> (u32, u32) {
        let l = e.location().unwrap_or_else(|| panic!("no location: {e}"));
        (l.line, l.column)
    }

    fn module(defs: &[Definition]) -> &[Definition] {
        match &defs[0] {
            Definition::Module(m) => &m.definitions,
            other => panic!("{other:?}"),
        }
    }

    fn structure(d: &Definition) -> &Struct {
        match d {
            Definition::Struct(s) => s,
            other => panic!("{other:?}"),
        }
    }

    fn name(parts: &[&str]) -> ScopedName {
        ScopedName(parts.iter().map(|p| (*p).to_owned()).collect())
    }

    #[test]
    fn modules_structs_members_and_annotations() {
        let defs = parse(
            "module m { @appendable struct S { @key string<8> id; @optional long a, b[2][3]; \
             @id(7) @must_understand sequence<sequence<short>> nested; unsigned long long u; }; };",
        );
        let s = structure(&module(&defs)[0]);
        assert_eq!(s.name, name(&["m", "S"]));
        assert_eq!(s.extensibility, Some(Extensibility::Appendable));
        assert_eq!(s.members.len(), 5);
        assert!(s.members[0].key);
        assert_eq!(s.members[0].ty, TypeSpec::String(Some(8)));
        assert!(s.members[1].optional && s.members[2].optional);
        assert_eq!(s.members[2].dimensions, vec![2, 3]);
        assert_eq!(s.members[3].id, Some(7));
        assert!(s.members[3].must_understand);
        assert_eq!(
            s.members[3].ty,
            TypeSpec::Sequence(
                Box::new(TypeSpec::Sequence(
                    Box::new(TypeSpec::Primitive(Primitive::Int16)),
                    None
                )),
                None
            )
        );
        assert_eq!(s.members[4].ty, TypeSpec::Primitive(Primitive::UInt64));
        assert_eq!(
            (s.members[3].location.line, s.members[3].location.column),
            (1, 131)
        );
    }

    #[test]
    fn sequences_nested_without_end_are_refused() {
        let deep = format!(
            "struct S {{ {}long{} x; }};",
            "sequence<".repeat(5000),
            ">".repeat(5000)
        );
        let e = error(&deep);
        assert!(e.to_string().contains("nesting deeper than"), "{e}");
        parse(&format!(
            "struct S {{ {}long{} x; }};",
            "sequence<".repeat(60),
            ">".repeat(60)
        ));
    }

    #[test]
    fn inheritance_and_forward_declarations() {
        let defs = parse("struct N; struct B { long a; }; typedef B BT; struct D : BT { sequence<N> ns; }; struct N { long x; };");
        assert!(matches!(&defs[0], Definition::Forward(f) if f.kind == ForwardKind::Struct));
        assert_eq!(structure(&defs[3]).base, Some(name(&["B"])));
        assert_eq!(
            structure(&defs[3]).members[0].ty,
            TypeSpec::Sequence(Box::new(TypeSpec::Named(name(&["N"]))), None)
        );
        let e = error("union U; struct D : U { long a; };");
        assert!(matches!(e, Error::WrongKind { .. }), "{e}");
    }

    #[test]
    fn unions_of_every_discriminator() {
        let defs = parse(
            "enum Color { RED, GREEN, BLUE }; \
             union A switch (long) { case 1: case 2: long a; case -3: string b; default: double c; }; \
             union B switch (Color) { case RED: short r; case BLUE: Color p; }; \
             union C switch (char) { case 'a': long long a; }; \
             union D switch (boolean) { case TRUE: long t; }; \
             typedef octet O; union E switch (O) { case 0x10: long x; };",
        );
        let Definition::Union(a) = &defs[1] else {
            panic!()
        };
        assert_eq!(
            a.cases[0].labels,
            vec![ConstValue::Integer(1), ConstValue::Integer(2)]
        );
        assert_eq!(a.cases[1].labels, vec![ConstValue::Integer(-3)]);
        assert!(a.cases[2].default);
        let Definition::Union(b) = &defs[2] else {
            panic!()
        };
        assert!(
            matches!(&b.cases[1].labels[0], ConstValue::Enumerator { name, value: 2, .. } if name == "BLUE")
        );
        let Definition::Union(c) = &defs[3] else {
            panic!()
        };
        assert_eq!(c.cases[0].labels, vec![ConstValue::Char('a')]);
        let Definition::Union(e) = &defs[6] else {
            panic!()
        };
        assert_eq!(e.cases[0].labels, vec![ConstValue::Integer(16)]);
    }

    #[test]
    fn union_errors() {
        let e = error("union U switch (long) { case 1: long a; case 1: long b; };");
        assert_eq!(at(&e), (1, 41));
        let e = error("union U switch (string) { case 1: long a; };");
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        let e = error("enum E { A }; enum F { X }; union U switch (E) { case X: long a; };");
        assert!(matches!(e, Error::Constant { .. }), "{e}");
        let e = error("union U switch (octet) { case 256: long a; };");
        assert!(e.to_string().contains("out of the range"), "{e}");
        let e = error("union U switch (long) { case 1: @optional long a; };");
        assert!(e.to_string().contains("cannot be @optional"), "{e}");
        let e = error("union U switch (long) { default: long a; default: long b; };");
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
    }

    #[test]
    fn enums_with_values_and_bit_bounds() {
        let defs =
            parse("@bit_bound(8) enum S { A, @value(5) B, C }; enum T { @default_literal X, Y, };");
        let Definition::Enum(s) = &defs[0] else {
            panic!()
        };
        assert_eq!(s.bit_bound, Some(8));
        let values: Vec<i64> = s.enumerators.iter().map(|e| e.value).collect();
        assert_eq!(values, vec![0, 5, 6]);
        let e = error("@bit_bound(8) enum S { A, @value(256) B };");
        assert!(
            matches!(e, Error::Invalid { .. } | Error::Constant { .. }),
            "{e}"
        );
        let e = error("enum S { A, @value(0) B };");
        assert!(e.to_string().contains("repeats"), "{e}");
    }

    #[test]
    fn bitmasks_with_positions() {
        let defs = parse("@bit_bound(16) bitmask F { A, @position(4) B, C };");
        let Definition::Bitmask(b) = &defs[0] else {
            panic!()
        };
        assert_eq!(b.bit_bound, 16);
        let positions: Vec<u32> = b.flags.iter().map(|f| f.position).collect();
        assert_eq!(positions, vec![0, 4, 5]);
        let e = error("@bit_bound(4) bitmask F { A, @position(4) B };");
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
    }

    #[test]
    fn constants_and_expressions() {
        let defs = parse(
            "const long A = 1 << 4 | 3; const long B = (A + 2) * 3 % 5 - -1; const unsigned long C = ~0; \
             const short D = 0x7fff & ~0xf ^ 1; const double E = A / 2.0; const string S = \"a\" \"b\"; \
             const char CH = 'x'; const boolean T = TRUE; enum Col { R, G }; const Col K = G; \
             module m { const long A = ::A >> 1; struct S { long x[A]; string<B> s; }; };",
        );
        let value = |i: usize| match &defs[i] {
            Definition::Const(c) => c.value.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(value(0), ConstValue::Integer(19));
        assert_eq!(value(1), ConstValue::Integer(4));
        assert_eq!(value(2), ConstValue::Integer(u32::MAX.into()));
        assert_eq!(value(3), ConstValue::Integer(0x7ff1));
        assert_eq!(value(4), ConstValue::Float(9.5));
        assert_eq!(value(5), ConstValue::String("ab".into()));
        assert_eq!(value(6), ConstValue::Char('x'));
        assert_eq!(value(7), ConstValue::Boolean(true));
        assert!(matches!(value(9), ConstValue::Enumerator { value: 1, .. }));
        let inner = module(&defs[10..]);
        let s = structure(&inner[1]);
        assert_eq!(s.members[0].dimensions, vec![9]);
        assert_eq!(s.members[1].ty, TypeSpec::String(Some(4)));
    }

    #[test]
    fn constant_errors_say_where() {
        let e = error("const long A = 1 / 0;");
        assert_eq!(at(&e), (1, 18));
        let e = error("const octet O = 300;");
        assert!(matches!(e, Error::Constant { .. }), "{e}");
        let e = error("const long A = 1 << 64;");
        assert!(matches!(e, Error::Constant { .. }), "{e}");
        let e = error("const long long A = 9223372036854775807 + 1;");
        assert!(matches!(e, Error::Constant { .. }), "{e}");
        let e = error("const string S = 1;");
        assert!(matches!(e, Error::Constant { .. }), "{e}");
        let e = error("struct S { long x[0]; };");
        assert!(matches!(e, Error::Constant { .. }), "{e}");
        let e = error("const long A = B;");
        assert!(
            matches!(&e, Error::Undeclared { name, .. } if name == "B"),
            "{e}"
        );
        let e = error("struct S { long a; }; const long A = S;");
        assert!(matches!(e, Error::WrongKind { .. }), "{e}");
    }

    #[test]
    fn names_resolve_outward_and_absolutely() {
        let defs = parse("struct P { long x; }; module a { struct P { long y; }; module b { struct Q { P p; ::P q; a::P r; }; }; };");
        let b = module(&module(&defs[1..])[1..]);
        let q = structure(&b[0]);
        assert_eq!(q.members[0].ty, TypeSpec::Named(name(&["a", "P"])));
        assert_eq!(q.members[1].ty, TypeSpec::Named(name(&["P"])));
        assert_eq!(q.members[2].ty, TypeSpec::Named(name(&["a", "P"])));
    }

    #[test]
    fn double_closing_angles_close_templates() {
        let defs =
            parse("struct S { sequence<sequence<long, 2>> a; sequence<string<(8 >> 1)>> b; };");
        let s = structure(&defs[0]);
        let long = TypeSpec::Primitive(Primitive::Int32);
        assert_eq!(
            s.members[0].ty,
            TypeSpec::Sequence(Box::new(TypeSpec::Sequence(Box::new(long), Some(2))), None)
        );
        assert_eq!(
            s.members[1].ty,
            TypeSpec::Sequence(Box::new(TypeSpec::String(Some(4))), None)
        );
        let e = error("struct S { sequence<long, 2>> a; };");
        assert!(
            matches!(&e, Error::Syntax { found, .. } if found == "`>`"),
            "{e}"
        );
    }

    #[test]
    fn typedefs_and_escaped_identifiers() {
        let defs =
            parse("typedef sequence<long, 4> L4, Arr[2]; struct S { L4 a; Arr b; long _module; };");
        assert!(matches!(&defs[1], Definition::Typedef(t) if t.dimensions == vec![2]));
        assert_eq!(structure(&defs[2]).members[2].name, "module");
    }

    #[test]
    fn extensibility_autoid_and_member_annotations() {
        let defs = parse(
            "@extensibility(MUTABLE) @autoid(HASH) struct A { @hashid long a; @hashid(\"x\") long b; @default(3) long c; @unit(\"m\") @range(min=0, max=3) long d; }; \
             @mutable @autoid(SEQUENTIAL) @nested struct B { long a; }; @final @topic struct C { long a; };",
        );
        let a = structure(&defs[0]);
        assert_eq!(
            (a.extensibility, a.autoid),
            (Some(Extensibility::Mutable), AutoId::Hash)
        );
        assert_eq!(a.members[0].hash_id.as_deref(), Some("a"));
        assert_eq!(a.members[1].hash_id.as_deref(), Some("x"));
        assert_eq!(a.members[2].default, Some(ConstValue::Integer(3)));
        let b = structure(&defs[1]);
        assert!(b.nested && b.autoid == AutoId::Sequential);
        assert!(structure(&defs[2]).topic);
        let e = error("@extensibility(SOMETIMES) struct A { long a; };");
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        let e = error("struct A { @key @optional long a; };");
        assert!(e.to_string().contains("cannot be @optional"), "{e}");
        let e = error("@key struct A { long a; };");
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        let e = error("struct A { @id(-1) long a; };");
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
    }

    #[test]
    fn annotation_declarations_are_skipped() {
        let defs = parse("@annotation unit { string value; }; @unit(\"m\") struct S { @unit(value=\"s\") long t; };");
        assert_eq!(structure(&defs[0]).members.len(), 1);
        let e = error("@annotation unit { string value; ");
        assert!(
            matches!(&e, Error::Syntax { expected, .. } if expected.contains("`}`")),
            "{e}"
        );
    }

    #[test]
    fn pragma_keylist() {
        let defs = parse("module m { struct S { long id; long v; };\n#pragma keylist S id\n};");
        assert!(structure(&module(&defs)[0]).members[0].key);
        let e = error("struct S { long id; };\n#pragma keylist S nope\n");
        assert!(matches!(e, Error::Undeclared { .. }), "{e}");
    }

    #[test]
    fn syntax_errors_say_what_was_expected_and_where() {
        let e = error("struct S {\n  long x\n};");
        assert!(
            matches!(&e, Error::Syntax { expected, found, .. } if expected == "`;`" && found == "`}`"),
            "{e}"
        );
        assert_eq!(at(&e), (3, 1));
        let e = error("module m {\n  struct S { long x; };\n");
        assert!(
            matches!(&e, Error::Syntax { found, .. } if found == "the end of the input"),
            "{e}"
        );
        let e = error("struct S { Unknown x; };");
        assert!(
            matches!(&e, Error::Undeclared { name, .. } if name == "Unknown"),
            "{e}"
        );
        assert_eq!(at(&e), (1, 12));
        let e = error("struct S { long x; long x; };");
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        let e = error("struct S { long x; }; struct S { long y; };");
        assert!(
            matches!(&e, Error::Redeclared { previous, .. } if previous.column == 8),
            "{e}"
        );
        let e = error("struct struct { long x; };");
        assert!(matches!(e, Error::Syntax { .. }), "{e}");
        let e = error("interface I { };");
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        let e = error("struct S { long double d; };");
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        let e = error("struct S { map<long, long> m; };");
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        let e = error("struct S { sequence<long x; };");
        assert!(
            matches!(&e, Error::Syntax { expected, .. } if expected == "`>`"),
            "{e}"
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "module m { ".repeat(100) + &"};".repeat(100);
        assert!(matches!(error(&deep), Error::Unsupported { .. }));
        let expr = format!("const long A = {}1{};", "(".repeat(500), ")".repeat(500));
        assert!(matches!(error(&expr), Error::Unsupported { .. }));
        let neg = format!("const long A = {}1;", "-".repeat(500));
        assert!(matches!(error(&neg), Error::Unsupported { .. }));
    }
}
