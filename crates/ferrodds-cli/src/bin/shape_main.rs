//! `shape_main`: `ferrodds shapes` under the name the OMG DDS interoperability suite
//! (github.com/omg-dds/dds-rtps) runs, taking the suite's options directly:
//! `shape_main -P -t Square -d 0 -c BLUE`.

#[path = "../shapes/mod.rs"]
mod shapes;

use std::process::ExitCode;

fn main() -> ExitCode {
    let command = shapes::ShapesCommand {
        args: std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
    };
    match shapes::run(&command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("shape_main: {e}");
            ExitCode::FAILURE
        }
    }
}
