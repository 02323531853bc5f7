//! Writes the seed corpus of `cdr_decode` into `fuzz/seeds/cdr_decode/`:
//! `cargo run --manifest-path fuzz/Cargo.toml --example write_seeds`.

fn main() -> std::io::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/cdr_decode");
    std::fs::create_dir_all(&dir)?;
    for (name, bytes) in ferrodds_fuzz::seeds() {
        // Every seed must itself pass the target.
        ferrodds_fuzz::cdr_decode(&bytes);
        std::fs::write(dir.join(&name), &bytes)?;
        println!("{name}: {} bytes", bytes.len());
    }
    Ok(())
}
