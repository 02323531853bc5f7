//! The FerroDDS IDL compiler: reads IDL 4.2 as DDS users write it and writes Rust types
//! with `#[derive(Cdr)]` (one `.rs` per IDL file, IDL modules as Rust modules), Python
//! classes over `ferrodds.idl` (the layout cyclonedds-python's `idlc -l py` writes), or C#
//! classes and type supports for the C# binding (`bindings/csharp/`).
//!
//! ```no_run
//! // build.rs
//! let out = std::env::var_os("OUT_DIR").unwrap_or_default();
//! if let Err(e) = ferrodds_idl::Compiler::new()
//!     .include_dir("idl")
//!     .compile_rust(&["idl/shape.idl"], out)
//! {
//!     panic!("{e}"); // idl/shape.idl:3:7: expected ..., found ...
//! }
//! ```
//!
//! What it reads: modules, structs (with inheritance), unions, enums, bitmasks, typedefs,
//! constants and constant expressions, arrays, sequences, strings, forward declarations,
//! the XTypes annotations, and a small preprocessor (`#include`, object-like `#define`,
//! conditionals; see `docs/idl.md`). What it does not: interfaces,
//! valuetypes, `any`, `fixed`, `map`, `bitset`, `long double`, function-like macros.
//! Errors name the file, line and column ([`Error`]). Nothing here panics on any input.

#![forbid(unsafe_code)]

pub mod ast;
mod const_eval;
mod csharp_gen;
pub mod dynamic;
mod error;
mod lexer;
mod parser;
mod preprocessor;
mod python_gen;
mod rust_gen;
mod source;

pub use error::{Error, Location};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Settings of one compilation: include path, options of the generated code.
#[derive(Debug, Clone)]
pub struct Compiler {
    include_dirs: Vec<PathBuf>,
    in_memory: HashMap<PathBuf, String>,
    cdr_crate: String,
    ros2_type_names: bool,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler::new()
    }
}

impl Compiler {
    /// No include directories; generated Rust names `::ferrodds_cdr`.
    pub fn new() -> Compiler {
        Compiler {
            include_dirs: Vec::new(),
            in_memory: HashMap::new(),
            cdr_crate: "::ferrodds_cdr".into(),
            ros2_type_names: false,
        }
    }

    /// Adds a directory `#include` searches (after the including file's own directory for
    /// `"x"`; `<x>` searches only these), in the order added.
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Compiler {
        self.include_dirs.push(dir.into());
        self
    }

