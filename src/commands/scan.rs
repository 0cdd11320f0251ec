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
    if let Some(list) = &args.repos_from {
        return run_batch(&args, list);
    }
    let remote = remote_target(&args)?;
    if remote.is_none() && args.remote == crate::cli::RemoteArg::Headers {
        bail!("--remote headers applies to remote targets (hf://...) only");
    }
    for p in args.paths.iter().filter(|_| remote.is_none()) {
        if !engine::exists(p) {
            bail!("path does not exist: {}", p.display());
        }
    }
    if args.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    let clock = super::process::clock()?;
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
        jobs: args.jobs.unwrap_or_else(super::process::default_jobs),
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
        super::process::status(&format!("sha-256 backend: {}", read::sha256_backend()));
    }
    let scanner = Scanner::new(policy, options);
    let (report, stats) = match &remote {
        Some(target) => {
            let opts = hub::client::ClientOptions::from_env(args.token_file.as_deref())?;
            let client = hub::client::Client::new(&opts)?;
            scanner.scan_remote_mode(target, &client, args.remote.into())?
        }
        None => scanner.scan_with_stats(&args.paths)?,
    };
    if !args.quiet {
        for note in &stats.cache_notes {
            super::process::status(&format!("modelgate: note: {note}"));
        }
    }

    let started = Instant::now();
    // Side outputs first: a CI job wants the SARIF and SBOM even when the gate fails.
    if let Some(path) = &args.sarif {
        let mut w = super::process::output(Some(path))?;
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
            version: args.sbom_version.clone(),
            authors,
            ..cyclonedx::SbomOptions::default()
        };
        let bom = cyclonedx::build(&report, &opts);
        let mut w = super::process::output(Some(path))?;
        cyclonedx::render_spec(&bom, args.sbom_format.into(), args.sbom_spec.into(), &mut w)
            .with_context(|| format!("cannot write the SBOM to {}", path.display()))?;
        w.flush()?;
    }
    let mut out = super::process::output(args.output.as_deref())?;
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

/// Longest `--repos-from` list read.
const MAX_LIST_BYTES: u64 = 16 << 20;

/// `--repos-from FILE [--shard K/N]`: scans each remote target of the list (its slice of it),
/// one JSON report per line. A target that cannot be scanned is an error line
/// (`{"target": …, "error": …}`) and makes the batch exit 2 once the others have run.
fn run_batch(args: &ScanArgs, list: &std::path::Path) -> Result<u8> {
    if args.paths.len() != 1 || args.paths[0] != std::path::Path::new(".") {
        bail!("--repos-from names the targets: give no paths with it");
    }
    if args.sbom.is_some() || args.sarif.is_some() {
        bail!("--sbom and --sarif name one file: they cannot be used with --repos-from");
    }
    if !matches!(
        OutputFormat::from(args.format),
        OutputFormat::Json | OutputFormat::Text
    ) {
        bail!("--repos-from writes JSON Lines: use --format json");
    }
    if args.cache.is_some() || !args.exclude.is_empty() {
        bail!("--cache and --exclude apply to local files only");
    }
    if args.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    let text = {
        use std::io::Read;
        let f = std::fs::File::open(list)
            .with_context(|| format!("cannot read the target list {}", list.display()))?;
        let mut buf = String::new();
        f.take(MAX_LIST_BYTES + 1)
            .read_to_string(&mut buf)
            .with_context(|| format!("cannot read the target list {}", list.display()))?;
        if buf.len() as u64 > MAX_LIST_BYTES {
            bail!(
                "the target list {} is over {MAX_LIST_BYTES} bytes",
                list.display()
            );
        }
        buf
    };
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    let targets = shard_targets(&text, shard);
    let clock = super::process::clock()?;
    // The local project's policy judges every target (a remote repository's own is never read).
    let mut policy = policy::locate(args.policy.as_deref(), std::path::Path::new("."))?;
    apply_signing_args(args, &mut policy.signing)?;
    let options = ScanOptions {
        excludes: Vec::new(),
        jobs: args.jobs.unwrap_or_else(super::process::default_jobs),
        no_git: true,
        check_values: args.check_values,
        sha512: args.hashes.contains(&HashAlg::Sha512),
        block_size: args.block_size.unwrap_or(0),
        fail_on: args.fail_on.into(),
        progress: false,
        clock,
        cache: None,
    };
    let scanner = Scanner::new(policy, options);
    let opts = hub::client::ClientOptions::from_env(args.token_file.as_deref())?;
    let client = hub::client::Client::new(&opts)?;
    let mut out = super::process::output(args.output.as_deref())?;
    let mut worst = 0u8;
    let mut failed = 0usize;
    for arg in &targets {
        let result = match hub::parse_target(arg) {
            Some(Ok(t)) => scanner
                .scan_remote_mode(&t, &client, args.remote.into())
                .map_err(anyhow::Error::from),
            Some(Err(e)) => Err(e.into()),
            None => Err(anyhow::anyhow!("not a remote target (hf://ns/name[@rev])")),
        };
        match result {
            Ok((report, _)) => {
                worst = worst.max(report.exit_code());
                report::json::render_line(&report, &mut out)?;
            }
            Err(e) => {
                failed += 1;
                if !args.quiet {
                    super::process::status(&format!("modelgate: {arg}: {e:#}"));
                }
                let line = serde_json::json!({"target": arg, "error": format!("{e:#}")});
                writeln!(out, "{line}")?;
            }
        }
        out.flush()?;
    }
    if failed > 0 {
        return Ok(2);
    }
    Ok(worst)
}

/// `K/N` with 1 <= K <= N.
fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let parsed = s
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((k, n)) if n >= 1 && (1..=n).contains(&k) => Ok((k, n)),
        _ => bail!("--shard takes K/N with 1 <= K <= N (e.g. 2/4), not `{s}`"),
    }
}

/// The list's targets (trimmed; blank lines and `#` comments skipped; duplicates dropped, the
/// first kept), then slice K of N: the target at index i belongs to slice i mod N + 1. The
/// assignment depends only on the list, so every job of a matrix computes the same slices.
fn shard_targets(text: &str, shard: Option<(usize, usize)>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let unique = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter(|l| seen.insert(l.to_string()));
    match shard {
        Some((k, n)) => unique
            .enumerate()
            .filter(|(i, _)| i % n == k - 1)
            .map(|(_, l)| l.to_string())
            .collect(),
        None => unique.map(str::to_string).collect(),
    }
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
        super::process::status(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_deduplicated_list() {
        let list = "# fleet\nhf://a/x\n\nhf://a/y\nhf://a/x\n  hf://a/z  \nhf://a/w\n";
        assert_eq!(
            shard_targets(list, None),
            ["hf://a/x", "hf://a/y", "hf://a/z", "hf://a/w"]
        );
        assert_eq!(shard_targets(list, Some((1, 2))), ["hf://a/x", "hf://a/z"]);
        assert_eq!(shard_targets(list, Some((2, 2))), ["hf://a/y", "hf://a/w"]);
        let all: usize = (1..=3)
            .map(|k| shard_targets(list, Some((k, 3))).len())
            .sum();
        assert_eq!(all, 4);
    }

    #[test]
    fn shard_must_be_k_of_n() {
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        for bad in ["0/4", "5/4", "1/0", "x", "1/"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
