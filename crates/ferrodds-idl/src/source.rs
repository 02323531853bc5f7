//! The files of one compilation and compact positions in them.

use crate::error::Location;
use std::path::{Path, PathBuf};

/// Where a token starts: an index into [`Sources`], line and column (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct Pos {
    pub(crate) file: u32,
    pub(crate) line: u32,
    pub(crate) column: u32,
}

impl Pos {
    pub(crate) fn start(file: u32) -> Pos {
        Pos {
            file,
            line: 1,
            column: 1,
        }
    }
}

/// The files read so far, by index.
#[derive(Debug, Default, Clone)]
pub(crate) struct Sources {
    files: Vec<PathBuf>,
}

impl Sources {
    pub(crate) fn add(&mut self, path: PathBuf) -> u32 {
        self.files.push(path);
        // Fewer than 2^32 files: each costs a read of the disk.
        u32::try_from(self.files.len() - 1).unwrap_or(u32::MAX)
    }

    pub(crate) fn path(&self, file: u32) -> &Path {
        self.files
            .get(file as usize)
            .map(PathBuf::as_path)
            .unwrap_or_else(|| Path::new("<input>"))
    }

    pub(crate) fn location(&self, pos: Pos) -> Location {
        Location {
            file: self.path(pos.file).to_path_buf(),
            line: pos.line,
            column: pos.column,
        }
    }

    pub(crate) fn into_paths(self) -> Vec<PathBuf> {
        self.files
    }

    #[cfg(test)]
    pub(crate) fn for_tests() -> Sources {
        Sources {
            files: vec![PathBuf::from("test.idl")],
        }
    }
}