    /// Makes `path` read as `text` instead of from the disk (for includes too).
    pub fn source(mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> Compiler {
        self.in_memory.insert(path.into(), text.into());
        self
    }

    /// The path generated Rust reaches `ferrodds-cdr` by: `::ferrodds_cdr` (the default)
    /// or, for a crate that depends on `ferrodds` alone, `::ferrodds::ferrodds_cdr`.
    pub fn cdr_crate(mut self, path: impl Into<String>) -> Compiler {
        self.cdr_crate = path.into();
        self
    }

    /// Registers types the way ROS 2's DDS layers name them on the wire: a type `T` in
    /// modules `pkg::msg` (or `srv`, `action`) becomes `pkg::msg::dds_::T_`. Off by default.
    pub fn ros2_type_names(mut self, on: bool) -> Compiler {
        self.ros2_type_names = on;
        self
    }

    fn loader(&self) -> preprocessor::Loader {
        preprocessor::Loader {
            include_dirs: self.include_dirs.clone(),
            in_memory: self.in_memory.clone(),
        }
    }

    /// Reads `files` and everything they include (each file once) into one specification.
    pub fn parse<P: AsRef<Path>>(&self, files: &[P]) -> Result<ast::Specification, Error> {
        let mains: Vec<PathBuf> = files.iter().map(|f| f.as_ref().to_path_buf()).collect();
        let pre = preprocessor::preprocess(&self.loader(), &mains)?;
        let definitions = parser::parse(&pre.tokens, &pre.sources)?;
        let paths = pre.sources.into_paths();
        let main_files = mains
            .iter()
            .filter_map(|m| paths.iter().position(|p| p == m))
            .collect();
        Ok(ast::Specification {
            files: paths,
            main_files,
            definitions,
        })
    }

    /// The Rust of `files`, without writing it: one `(file name, text)` per IDL file read
    /// (included ones too: their types are needed), then `idl_types.rs` holding all of them
    /// in one module tree.
    pub fn generate_rust<P: AsRef<Path>>(
        &self,
        files: &[P],
    ) -> Result<Vec<(String, String)>, Error> {
        let spec = self.parse(files)?;
        let options = rust_gen::Options {
            cdr: self.cdr_crate.clone(),
            ros2_names: self.ros2_type_names,
        };
        rust_gen::generate(&spec, &options)
    }

    /// Writes the Rust of `files` into `out_dir`: `<stem>.rs` per IDL file (each with its
    /// modules; use it alone when no other file shares its modules) and `idl_types.rs`
    /// (every file's types in one module tree, for `include!` when several files share
    /// modules). Returns the paths written.
    pub fn compile_rust<P: AsRef<Path>>(
        &self,
        files: &[P],
        out_dir: impl AsRef<Path>,
    ) -> Result<Vec<PathBuf>, Error> {
        let outputs = self.generate_rust(files)?;
        write_all(out_dir.as_ref(), outputs)
    }

    /// The Python of `files`, without writing it: `(relative path, text)` per generated
    /// file — a package directory per IDL module, `_<file>.py` per IDL file within it, and
    /// each package's `__init__.py`.
    pub fn generate_python<P: AsRef<Path>>(
        &self,
        files: &[P],
    ) -> Result<Vec<(String, String)>, Error> {
        let spec = self.parse(files)?;
        python_gen::generate(&spec, self.ros2_type_names)
    }

    /// Writes the Python of `files` under `out_dir` (add `out_dir` to `sys.path` to import
    /// the packages). An `__init__.py` already there keeps the imports it has, so files
    /// compiled one at a time into one directory add up. Returns the paths written.
    pub fn compile_python<P: AsRef<Path>>(
        &self,
        files: &[P],
        out_dir: impl AsRef<Path>,
    ) -> Result<Vec<PathBuf>, Error> {
        let out_dir = out_dir.as_ref();
        let mut outputs = self.generate_python(files)?;
        for (path, text) in &mut outputs {
            if path.ends_with("__init__.py") {
                if let Ok(existing) = std::fs::read_to_string(out_dir.join(&*path)) {
                    *text = python_gen::merge_init(&existing, text);
                }
            }
        }
        write_all(out_dir, outputs)
    }

    /// The C# of `files`, without writing it: one `(file name, text)` per IDL file read
    /// (included ones too), each with its types, their CDR code (over
    /// `bindings/csharp/FerroDDS/Cdr.cs`) and a `<Name>TypeSupport` per struct.
    pub fn generate_csharp<P: AsRef<Path>>(
        &self,
        files: &[P],
    ) -> Result<Vec<(String, String)>, Error> {
        let spec = self.parse(files)?;
        csharp_gen::generate(&spec, self.ros2_type_names)
    }

    /// Writes the C# of `files` into `out_dir`: `<stem>.cs` per IDL file read. Returns the
    /// paths written.
    pub fn compile_csharp<P: AsRef<Path>>(
        &self,
        files: &[P],
        out_dir: impl AsRef<Path>,
    ) -> Result<Vec<PathBuf>, Error> {
        let outputs = self.generate_csharp(files)?;
        write_all(out_dir.as_ref(), outputs)
    }
}

fn write_all(out_dir: &Path, outputs: Vec<(String, String)>) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for (name, text) in outputs {
        let path = out_dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        // Unchanged files are left alone, so that cargo does not rebuild what includes them.
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, text).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
        }
        written.push(path);
    }
    Ok(written)
}

/// Parses one IDL text (named `name` in errors; `#include` looks beside it and on no
/// include path).
pub fn parse_str(name: &str, text: &str) -> Result<ast::Specification, Error> {
    Compiler::new().source(name, text).parse(&[name])
}
