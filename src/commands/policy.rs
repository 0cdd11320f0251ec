//! `modelgate policy check | init | baseline`.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{Context, Result, bail};
use modelgate::{ScanOptions, Scanner, policy};

use crate::cli::{BaselineArgs, PolicyCommand};

/// Runs a `policy` subcommand.
pub fn run(cmd: PolicyCommand) -> Result<u8> {
    match cmd {
        PolicyCommand::Baseline(args) => baseline(args),
        PolicyCommand::Check { file } => {
            let policy = policy::load_file(&file)?;
            let mut w = super::process::output(None)?;
            policy::render_effective(&policy, &mut w)?;
            w.flush()?;
            Ok(0)
        }
        PolicyCommand::Init {
            preset,
            output,
            force,
        } => {
            let Some(text) = policy::starter_toml(&preset) else {
                let names: Vec<&str> = policy::PRESETS.iter().map(|(n, _)| *n).collect();
                bail!("unknown preset `{preset}` (presets: {})", names.join(", "));
            };
            if output.as_os_str() == "-" {
                let mut w = super::process::output(None)?;
                w.write_all(text.as_bytes())?;
                w.flush()?;
                return Ok(0);
            }
            if !force && std::fs::symlink_metadata(&output).is_ok() {
                bail!(
                    "{} already exists (use --force to overwrite)",
                    output.display()
                );
            }
            std::fs::write(&output, text)
                .with_context(|| format!("cannot write {}", output.display()))?;
            super::process::status(&format!("wrote {} (preset {preset})", output.display()));
            Ok(0)
        }
    }
}

/// `policy baseline`: digest-bound exceptions for today's denied and warned findings.
fn baseline(args: BaselineArgs) -> Result<u8> {
    let root = &args.path;
    if std::fs::symlink_metadata(root).is_err() {
        bail!("path does not exist: {}", root.display());
    }
    let clock = super::process::clock()?;
    let policy = policy::locate(args.policy.as_deref(), root)?;
    let output = args.output.clone().unwrap_or_else(|| match &args.policy {
        Some(p) => p.clone(),
        None if root.is_dir() => root.join("modelgate.toml"),
        None => root.with_file_name("modelgate.toml"),
    });
    let to_stdout = output.as_os_str() == "-";
    let output_exists = !to_stdout && std::fs::symlink_metadata(&output).is_ok();
    if output_exists && !args.append {
        bail!(
            "{} already exists (use --append to add the exceptions to it)",
            output.display()
        );
    }
    // The text to extend: the output file itself with --append, else the policy in use (so a
    // new file keeps its settings), else nothing (a new policy on the built-in defaults).
    let (existing, source) = if output_exists {
        let text = std::fs::read_to_string(&output)
            .with_context(|| format!("cannot read {}", output.display()))?;
        (Some(text), policy::PolicySource::File(output.clone()))
    } else if let policy::PolicySource::File(p) = &policy.source {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        (Some(text), policy.source.clone())
    } else {
        (None, policy::PolicySource::File(output.clone()))
    };

    let options = ScanOptions {
        clock,
        ..ScanOptions::default()
    };
    let report = Scanner::new(policy, options).scan(std::slice::from_ref(root))?;
    let digests: BTreeMap<&str, &str> = report
        .files
        .iter()
        .filter_map(|f| Some((f.path.as_str(), f.sha256.as_deref()?)))
        .collect();
    let today = clock.today();
    let expires = today
        .checked_add(time::Duration::days(i64::from(args.expires_in)))
        .context("--expires-in is too far in the future")?;
    let baseline = policy::baseline::baseline(
        &report.findings,
        &|p| digests.get(p).map(|d| d.to_string()),
        existing.as_deref(),
        &source,
        today,
        expires,
    )?;

    if to_stdout {
        let mut w = super::process::output(None)?;
        w.write_all(baseline.text.as_bytes())?;
        w.flush()?;
    } else if !(output_exists && baseline.added.is_empty()) {
        std::fs::write(&output, &baseline.text)
            .with_context(|| format!("cannot write {}", output.display()))?;
    }
    let mut msg = format!(
        "{}: {} exception(s) added, expiring after {expires}",
        if to_stdout {
            "stdout".to_string()
        } else {
            output.display().to_string()
        },
        baseline.added.len()
    );
    if !baseline.already_listed.is_empty() {
        msg.push_str(&format!(
            "; {} already listed",
            baseline.already_listed.len()
        ));
    }
    if !baseline.not_covered.is_empty() {
        let codes: Vec<&str> = baseline.not_covered.iter().map(|r| r.code()).collect();
        msg.push_str(&format!(
            "; not coverable by an exception (repository-level or policy findings): {}",
            codes.join(", ")
        ));
    }
    super::process::status(&msg);
    Ok(0)
}
