//! Turns IDL text into tokens with their line and column. Comments are dropped; a line
//! whose first non-blank character is `#` becomes one `Directive` token holding the rest of
//! the line, for the preprocessor.

use crate::error::Error;
use crate::source::{Pos, Sources};

/// One token and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) kind: TokenKind,
    pub(crate) pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    /// An identifier or keyword; `escaped` when written with a leading `_` (IDL 4.2
    /// §7.2.3.1: `_module` is the identifier `module`, never the keyword).
    Ident {
        name: String,
        escaped: bool,
    },
    Integer(u128),
    Float(f64),
    Char(char),
    WideChar(char),
    Str(String),
    WideStr(String),
    Punct(Punct),
    /// `#...` up to the end of the line (continuations joined), without the `#`.
    Directive(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Punct {
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Lt,
    Gt,
    Semicolon,
    Colon,
    DoubleColon,
    Comma,
    Equals,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Shl,
    Shr,
    At,
    Bang,
    AndAnd,
    OrOr,
    EqEq,
    NotEq,
    Le,
    Ge,
}

impl Punct {
    pub(crate) fn text(self) -> &'static str {
        match self {
            Punct::LBrace => "{",
            Punct::RBrace => "}",
            Punct::LParen => "(",
            Punct::RParen => ")",
            Punct::LBracket => "[",
            Punct::RBracket => "]",
            Punct::Lt => "<",
            Punct::Gt => ">",
            Punct::Semicolon => ";",
            Punct::Colon => ":",
            Punct::DoubleColon => "::",
            Punct::Comma => ",",
            Punct::Equals => "=",
            Punct::Plus => "+",
            Punct::Minus => "-",
            Punct::Star => "*",
            Punct::Slash => "/",
            Punct::Percent => "%",
            Punct::Amp => "&",
            Punct::Pipe => "|",
            Punct::Caret => "^",
            Punct::Tilde => "~",
            Punct::Shl => "<<",
            Punct::Shr => ">>",
            Punct::At => "@",
            Punct::Bang => "!",
            Punct::AndAnd => "&&",
            Punct::OrOr => "||",
            Punct::EqEq => "==",
            Punct::NotEq => "!=",
            Punct::Le => "<=",
            Punct::Ge => ">=",
        }
    }
}

impl TokenKind {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            TokenKind::Ident { name, .. } => format!("`{name}`"),
            TokenKind::Integer(v) => format!("integer `{v}`"),
            TokenKind::Float(v) => format!("number `{v}`"),
            TokenKind::Char(c) | TokenKind::WideChar(c) => format!("character {c:?}"),
            TokenKind::Str(s) | TokenKind::WideStr(s) => format!("string {s:?}"),
            TokenKind::Punct(p) => format!("`{}`", p.text()),
            TokenKind::Directive(d) => format!("`#{}`", d.trim()),
        }
    }
}

/// Lexes `text`, whose first character is at `start` (a file's start, or a directive's
/// text inside its line).
pub(crate) fn lex(text: &str, start: Pos, sources: &Sources) -> Result<Vec<Token>, Error> {
    // A byte-order mark (editors on Windows write one) is no token.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        at: 0,
        line: start.line,
        column: start.column,
        file: start.file,
        at_line_start: true,
        sources,
    };
    let mut out = Vec::new();
    while let Some(token) = lexer.next_token()? {
        out.push(token);
    }
    Ok(out)
}

struct Lexer<'a> {
    chars: Vec<char>,
    at: usize,
    line: u32,
    column: u32,
    file: u32,
    /// Only blanks (or comments) since the last newline: a `#` here starts a directive.
    at_line_start: bool,
    sources: &'a Sources,
}

