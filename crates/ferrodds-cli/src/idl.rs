//! `ferrodds idl`: the IDL compiler (`ferrodds-idl`) on the command line, as Cyclone DDS's
//! `idlc` is: `ferrodds idl -I DIR --lang rust|python|csharp -o OUTDIR FILE.idl...`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// The language `ferrodds idl` writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lang {
    /// One `.rs` per IDL file with `#[derive(Cdr)]` types, and `idl_types.rs` with all.
    Rust,
    /// Python packages over `ferrodds.idl`, as cyclonedds-python's `idlc -l py` lays them out.
    Python,
    /// One `.cs` per IDL file: classes and type supports for the C# binding.
    Csharp,
}

/// The arguments of `ferrodds idl`.
#[derive(Args, Debug)]
pub(crate) struct IdlArgs {
    /// A directory `#include` searches (repeatable; searched in order).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    include: Vec<PathBuf>,
    /// The language to write.
    #[arg(short, long, value_enum)]
    lang: Lang,
    /// The directory to write into (created if missing).
    #[arg(short, long, value_name = "OUTDIR", default_value = ".")]
    out: PathBuf,
    /// Register types as ROS 2 names them on the wire (`pkg::msg::dds_::T_`).
    #[arg(long)]
    ros2_names: bool,
    /// The path generated Rust reaches ferrodds-cdr by (`::ferrodds::ferrodds_cdr` for a
    /// crate that depends on `ferrodds` only).
    #[arg(long, value_name = "PATH", default_value = "::ferrodds_cdr")]
    cdr_crate: String,
    /// The IDL files.
    #[arg(required = true, value_name = "FILE.idl")]
    files: Vec<PathBuf>,
}

/// Compiles the files; prints the paths written. An error is one line: the file, line and
/// column, and what was expected.
pub(crate) fn run(args: &IdlArgs) -> Result<(), String> {
    let mut compiler = ferrodds_idl::Compiler::new()
        .ros2_type_names(args.ros2_names)
        .cdr_crate(args.cdr_crate.clone());
    for dir in &args.include {
        compiler = compiler.include_dir(dir);
    }
    let written = match args.lang {
        Lang::Rust => compiler.compile_rust(&args.files, &args.out),
        Lang::Python => compiler.compile_python(&args.files, &args.out),
        Lang::Csharp => compiler.compile_csharp(&args.files, &args.out),
    }
    .map_err(|e| e.to_string())?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}
