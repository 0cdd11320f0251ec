//! `modelgate inspect FILE`: one file's facts and findings, optionally its pickle opcodes.

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use modelgate::model::finding::Action;
use modelgate::model::format::{Format, Kind};
use modelgate::model::report::FileRecord;
use modelgate::{engine, inspect, policy, walk};
use serde_json::{Value, json};

use crate::cli::{InspectArgs, TextOrJson};

/// `modelgate inspect FILE`: one file's facts and findings.
pub fn run(args: InspectArgs) -> Result<u8> {
    let meta = std::fs::symlink_metadata(&args.file)
        .with_context(|| format!("cannot inspect {}", args.file.display()))?;
    if !meta.is_file() {
        bail!(
            "{} is not a regular file (inspect does not follow symlinks or open special files)",
            args.file.display()
        );
    }
    let dir = args
        .file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let clock = super::process::clock()?;
    let policy = policy::locate(args.policy.as_deref(), &dir)?;
    let cfg = engine::scan_config(&policy, args.check_values);
    let rel = args
        .file
        .file_name()
        .map(|n| walk::display_rel(Path::new(n)))
        .unwrap_or_default();
    // Hostile files are read on a thread with the scan workers' stack, not on the main thread.
    let scan = engine::on_worker_stack(|| {
        engine::scan_guarded(&rel, || {
            inspect::scan_file(&args.file, &rel, meta.len(), &cfg)
        })
    });
    let digest = scan.sha256.clone();
    let mut findings = policy.evaluate(scan.detections.clone(), &|_| digest.clone(), clock.today());
    findings.sort_by(engine::finding_order);
    let record = FileRecord {
        path: rel.clone(),
        size: scan.size,
        sha256: scan.sha256.clone(),
        sha512: None,
        kind: scan.kind.unwrap_or(Kind::Other),
        format: scan.format.unwrap_or(Format::Unknown),
        facts: scan.facts.clone(),
    };
    let mut w = super::process::output(None)?;
    match args.format {
        TextOrJson::Json => {
            serde_json::to_writer_pretty(&mut w, &json!({"file": record, "findings": findings}))?;
            writeln!(w)?;
        }
        TextOrJson::Text => {
            use modelgate::report::text::sanitize;
            writeln!(w, "file:   {}", sanitize(&record.path))?;
            writeln!(w, "size:   {}", record.size)?;
            writeln!(w, "sha256: {}", record.sha256.as_deref().unwrap_or("-"))?;
            writeln!(w, "format: {}", record.format.as_str())?;
            writeln!(w, "kind:   {}", record.kind.as_str())?;
            for (k, v) in &record.facts {
                let shown = match v {
                    Value::String(s) => s.clone(),
                    other => serde_json::to_string_pretty(other)?,
                };
                writeln!(w, "{k}: {}", sanitize_block(&shown))?;
            }
            if findings.is_empty() {
                writeln!(w, "findings: none")?;
            }
            for f in &findings {
                writeln!(
                    w,
                    "{} {} {} [{}]: {}",
                    f.action.as_str(),
                    f.rule.code(),
                    f.name,
                    f.severity.as_str(),
                    sanitize(&f.message)
                )?;
                if let Some(off) = f.location.offset {
                    writeln!(w, "    at byte {off}")?;
                }
                if let Some(m) = &f.location.member {
                    writeln!(w, "    in member {}", sanitize(m))?;
                }
            }
        }
    }
    if args.disassemble {
        disassemble(&args.file, &inspect::pickle_limits(&cfg), &mut w)?;
    }
    w.flush()?;
    let code = u8::from(findings.iter().any(|f| f.action == Action::Deny));
    Ok(code)
}

/// Sanitises a multi-line block line by line (pretty JSON keeps its shape, file content cannot
/// inject terminal escapes).
fn sanitize_block(s: &str) -> String {
    s.lines()
        .map(modelgate::report::text::sanitize)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `inspect --disassemble`: an opcode listing of every pickle in the file, like
/// `pickletools.dis`, bounded by the policy's pickle limits, as the analysis is.
fn disassemble(path: &Path, limits: &inspect::pickle::Limits, w: &mut dyn Write) -> Result<()> {
    let file =
        inspect::open_regular(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut r = io::BufReader::with_capacity(1 << 16, file);
    writeln!(w, "\npickle disassembly:")?;
    let mut w = w;
    inspect::pickle::disassemble(&mut r, &mut w, limits)?;
    Ok(())
}