impl Lexer<'_> {
    fn pos(&self) -> Pos {
        Pos {
            file: self.file,
            line: self.line,
            column: self.column,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.column = 1;
            self.at_line_start = true;
        } else {
            self.column = self.column.saturating_add(1);
        }
        Some(c)
    }

    fn error(&self, pos: Pos, message: impl Into<String>) -> Error {
        Error::Lexical {
            location: self.sources.location(pos),
            message: message.into(),
        }
    }

    /// Skips blanks and comments.
    fn skip_trivia(&mut self) -> Result<(), Error> {
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let start = self.pos();
                    let line_start = self.at_line_start;
                    self.bump();
                    self.bump();
                    loop {
                        match (self.peek(), self.peek_at(1)) {
                            (Some('*'), Some('/')) => {
                                self.bump();
                                self.bump();
                                break;
                            }
                            (Some(_), _) => {
                                self.bump();
                            }
                            (None, _) => {
                                return Err(self.error(
                                    start,
                                    "comment opened here is never closed (expected `*/`)",
                                ))
                            }
                        }
                    }
                    // A comment does not end the blank start of a line (`/* x */ #define`).
                    self.at_line_start = self.at_line_start || line_start;
                }
                _ => return Ok(()),
            }
        }
    }

    fn next_token(&mut self) -> Result<Option<Token>, Error> {
        self.skip_trivia()?;
        let pos = self.pos();
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        let line_start = self.at_line_start;
        self.at_line_start = false;
        let kind = if c == '#' {
            if !line_start {
                return Err(self.error(
                    pos,
                    "`#` only starts a preprocessor directive at the start of a line",
                ));
            }
            self.bump();
            self.directive()
        } else if c == 'L' && matches!(self.peek_at(1), Some('"') | Some('\'')) {
            self.bump();
            match self.peek() {
                Some('"') => TokenKind::WideStr(self.string(pos)?),
                _ => TokenKind::WideChar(self.char_literal(pos)?),
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            self.identifier()
        } else if c.is_ascii_digit()
            || (c == '.' && self.peek_at(1).is_some_and(|d| d.is_ascii_digit()))
        {
            self.number(pos)?
        } else if c == '"' {
            TokenKind::Str(self.string(pos)?)
        } else if c == '\'' {
            TokenKind::Char(self.char_literal(pos)?)
        } else {
            TokenKind::Punct(self.punct(pos)?)
        };
        Ok(Some(Token { kind, pos }))
    }

    fn directive(&mut self) -> TokenKind {
        let mut text = String::new();
        while let Some(c) = self.peek() {
            if c == '\\' && self.peek_at(1) == Some('\n') {
                self.bump();
                self.bump();
                text.push(' ');
                continue;
            }
            if c == '\n' {
                break;
            }
            // A comment ends the directive's text (`#endif // GUARD`).
            if c == '/' && self.peek_at(1) == Some('/') {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.bump();
                }
                break;
            }
            self.bump();
            text.push(c);
        }
        TokenKind::Directive(text)
    }

    fn identifier(&mut self) -> TokenKind {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                self.bump();
            } else {
                break;
            }
        }
        let escaped = name.len() > 1 && name.starts_with('_');
        if escaped {
            name.remove(0);
        }
        TokenKind::Ident { name, escaped }
    }

    fn number(&mut self, pos: Pos) -> Result<TokenKind, Error> {
        let mut text = String::new();
        if self.peek() == Some('0') && matches!(self.peek_at(1), Some('x') | Some('X')) {
            self.bump();
            self.bump();
            while let Some(c) = self.peek().filter(|c| c.is_ascii_hexdigit()) {
                text.push(c);
                self.bump();
            }
            return u128::from_str_radix(&text, 16)
                .map(TokenKind::Integer)
                .map_err(|_| {
                    self.error(
                        pos,
                        "expected hexadecimal digits after `0x` (at most 128 bits)",
                    )
                });
        }
        let mut is_float = false;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() {
                text.push(c);
            } else if c == '.' && !is_float {
                is_float = true;
                text.push(c);
            } else if (c == 'e' || c == 'E')
                && (self.peek_at(1).is_some_and(|d| d.is_ascii_digit())
                    || (matches!(self.peek_at(1), Some('+') | Some('-'))
                        && self.peek_at(2).is_some_and(|d| d.is_ascii_digit())))
            {
                is_float = true;
                text.push('e');
                self.bump();
                if let Some(sign) = self.peek().filter(|c| *c == '+' || *c == '-') {
                    text.push(sign);
                    self.bump();
                }
                continue;
            } else {
                break;
            }
            self.bump();
        }
        if let Some(c) = self.peek().filter(|c| c.is_ascii_alphabetic() || *c == '_') {
            if c == 'd' || c == 'D' {
                return Err(Error::Unsupported {
                    location: self.sources.location(pos),
                    what: "the fixed-point type and its literals".into(),
                });
            }
            return Err(self.error(self.pos(), format!("unexpected `{c}` after a number")));
        }
        if is_float {
            return text
                .parse::<f64>()
                .map(TokenKind::Float)
                .map_err(|_| self.error(pos, format!("`{text}` is not a number")));
        }
        let (digits, radix) = if text.len() > 1 && text.starts_with('0') {
            (&text[1..], 8)
        } else {
            (text.as_str(), 10)
        };
        u128::from_str_radix(digits, radix)
            .map(TokenKind::Integer)
            .map_err(|_| {
                self.error(
                    pos,
                    format!("`{text}` is not an integer (octal digits are 0-7; at most 128 bits)"),
                )
            })
    }

    /// One character of a character or string literal, escapes decoded.
    fn literal_char(&mut self, start: Pos, what: &str) -> Result<char, Error> {
        let here = self.pos();
        match self.bump() {
            None | Some('\n') => {
                Err(self.error(start, format!("{what} opened here is never closed")))
            }
            Some('\\') => {
                let Some(e) = self.bump() else {
                    return Err(self.error(start, format!("{what} opened here is never closed")));
                };
                Ok(match e {
                    'n' => '\n',
                    't' => '\t',
                    'v' => '\u{b}',
                    'b' => '\u{8}',
                    'r' => '\r',
                    'f' => '\u{c}',
                    'a' => '\u{7}',
                    '\\' | '?' | '\'' | '"' => e,
                    'x' | 'u' => {
                        let max = if e == 'x' { 2 } else { 4 };
                        let mut value = 0u32;
                        let mut n = 0;
                        while n < max {
                            let Some(d) = self.peek().and_then(|c| c.to_digit(16)) else {
                                break;
                            };
                            value = value * 16 + d;
                            self.bump();
                            n += 1;
                        }
                        if n == 0 {
                            return Err(self.error(
                                here,
                                format!("expected hexadecimal digits after `\\{e}`"),
                            ));
                        }
                        char::from_u32(value).ok_or_else(|| {
                            self.error(here, format!("`\\{e}{value:x}` is not a character"))
                        })?
                    }
                    '0'..='7' => {
                        let mut value = e.to_digit(8).unwrap_or(0);
                        let mut n = 1;
                        while n < 3 {
                            let Some(d) = self.peek().and_then(|c| c.to_digit(8)) else {
                                break;
                            };
                            value = value * 8 + d;
                            self.bump();
                            n += 1;
                        }
                        char::from_u32(value)
                            .ok_or_else(|| self.error(here, "octal escape out of range"))?
                    }
                    other => return Err(self.error(here, format!("unknown escape `\\{other}`"))),
                })
            }
            Some(c) => Ok(c),
        }
    }

    fn string(&mut self, start: Pos) -> Result<String, Error> {
        self.bump(); // the opening quote
        let mut s = String::new();
        loop {
            if self.peek() == Some('"') {
                self.bump();
                return Ok(s);
            }
            s.push(self.literal_char(start, "string")?);
        }
    }

    fn char_literal(&mut self, start: Pos) -> Result<char, Error> {
        self.bump(); // the opening quote
        if self.peek() == Some('\'') {
            return Err(self.error(start, "expected a character between the quotes"));
        }
        let c = self.literal_char(start, "character literal")?;
        if self.bump() != Some('\'') {
            return Err(self.error(start, "expected `'` to close the character literal"));
        }
        Ok(c)
    }

    fn punct(&mut self, pos: Pos) -> Result<Punct, Error> {
        let (Some(c), next) = (self.peek(), self.peek_at(1)) else {
            return Err(self.error(pos, "unexpected end of input"));
        };
        let two = match (c, next) {
            (':', Some(':')) => Some(Punct::DoubleColon),
            ('<', Some('<')) => Some(Punct::Shl),
            ('>', Some('>')) => Some(Punct::Shr),
            ('&', Some('&')) => Some(Punct::AndAnd),
            ('|', Some('|')) => Some(Punct::OrOr),
            ('=', Some('=')) => Some(Punct::EqEq),
            ('!', Some('=')) => Some(Punct::NotEq),
            ('<', Some('=')) => Some(Punct::Le),
            ('>', Some('=')) => Some(Punct::Ge),
            _ => None,
        };
        if let Some(p) = two {
            self.bump();
            self.bump();
            return Ok(p);
        }
        let p = match c {
            '{' => Punct::LBrace,
            '}' => Punct::RBrace,
            '(' => Punct::LParen,
            ')' => Punct::RParen,
            '[' => Punct::LBracket,
            ']' => Punct::RBracket,
            '<' => Punct::Lt,
            '>' => Punct::Gt,
            ';' => Punct::Semicolon,
            ':' => Punct::Colon,
            ',' => Punct::Comma,
            '=' => Punct::Equals,
            '+' => Punct::Plus,
            '-' => Punct::Minus,
            '*' => Punct::Star,
            '/' => Punct::Slash,
            '%' => Punct::Percent,
            '&' => Punct::Amp,
            '|' => Punct::Pipe,
            '^' => Punct::Caret,
            '~' => Punct::Tilde,
            '@' => Punct::At,
            '!' => Punct::Bang,
            other => return Err(self.error(pos, format!("unexpected character {other:?}"))),
        };
        self.bump();
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Result<Vec<TokenKind>, Error> {
        let sources = Sources::for_tests();
        Ok(lex(text, Pos::start(0), &sources)?
            .into_iter()
            .map(|t| t.kind)
            .collect())
    }

    fn ident(name: &str) -> TokenKind {
        TokenKind::Ident {
            name: name.into(),
            escaped: false,
        }
    }

    #[test]
    fn tokens_with_positions() {
        let sources = Sources::for_tests();
        let tokens = lex("struct A {\n  long x; // c\n};", Pos::start(0), &sources).unwrap();
        assert_eq!(tokens[0].kind, ident("struct"));
        assert_eq!((tokens[3].pos.line, tokens[3].pos.column), (2, 3));
        assert_eq!(
            tokens.last().map(|t| t.kind.clone()),
            Some(TokenKind::Punct(Punct::Semicolon))
        );
    }

    #[test]
    fn literals() {
        assert_eq!(
            kinds("0x1F 017 42 1.5 2e3 'a' '\\n' \"a\\tb\" L\"w\" L'x' '\\x41'").unwrap(),
            vec![
                TokenKind::Integer(31),
                TokenKind::Integer(15),
                TokenKind::Integer(42),
                TokenKind::Float(1.5),
                TokenKind::Float(2000.0),
                TokenKind::Char('a'),
                TokenKind::Char('\n'),
                TokenKind::Str("a\tb".into()),
                TokenKind::WideStr("w".into()),
                TokenKind::WideChar('x'),
                TokenKind::Char('A'),
            ]
        );
    }

    #[test]
    fn operators_and_escaped_identifiers() {
        assert_eq!(
            kinds("a::b << >> _module").unwrap(),
            vec![
                ident("a"),
                TokenKind::Punct(Punct::DoubleColon),
                ident("b"),
                TokenKind::Punct(Punct::Shl),
                TokenKind::Punct(Punct::Shr),
                TokenKind::Ident {
                    name: "module".into(),
                    escaped: true
                },
            ]
        );
    }

    #[test]
    fn byte_order_marks_and_crlf_line_ends() {
        assert_eq!(
            kinds("\u{feff}#define X 1\r\nX\r\n").unwrap(),
            vec![TokenKind::Directive("define X 1\r".into()), ident("X")]
        );
    }

    #[test]
    fn directives_only_at_line_start() {
        assert_eq!(
            kinds("  #define X 1 // c\nX").unwrap(),
            vec![TokenKind::Directive("define X 1 ".into()), ident("X")]
        );
        let e = kinds("long # x").unwrap_err();
        assert!(
            matches!(&e, Error::Lexical { location, .. } if location.column == 6),
            "{e}"
        );
    }

    #[test]
    fn unclosed_things_say_where_they_opened() {
        let e = kinds("a\n /* never").unwrap_err();
        assert!(
            matches!(&e, Error::Lexical { location, .. } if (location.line, location.column) == (2, 2)),
            "{e}"
        );
        let e = kinds("\"abc").unwrap_err();
        assert!(e.to_string().contains("never closed"), "{e}");
        assert!(kinds("'ab'").is_err());
        assert!(kinds("09").is_err());
        assert!(kinds("1.5d").is_err());
        assert!(kinds("$").is_err());
    }
}
