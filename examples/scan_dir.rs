#![allow(clippy::disallowed_macros)] // an example prints its result
//! Library use: scan one or more directories with the built-in default policy and print each
//! finding and the verdict. `cargo run --example scan_dir -- examples/risky-model`

use std::path::PathBuf;

use modelgate::{ScanOptions, Scanner, policy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut roots: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if roots.is_empty() {
        roots.push(".".into());
    }
    let scanner = Scanner::new(policy::Policy::default(), ScanOptions::default());
    let report = scanner.scan(&roots)?;
    for f in &report.findings {
        println!(
            "{:<5} {} {}: {}",
            f.action.as_str(),
            f.rule.code(),
            f.path,
            f.message
        );
    }
    println!(
        "{} files, {} denied",
        report.summary.files, report.summary.denied
    );
    std::process::exit(i32::from(report.exit_code()));
}
