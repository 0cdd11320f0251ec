//! Library use: crawl a directory and print each file's SHA-256, format and the rules its
//! inspection raised, without a policy. `cargo run --example scan_dir -- examples/risky-model`

use std::io::Write;
use std::path::PathBuf;

use modelgate::inspect::{self, ScanConfig};
use modelgate::walk::{self, EntryKind, WalkOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    let opts = WalkOptions {
        excludes: walk::DEFAULT_EXCLUDES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        max_files: 1_000_000,
        max_depth: 256,
        containment: None,
        hidden_dirs: Vec::new(),
    };
    let cfg = ScanConfig::default();
    let mut out = std::io::stdout().lock();
    for entry in walk::walk(&root, &opts)?.entries {
        let EntryKind::File { open, size, .. } = &entry.kind else {
            writeln!(out, "{:<64}  {:<12}  {}", "-", "not-opened", entry.rel)?;
            continue;
        };
        let scan = inspect::scan_file(open, &entry.rel, *size, &cfg);
        let rules: Vec<&str> = scan.detections.iter().map(|d| d.rule.code()).collect();
        writeln!(
            out,
            "{:<64}  {:<12}  {}  {}",
            scan.sha256.as_deref().unwrap_or("-"),
            scan.format.map(|f| f.as_str()).unwrap_or("unknown"),
            entry.rel,
            rules.join(",")
        )?;
    }
    Ok(())
}
