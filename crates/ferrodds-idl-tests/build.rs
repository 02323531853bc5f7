//! Compiles the test IDLs of `ferrodds-idl` into `OUT_DIR`: `cyclone/` (shape.idl and the
//! Cyclone vector types), `ros2/` (the ROS 2 messages, IDL names), `ros2_wire/` (the same,
//! with ROS 2's wire names) and `kinds/` (every other construct: kinds.idl, wide.idl).

use std::path::{Path, PathBuf};

fn main() {
    let idl = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ferrodds-idl/tests/idl");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    println!("cargo:rerun-if-changed={}", idl.display());
    let ros2 = idl.join("ros2");
    let ros2_files: Vec<PathBuf> = ["Image", "PointCloud2", "JointState"]
        .iter()
        .map(|m| ros2.join(format!("sensor_msgs/msg/{m}.idl")))
        .collect();
    let runs = [
        (
            ferrodds_idl::Compiler::new(),
            vec![idl.join("shape.idl"), idl.join("vec.idl")],
            "cyclone",
        ),
        (
            ferrodds_idl::Compiler::new().include_dir(&ros2),
            ros2_files.clone(),
            "ros2",
        ),
        (
            ferrodds_idl::Compiler::new()
                .include_dir(&ros2)
                .ros2_type_names(true),
            ros2_files,
            "ros2_wire",
        ),
        (
            ferrodds_idl::Compiler::new().include_dir(&idl),
            vec![idl.join("kinds.idl"), idl.join("wide.idl")],
            "kinds",
        ),
    ];
    for (compiler, files, dir) in runs {
        // A build script reports failure by panicking; the message is the compiler's error,
        // with the IDL file, line and column.
        if let Err(e) = compiler.compile_rust(&files, out.join(dir)) {
            panic!("ferrodds-idl: {e}");
        }
    }
}
