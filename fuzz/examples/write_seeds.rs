//! Writes the seed corpora of `cdr_decode` and `json_text` into `fuzz/seeds/`:
//! `cargo run --manifest-path fuzz/Cargo.toml --example write_seeds`.

/// A corpus: its target's name, its seeds, and the target itself.
type Corpus = (&'static str, Vec<(String, Vec<u8>)>, fn(&[u8]));

fn main() -> std::io::Result<()> {
    let corpora: [Corpus; 2] = [
        (
            "cdr_decode",
            ferrodds_fuzz::seeds(),
            ferrodds_fuzz::cdr_decode,
        ),
        (
            "json_text",
            ferrodds_fuzz::json_seeds(),
            ferrodds_fuzz::json_text,
        ),
    ];
    for (target, seeds, run) in corpora {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("seeds")
            .join(target);
        std::fs::create_dir_all(&dir)?;
        for (name, bytes) in seeds {
            // Every seed must itself pass the target.
            run(&bytes);
            std::fs::write(dir.join(&name), &bytes)?;
            println!("{target}/{name}: {} bytes", bytes.len());
        }
    }
    Ok(())
}
