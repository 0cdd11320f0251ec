//! `modelgate scan [PATH]...`: the gate. One scan of every root, then the report, SARIF and
//! SBOM from that one result; the exit code comes from the report.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use modelgate::engine::{self, Stats};
use modelgate::inspect::read;
use modelgate::report::{self, OutputFormat, cyclonedx};
use modelgate::{ScanOptions, Scanner, hub, policy};

use crate::cli::{HashAlg, ScanArgs};

/// Scans, writes every requested output, and returns the report's exit code.
pub fn run(args: ScanArgs) -> Result<u8> {
    let remote = remote_target(&args)?;
    for p in args.paths.iter().filter(|_| remote.is_none()) {
        if !engine::exists(p) {
            bail!("path does not exist: {}", p.display());
        }
    }
    if args.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    let clock = super::clock()?;
    let first = args
        .paths
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    // A remote repository's own modelgate.toml is never trusted: the local project's applies.
    let policy_root = if remote.is_some() {
        PathBuf::from(".")
    } else {
        first
    };
    let mut policy = policy::locate(args.policy.as_deref(), &policy_root)?;
    apply_signing_args(&args, &mut policy.signing)?;
    let options = ScanOptions {
        excludes: args.exclude.clone(),
        jobs: args.jobs.unwrap_or_else(super::default_jobs),
        no_git: args.no_git,
        check_values: args.check_values,
        sha512: args.hashes.contains(&HashAlg::Sha512),
        block_size: args.block_size.unwrap_or(0),
        fail_on: args.fail_on.into(),
        progress: !args.quiet && io::stderr().is_terminal(),
        clock,
        cache: if args.no_cache {
            None
        } else {
            args.cache.clone()
        },
    };
    if args.verbose {
        super::status(&format!("sha-256 backend: {}", read::sha256_backend()));
    }
    let scanner = Scanner::new(policy, options);
    let (report, stats) = match &remote {
        Some(target) => {
            let opts = hub::client::ClientOptions::from_env(args.token_file.as_deref())?;
            let client = hub::client::Client::new(&opts)?;
            scanner.scan_remote(target, &client)?
        }
        None => scanner.scan_with_stats(&args.paths)?,
    };
    if !args.quiet {
        for note in &stats.cache_notes {
            super::status(&format!("modelgate: note: {note}"));
        }
    }

    let started = Instant::now();
    // Side outputs first: a CI job wants the SARIF and SBOM even when the gate fails.
    if let Some(path) = &args.sarif {
        let mut w = super::output(Some(path))?;
        report::sarif::render_with_category(&report, args.sarif_category.as_deref(), &mut w)?;
        w.flush()?;
    }
    if let Some(path) = &args.sbom {
        let mut authors = args.sbom_author.clone();
        if args.sbom_author_from_git {
            let root = args
                .paths
                .first()
                .cloned()
                .unwrap_or_else(|| PathBuf::from("."));
            let a = modelgate::provenance::git::head_author(&root).with_context(|| {
                format!(
                    "--sbom-author-from-git: no HEAD commit author for {}",
                    root.display()
                )
            })?;
            authors.push(a);
        }
        let opts = cyclonedx::SbomOptions {
            timestamp: Some(clock.now()),
            reproducible: Some(clock.is_reproducible()),
            supplier: args.sbom_supplier.clone(),
            supplier_url: args.sbom_supplier_url.clone(),
            authors,
            ..cyclonedx::SbomOptions::default()
        };
        let bom = cyclonedx::build(&report, &opts);
        let mut w = super::output(Some(path))?;
        cyclonedx::render_spec(&bom, args.sbom_format.into(), args.sbom_spec.into(), &mut w)
            .with_context(|| format!("cannot write the SBOM to {}", path.display()))?;
        w.flush()?;
    }
    let mut out = super::output(args.output.as_deref())?;
    match OutputFormat::from(args.format) {
        OutputFormat::Json => report::json::render(&report, &mut out)?,
        OutputFormat::Sarif => {
            report::sarif::render_with_category(&report, args.sarif_category.as_deref(), &mut out)?
        }
        OutputFormat::Markdown => report::markdown::render(&report, &mut out)?,
        OutputFormat::Text => {
            let color = args.output.is_none()
                && io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            report::text::render(&report, &mut out, report::text::TextOptions { color })?
        }
    }
    out.flush()?;
    if args.verbose {
        print_stats(&stats, started.elapsed());
    }
    Ok(report.exit_code())
}

