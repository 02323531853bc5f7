//! What can go wrong, each with where: the file, line and column of the offending text.

use std::fmt;
use std::path::PathBuf;

/// A place in an IDL file: 1-based line and column (columns count characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// The file, as it was named on the command line or found on the include path.
    pub file: PathBuf,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// An error of the IDL compiler. Every variant that comes from the IDL text carries the
/// [`Location`] it was found at.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An IDL file (or an output directory) could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A character that starts no IDL token, or a literal or comment left open.
    #[error("{location}: {message}")]
    Lexical {
        /// Where.
        location: Location,
        /// What is wrong.
        message: String,
    },
    /// The text is not the IDL that was expected there.
    #[error("{location}: expected {expected}, found {found}")]
    Syntax {
        /// Where.
        location: Location,
        /// What would have been accepted.
        expected: String,
        /// What was there.
        found: String,
    },
    /// A preprocessor directive that is malformed, unknown, unbalanced or `#error`.
    #[error("{location}: {message}")]
    Preprocessor {
        /// Where.
        location: Location,
        /// What is wrong.
        message: String,
    },
    /// `#include` names a file found neither beside the including file nor on the include
    /// path.
    #[error("{location}: cannot find include file `{name}` (searched {searched})")]
    IncludeNotFound {
        /// The `#include` directive.
        location: Location,
        /// The name between the quotes or angle brackets.
        name: String,
        /// The directories searched, in order, separated by commas.
        searched: String,
    },
    /// A name that is declared nowhere in scope.
    #[error("{location}: `{name}` is not declared")]
    Undeclared {
        /// Where the name is used.
        location: Location,
        /// The name as written.
        name: String,
    },
    /// A name declared twice in the same scope.
    #[error("{location}: `{name}` is already declared at {previous}")]
    Redeclared {
        /// The second declaration.
        location: Location,
        /// The scoped name.
        name: String,
        /// The first declaration.
        previous: Location,
    },
    /// A name that is declared, but not as what this place needs (a constant where a type is
    /// expected, a struct as a base of a union ...).
    #[error("{location}: `{name}` is {found}, expected {expected}")]
    WrongKind {
        /// Where the name is used.
        location: Location,
        /// The name as written.
        name: String,
        /// What was needed.
        expected: String,
        /// What the name is.
        found: String,
    },
    /// A constant expression that cannot be evaluated (overflow, division by zero, a value
    /// out of its type's range, operands of the wrong type).
    #[error("{location}: {message}")]
    Constant {
        /// Where the expression is.
        location: Location,
        /// What is wrong.
        message: String,
    },
    /// A declaration that is well-formed IDL but not a valid type (a key that is optional,
    /// two enumerators with one value, a duplicate case label ...).
    #[error("{location}: {message}")]
    Invalid {
        /// Where.
        location: Location,
        /// What is wrong.
        message: String,
    },
    /// IDL that this compiler or the chosen output language does not support yet.
    #[error("{location}: {what} is not supported")]
    Unsupported {
        /// Where.
        location: Location,
        /// The construct.
        what: String,
    },
}

impl Error {
    /// Where in the IDL the error is, when it comes from the IDL text.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Error::Io { .. } => None,
            Error::Lexical { location, .. }
            | Error::Syntax { location, .. }
            | Error::Preprocessor { location, .. }
            | Error::IncludeNotFound { location, .. }
            | Error::Undeclared { location, .. }
            | Error::Redeclared { location, .. }
            | Error::WrongKind { location, .. }
            | Error::Constant { location, .. }
            | Error::Invalid { location, .. }
            | Error::Unsupported { location, .. } => Some(location),
        }
    }
}