/// `scan`'s signature flags on top of the policy's `[signing]` table: `--signature` names one
/// file (made absolute, since the policy's path is relative to the scan root), trust flags add
/// to the policy's trusted signers.
fn apply_signing_args(args: &ScanArgs, s: &mut policy::SigningOptions) -> Result<()> {
    let a = &args.signing;
    if let Some(sig) = &a.signature {
        if args.paths.len() > 1 {
            bail!("--signature names one file: scan one root with it, or set [signing] signature");
        }
        s.signature = std::path::absolute(sig)
            .with_context(|| format!("cannot resolve {}", sig.display()))?;
    }
    s.require |= a.require_signature;
    for k in &a.keys {
        match k.to_str().and_then(policy::key_fingerprint) {
            Some(fp) => s.key_fingerprints.push(fp),
            None => s.keys.push(k.clone()),
        }
    }
    s.certificate_chain
        .extend(a.certificate_chain.iter().cloned());
    let subject = match (&a.identity, &a.identity_regex) {
        (Some(exact), _) => Some((exact, false)),
        (None, Some(pattern)) => {
            modelgate::sign::SubjectMatch::regex(pattern)?;
            Some((pattern, true))
        }
        (None, None) => None,
    };
    if let (Some((subject, subject_regex)), Some(issuer)) = (subject, &a.issuer) {
        s.identities.push(policy::SigningIdentity {
            subject: subject.clone(),
            subject_regex,
            issuer: issuer.clone(),
        });
    }
    if a.trust_root.is_some() {
        s.trust_root = a.trust_root.clone();
    }
    Ok(())
}

/// The remote target, when the one path given is `hf://…` or a Hub URL. A remote target is
/// scanned on its own, and without the local-only options.
fn remote_target(args: &ScanArgs) -> Result<Option<hub::Target>> {
    let is_remote = |p: &PathBuf| p.to_str().is_some_and(hub::is_remote);
    if !args.paths.iter().any(is_remote) {
        return Ok(None);
    }
    if args.paths.len() != 1 {
        bail!("a remote target (hf://...) is scanned on its own: give it as the only path");
    }
    if args.cache.is_some() {
        bail!("--cache applies to local files only; it cannot be used with a remote target");
    }
    if !args.exclude.is_empty() {
        // Not silently ignored: a user excluding paths expects them unread.
        bail!("--exclude is not supported with a remote target yet");
    }
    let arg = args.paths[0].to_str().unwrap_or_default();
    match hub::parse_target(arg) {
        Some(t) => Ok(Some(t?)),
        None => bail!("not a remote target: {arg}"),
    }
}

/// `--verbose`: where the time went, stage by stage, and the read stage's throughput.
fn print_stats(s: &Stats, render: Duration) {
    let secs = |d: Duration| d.as_secs_f64();
    let read_secs = secs(s.read).max(1e-9);
    let inspect_cpu = s.read_cpu.saturating_sub(s.hash_cpu);
    for line in [
        format!("walk:       {:8.3} s", secs(s.walk)),
        format!(
            "read stage: {:8.3} s wall ({:.0} files/s, {:.1} MB/s); cpu {:.3} s = read+hash {:.3} s + inspect {:.3} s",
            secs(s.read),
            s.files as f64 / read_secs,
            s.bytes as f64 / read_secs / 1e6,
            secs(s.read_cpu),
            secs(s.hash_cpu),
            secs(inspect_cpu),
        ),
        format!(
            "provenance: {:8.3} s (repository checks, cards, git)",
            secs(s.provenance)
        ),
        format!("policy:     {:8.3} s", secs(s.policy)),
        format!("render:     {:8.3} s", secs(render)),
        format!(
            "files:      {} ({} bytes), {} from the cache",
            s.files, s.bytes, s.cache_hits
        ),
    ] {
        super::status(&line);
    }
}
