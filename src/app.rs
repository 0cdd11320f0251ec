//! Wires the stages together: the only module that knows them all.
//!
//! `scan`: policy -> walk -> inspect (parallel, one read per file) -> repository checks ->
//! provenance -> policy evaluation -> report. Exit codes: 0 nothing denied, 1 denied (or a
//! `verify` mismatch), 2 the tool could not do its job.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use crate::classify::{Format, Kind};
use crate::cli::{
    BaselineArgs, Cli, Command, HashAlg, InspectArgs, PolicyCommand, ScanArgs, TextOrJson,
    VerifyArgs,
};
use crate::finding::{Detection, Finding};
use crate::inspect::{self, FileScan, Limits, ScanConfig};
use crate::policy::{self, Policy};
use crate::report::{self, FileRecord, OutputFormat, PolicyInfo, Report, Settings, ToolInfo};
use crate::repository;
use crate::rules::{RuleId, RuleInfo};
use crate::walk::{self, EntryKind, WalkOptions};

/// Runs a parsed command line. Returns the process exit code; errors are the tool's own failures
/// (exit 2), reported by `main`.
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Scan(args) => scan(args),
        Command::Rules(args) => rules(args.format),
        Command::Inspect(args) => inspect_one(args),
        Command::Policy(cmd) => policy_command(cmd),
        Command::Explain(args) => explain(&args.rule),
        Command::Verify(args) => verify(args),
    }
}

fn stdout_or_file(path: Option<&Path>) -> Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) => Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    })
}

fn rules(format: TextOrJson) -> Result<u8> {
    let mut w = stdout_or_file(None)?;
    match format {
        TextOrJson::Json => {
            let all: Vec<RuleInfo> = RuleId::ALL.iter().map(|r| RuleInfo::from(*r)).collect();
            serde_json::to_writer_pretty(&mut w, &all)?;
            writeln!(w)?;
        }
        TextOrJson::Text => {
            for r in RuleId::ALL {
                writeln!(
                    w,
                    "{:<8} {:<26} {:<9} {}",
                    r.code(),
                    r.name(),
                    r.default_severity().as_str(),
                    r.summary()
                )?;
            }
        }
    }
    w.flush()?;
    Ok(0)
}

/// The date used for exception expiry: `SOURCE_DATE_EPOCH` when set (reproducible reports),
/// otherwise today (UTC).
pub fn today() -> time::Date {
    now().date()
}

/// The timestamp used in reports and SBOMs: `SOURCE_DATE_EPOCH` when set, else the clock.
pub fn now() -> time::OffsetDateTime {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .and_then(|secs| time::OffsetDateTime::from_unix_timestamp(secs).ok())
        .unwrap_or_else(time::OffsetDateTime::now_utc)
}

fn policy_command(cmd: PolicyCommand) -> Result<u8> {
    match cmd {
        PolicyCommand::Check { file } => {
            let policy = policy::load_file(&file).map_err(anyhow::Error::from)?;
            let mut w = stdout_or_file(None)?;
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
                let mut w = stdout_or_file(None)?;
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
            eprintln_quiet(&format!("wrote {} (preset {preset})", output.display()));
            Ok(0)
        }
        PolicyCommand::Baseline(args) => policy_baseline(args),
    }
}

// ---- `policy baseline` (self-contained: scan one root as `scan` would, hand the findings to
// policy::baseline, write the text it returns).

fn policy_baseline(args: BaselineArgs) -> Result<u8> {
    let root = &args.path;
    if std::fs::symlink_metadata(root).is_err() {
        bail!("path does not exist: {}", root.display());
    }
    let policy = load_policy(args.policy.as_deref(), root)?;
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

    let mut excludes: Vec<String> = walk::DEFAULT_EXCLUDES
        .iter()
        .map(|s| s.to_string())
        .collect();
    excludes.extend(policy.scan.exclude.iter().cloned());
    let plan = ScanPlan {
        max_files: policy.limit("max_files").min(u64::MAX - 1),
        max_depth: policy.limit("max_depth").min(1 << 16) as usize,
        cfg: scan_config(&policy, false),
        policy,
        excludes,
        jobs: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        no_git: false,
        fail_on: report::FailOn::Deny,
        progress: false,
    };
    let report = scan_root(root, &plan)?;
    let digests: BTreeMap<&str, &str> = report
        .files
        .iter()
        .filter_map(|f| Some((f.path.as_str(), f.sha256.as_deref()?)))
        .collect();
    let today = today();
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
        let mut w = stdout_or_file(None)?;
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
    eprintln_quiet(&msg);
    Ok(0)
}

fn explain(rule: &str) -> Result<u8> {
    let Some(id) = RuleId::lookup(rule) else {
        match RuleId::suggest(rule) {
            Some(s) => bail!("unknown rule `{rule}`; did you mean `{s}`?"),
            None => bail!("unknown rule `{rule}` (see `modelgate rules`)"),
        }
    };
    let mut w = stdout_or_file(None)?;
    policy::explain(id, &mut w)?;
    w.flush()?;
    Ok(0)
}

/// Writes a status line to stderr (the only place app.rs talks to the terminal directly).
fn eprintln_quiet(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "{msg}");
}

/// SHA-256 of the policy text that produced a report.
fn policy_digest(policy: &Policy) -> String {
    use sha2::Digest;
    let text: Vec<u8> = match &policy.source {
        policy::PolicySource::File(p) => std::fs::read(p).unwrap_or_default(),
        policy::PolicySource::Builtin(name) => policy::PRESETS
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_bytes().to_vec())
            .unwrap_or_default(),
    };
    crate::finding::hex(&sha2::Sha256::digest(&text))
}

/// Finds the policy: `--policy FILE`, else `modelgate.toml` at the scan root, else the built-in
/// default.
fn load_policy(explicit: Option<&Path>, root: &Path) -> Result<Policy> {
    if let Some(p) = explicit {
        return policy::load_file(p).map_err(anyhow::Error::from);
    }
    let dir = if root.is_dir() {
        root.to_path_buf()
    } else {
        root.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let candidate = dir.join("modelgate.toml");
    // Only a regular file counts: a FIFO or a symlink out of the repository must not be read.
    // The file sits in the tree being scanned, so it is bounded like any scanned file.
    if let Ok(meta) = std::fs::symlink_metadata(&candidate)
        && meta.is_file()
    {
        if meta.len() > MAX_POLICY_BYTES {
            bail!(
                "{} is {} bytes, larger than any policy needs ({MAX_POLICY_BYTES} bytes at most)",
                candidate.display(),
                meta.len()
            );
        }
        return policy::load_file(&candidate).map_err(anyhow::Error::from);
    }
    policy::builtin("default").context("built-in default policy missing")
}

/// Largest `modelgate.toml` read from a scanned tree.
const MAX_POLICY_BYTES: u64 = 1 << 20;

fn limits_from(policy: &Policy) -> Limits {
    // Every name below is in `policy::LIMITS`, so `limit` never falls back to its fail-closed 0.
    let get = |name: &str| policy.limit(name);
    Limits {
        max_file_bytes: get("max_file_bytes"),
        safetensors_header_bytes: get("safetensors_header_bytes"),
        pickle_opcodes: get("pickle_opcodes"),
        pickle_memo: get("pickle_memo"),
        pickle_string_bytes: get("pickle_string_bytes"),
        archive_depth: get("archive_depth"),
        archive_members: get("archive_members"),
        archive_member_bytes: get("archive_member_bytes"),
        archive_total_bytes: get("archive_total_bytes"),
        archive_ratio: get("archive_ratio"),
        json_depth: get("json_depth"),
        json_bytes: get("json_bytes"),
        yaml_bytes: get("yaml_bytes"),
        code_file_bytes: get("code_file_bytes"),
        gguf_kv_count: get("gguf_kv_count"),
        gguf_tensor_count: get("gguf_tensor_count"),
        gguf_metadata_bytes: get("gguf_metadata_bytes"),
        onnx_depth: get("onnx_depth"),
    }
}

/// What the inspectors take from the policy (and `--check-values`).
fn scan_config(policy: &Policy, check_values: bool) -> ScanConfig {
    ScanConfig {
        check_values: check_values || policy.safetensors.check_values,
        pickle_extra: crate::knowledge::ExtraLists::from_policy(
            &policy.pickle.safe_globals,
            &policy.pickle.dangerous_globals,
        ),
        pinned_revisions: policy
            .source_code
            .pinned_revisions
            .iter()
            .cloned()
            .collect(),
        limits: limits_from(policy),
        ..ScanConfig::default()
    }
}

/// Everything `scan` needs, validated.
struct ScanPlan {
    policy: Policy,
    cfg: ScanConfig,
    excludes: Vec<String>,
    jobs: usize,
    no_git: bool,
    fail_on: report::FailOn,
    max_files: u64,
    max_depth: usize,
    progress: bool,
}

fn scan(args: ScanArgs) -> Result<u8> {
    for p in &args.paths {
        if std::fs::symlink_metadata(p).is_err() {
            bail!("path does not exist: {}", p.display());
        }
    }
    let first = args
        .paths
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    let policy = load_policy(args.policy.as_deref(), &first)?;
    let mut excludes: Vec<String> = walk::DEFAULT_EXCLUDES
        .iter()
        .map(|s| s.to_string())
        .collect();
    excludes.extend(policy.scan.exclude.iter().cloned());
    excludes.extend(args.exclude.iter().cloned());
    let cfg = ScanConfig {
        sha512: args.hashes.contains(&HashAlg::Sha512),
        block_size: args.block_size.unwrap_or(0),
        ..scan_config(&policy, args.check_values)
    };
    let plan = ScanPlan {
        max_files: policy.limit("max_files").min(u64::MAX - 1),
        max_depth: policy.limit("max_depth").min(1 << 16) as usize,
        policy,
        cfg,
        excludes,
        jobs: args.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        }),
        no_git: args.no_git,
        fail_on: args.fail_on,
        progress: !args.quiet && io::stderr().is_terminal(),
    };
    if args.verbose {
        let backend = inspect::read::sha256_backend();
        eprintln_quiet(&format!("sha-256 backend: {backend}"));
    }
    if plan.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let mut reports = Vec::new();
    for root in &args.paths {
        reports.push(scan_root(root, &plan)?);
    }
    let report = merge_reports(reports, &args.paths);

    // Side outputs first: a CI job wants the SARIF and SBOM even when the gate fails.
    if let Some(path) = &args.sarif {
        let mut w = stdout_or_file(Some(path))?;
        report::sarif::render(&report, &mut w)?;
        w.flush()?;
    }
    if let Some(path) = &args.sbom {
        let bom = report::cyclonedx::build(&report, &report::cyclonedx::SbomOptions::default());
        let mut w = stdout_or_file(Some(path))?;
        report::cyclonedx::render(&bom, args.sbom_format, &mut w)
            .with_context(|| format!("cannot write the SBOM to {}", path.display()))?;
        w.flush()?;
    }
    let mut out = stdout_or_file(args.output.as_deref())?;
    match args.format {
        OutputFormat::Json => report::json::render(&report, &mut out)?,
        OutputFormat::Sarif => report::sarif::render(&report, &mut out)?,
        OutputFormat::Markdown => report::markdown::render(&report, &mut out)?,
        OutputFormat::Text => {
            let color = args.output.is_none()
                && io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            report::text::render(&report, &mut out, report::text::TextOptions { color })?
        }
    }
    out.flush()?;
    Ok(report.exit_code())
}

/// Several roots in one run: paths are prefixed with the root as given.
fn merge_reports(mut reports: Vec<Report>, roots: &[PathBuf]) -> Report {
    if reports.len() == 1 {
        return reports.remove(0);
    }
    // A file given as a root is reported by its own name: prefix with its directory.
    let prefix_of = |root: &PathBuf| {
        if root.is_file() {
            root.parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        } else {
            root.display().to_string()
        }
    };
    let mut merged = reports.remove(0);
    prefix_paths(
        &mut merged,
        &roots.first().map(prefix_of).unwrap_or_default(),
    );
    for (r, root) in reports.into_iter().zip(roots.iter().skip(1)) {
        let mut r = r;
        prefix_paths(&mut r, &prefix_of(root));
        merged.files.extend(r.files);
        merged.findings.extend(r.findings);
    }
    merged.root = roots
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    merged.files.sort_by(|a, b| a.path.cmp(&b.path));
    merged.findings.sort_by(finding_order);
    merged.summarize();
    merged
}

fn prefix_paths(r: &mut Report, root: &str) {
    let root = root.trim_end_matches('/');
    let join = |p: &str| {
        if root.is_empty() {
            p.to_string()
        } else if p.is_empty() {
            root.to_string()
        } else {
            format!("{root}/{p}")
        }
    };
    for f in &mut r.files {
        f.path = join(&f.path);
    }
    for f in &mut r.findings {
        f.path = join(&f.path);
    }
}

/// Deterministic order of findings: path, rule, location, message.
pub fn finding_order(a: &Finding, b: &Finding) -> std::cmp::Ordering {
    (&a.path, a.rule, &a.location, &a.message, &a.fingerprint).cmp(&(
        &b.path,
        b.rule,
        &b.location,
        &b.message,
        &b.fingerprint,
    ))
}

/// Scans files in parallel, largest first (so one huge shard does not finish last alone), and
/// returns results in input order. Output is identical for any thread count.
fn scan_parallel(
    units: &[(PathBuf, String, u64)],
    cfg: &ScanConfig,
    jobs: usize,
    progress: bool,
) -> Result<Vec<FileScan>> {
    let total_bytes = units.iter().map(|u| u.2).fold(0u64, u64::saturating_add);
    let bar = crate::progress::Progress::new(units.len() as u64, total_bytes, progress);
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| units[b].2.cmp(&units[a].2).then(a.cmp(&b)));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<FileScan>>> = Mutex::new(vec![None; units.len()]);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start worker threads")?;
    pool.scope(|s| {
        for _ in 0..jobs {
            s.spawn(|_| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&idx) = order.get(i) else { break };
                    let (open, rel, size) = &units[idx];
                    let scan = scan_guarded(rel, || inspect::scan_file(open, rel, *size, cfg));
                    bar.file_done(*size);
                    // A poisoned lock still holds every result stored so far; keep storing.
                    let mut r = results.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Some(slot) = r.get_mut(idx) {
                        *slot = Some(scan);
                    }
                }
            });
        }
    });
    bar.finish();
    let results = results.into_inner().unwrap_or_else(PoisonError::into_inner);
    Ok(results.into_iter().map(Option::unwrap_or_default).collect())
}

/// Runs one file's scan so that a panic in it becomes a `SCAN001 unreadable-file` detection for
/// that file and the other files are still scanned. This is defence in depth, not the
/// error-handling strategy: inspectors turn malformed input into findings and must not panic;
/// a panic caught here is a bug to fix.
fn scan_guarded(rel: &str, scan: impl FnOnce() -> FileScan) -> FileScan {
    // AssertUnwindSafe: the closure's result is discarded on panic and nothing it borrowed
    // (the file path, the shared read-only config) is left half-updated.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(scan)) {
        Ok(scan) => scan,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let mut out = FileScan::default();
            out.detections.push(
                Detection::new(
                    RuleId::UnreadableFile,
                    rel,
                    "panic",
                    "internal error while inspecting this file; it was not fully scanned",
                )
                .with("error", what),
            );
            out
        }
    }
}

fn scan_root(root: &Path, plan: &ScanPlan) -> Result<Report> {
    // Inside a Hugging Face cache, snapshot files are symlinks into the repository's blobs/:
    // widen the symlink containment to the repository and list blobs through their snapshots.
    let hf = crate::provenance::hfcache::detect(root);
    let (containment, hidden_dirs) = match &hf {
        Some(cache) => hf_layout(root, cache),
        None => (None, Vec::new()),
    };
    let walk_opts = WalkOptions {
        excludes: plan.excludes.clone(),
        max_files: plan.max_files,
        max_depth: plan.max_depth,
        containment,
        hidden_dirs,
    };
    let walked = walk::walk(root, &walk_opts)?;
    let owners = walk::dedupe_targets(&walked.entries);
    let mut units: Vec<(PathBuf, String, u64)> = Vec::new();
    let mut unit_of: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, e) in walked.entries.iter().enumerate() {
        if let (EntryKind::File { open, size, .. }, Some(owner)) = (&e.kind, owners[i])
            && owner == i
        {
            unit_of.insert(i, units.len());
            units.push((open.clone(), e.rel.clone(), *size));
        }
    }
    let scans = scan_parallel(&units, &plan.cfg, plan.jobs, plan.progress)?;

    let mut detections: Vec<Detection> = walked.detections;
    let mut files = Vec::with_capacity(walked.entries.len());
    let mut side: BTreeMap<&str, &FileScan> = BTreeMap::new();
    let mut texts: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut link_targets: BTreeMap<String, String> = BTreeMap::new();
    for (i, e) in walked.entries.iter().enumerate() {
        match &e.kind {
            EntryKind::File { link_target, .. } => {
                let Some(owner) = owners[i] else { continue };
                let Some(&u) = unit_of.get(&owner) else {
                    continue;
                };
                let scan = &scans[u];
                side.insert(e.rel.as_str(), scan);
                if let Some(t) = &scan.text {
                    texts.insert(e.rel.clone(), t.clone());
                }
                let mut facts = scan.facts.clone();
                if let Some(t) = link_target {
                    facts.insert("symlink_target".into(), json!(t));
                    link_targets.insert(e.rel.clone(), t.clone());
                }
                for d in &scan.detections {
                    let mut d = d.clone();
                    d.path = e.rel.clone();
                    detections.push(d);
                }
                files.push(FileRecord {
                    path: e.rel.clone(),
                    size: scan.size,
                    sha256: scan.sha256.clone(),
                    sha512: scan.sha512.clone(),
                    kind: scan.kind.unwrap_or(Kind::Other),
                    format: scan.format.unwrap_or(Format::Unknown),
                    facts,
                });
            }
            EntryKind::Link { target, reason } => files.push(unread_record(
                &e.rel,
                Format::Symlink,
                [
                    ("symlink_target", json!(target)),
                    ("not_followed", json!(reason)),
                ],
            )),
            EntryKind::Special { what } => files.push(unread_record(
                &e.rel,
                Format::Special,
                [("special", Value::from(*what))],
            )),
        }
    }

    // Repository-level checks.
    let repo_opts = repository::RepoOptions {
        required_fields: plan.policy.card.required_fields.clone(),
        allowed_licenses: plan.policy.card.allowed_licenses.clone(),
        json_bytes: plan.cfg.limits.json_bytes,
    };
    detections.extend(repository::check_shards(&files, &side, &repo_opts));
    detections.extend(repository::check_onnx_external_data(&files));
    repository::mark_lfs_coverage(&mut files, &texts);
    let mut repo_facts = Map::new();
    if let Some(cache) = &hf {
        let (d, facts) = repository::check_hf_cache(cache, root, &mut files, &link_targets);
        detections.extend(d);
        repo_facts.insert("huggingface".into(), facts);
    }
    // A single file given as the root (pre-commit hooks pass staged files) is not a model
    // directory: its neighbours were not scanned, so card checks would be noise.
    if !root.is_file() {
        let (d, model_dirs) = repository::check_model_dirs(&files, &side, &repo_opts);
        detections.extend(d);
        repo_facts.insert("model_dirs".into(), Value::Array(model_dirs));
    }
    let git = if plan.no_git {
        None
    } else {
        let (facts, d) = repository::check_git(root, &files);
        detections.extend(d);
        facts
    };

    let digests: BTreeMap<String, String> = files
        .iter()
        .filter_map(|f| f.sha256.clone().map(|d| (f.path.clone(), d)))
        .collect();
    let mut findings = plan
        .policy
        .evaluate(detections, &|p| digests.get(p).cloned(), today());
    findings.sort_by(finding_order);

    let mut report = Report {
        schema_version: 1,
        tool: ToolInfo::default(),
        root: root.display().to_string(),
        policy: PolicyInfo {
            source: plan.policy.source.to_string(),
            sha256: policy_digest(&plan.policy),
        },
        settings: Settings {
            fail_on: plan.fail_on,
            check_values: plan.cfg.check_values,
            excludes: plan.excludes.clone(),
            excluded: walked.excluded,
            no_git: plan.no_git,
        },
        git,
        repository: repo_facts,
        files,
        findings,
        summary: Default::default(),
    };
    report.summarize();
    Ok(report)
}

/// The record of an entry that was listed but never opened (a link not followed, a FIFO).
fn unread_record<const N: usize>(
    rel: &str,
    format: Format,
    facts: [(&str, Value); N],
) -> FileRecord {
    FileRecord {
        path: rel.to_string(),
        size: 0,
        sha256: None,
        sha512: None,
        kind: Kind::Other,
        format,
        facts: facts.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    }
}

/// Containment root and hidden directories for a Hugging Face cache scan.
fn hf_layout(
    root: &Path,
    cache: &crate::provenance::hfcache::HfCache,
) -> (Option<PathBuf>, Vec<String>) {
    use crate::provenance::hfcache::CacheRoot;
    match &cache.root {
        CacheRoot::Hub => (
            None,
            cache
                .repos
                .iter()
                .map(|r| format!("{}/blobs", r.dir))
                .collect(),
        ),
        CacheRoot::Repo => (None, vec!["blobs".to_string()]),
        CacheRoot::Snapshot { prefix, .. } => {
            // root = <repo>/snapshots/<commit>/<prefix>: climb back to <repo>.
            let depth = 2 + prefix.split('/').filter(|c| !c.is_empty()).count();
            let mut up = root.to_path_buf();
            for _ in 0..depth {
                up.push("..");
            }
            (Some(up), Vec::new())
        }
    }
}
/// `modelgate inspect FILE`: one file's facts and findings.
fn inspect_one(args: InspectArgs) -> Result<u8> {
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
    let policy = load_policy(args.policy.as_deref(), &dir)?;
    let cfg = scan_config(&policy, args.check_values);
    let rel = args
        .file
        .file_name()
        .map(|n| walk::display_rel(Path::new(n)))
        .unwrap_or_default();
    let scan = inspect::scan_file(&args.file, &rel, meta.len(), &cfg);
    let digest = scan.sha256.clone();
    let mut findings = policy.evaluate(scan.detections.clone(), &|_| digest.clone(), today());
    findings.sort_by(finding_order);
    let record = FileRecord {
        path: rel.clone(),
        size: scan.size,
        sha256: scan.sha256.clone(),
        sha512: None,
        kind: scan.kind.unwrap_or(Kind::Other),
        format: scan.format.unwrap_or(Format::Unknown),
        facts: scan.facts.clone(),
    };
    let mut w = stdout_or_file(None)?;
    match args.format {
        TextOrJson::Json => {
            serde_json::to_writer_pretty(&mut w, &json!({"file": record, "findings": findings}))?;
            writeln!(w)?;
        }
        TextOrJson::Text => {
            use crate::report::text::sanitize;
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
        disassemble(&args.file, &mut w)?;
    }
    w.flush()?;
    let code = u8::from(
        findings
            .iter()
            .any(|f| f.action == crate::finding::Action::Deny),
    );
    Ok(code)
}

/// Sanitises a multi-line block line by line (pretty JSON keeps its shape, file content cannot
/// inject terminal escapes).
fn sanitize_block(s: &str) -> String {
    s.lines()
        .map(crate::report::text::sanitize)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `inspect --disassemble`: an opcode listing of every pickle in the file, like
/// `pickletools.dis`, bounded by the same limits as the analysis.
fn disassemble(path: &Path, w: &mut dyn Write) -> Result<()> {
    let file =
        inspect::open_regular(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut r = io::BufReader::with_capacity(1 << 16, file);
    writeln!(w, "\npickle disassembly:")?;
    let mut w = w;
    inspect::pickle::disassemble(&mut r, &mut w, &inspect::pickle::Limits::default())?;
    Ok(())
}

/// `modelgate verify --sbom FILE [PATH]`: exit 1 when any file differs from the SBOM.
fn verify(args: VerifyArgs) -> Result<u8> {
    if std::fs::symlink_metadata(&args.path).is_err() {
        bail!("path does not exist: {}", args.path.display());
    }
    let jobs = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let result = crate::verify::verify(&args.sbom, &args.path, jobs)?;
    let mut w = stdout_or_file(None)?;
    match args.format {
        TextOrJson::Text => result.render_text(&mut w)?,
        TextOrJson::Json => result.render_json(&mut w)?,
    }
    w.flush()?;
    Ok(u8::from(!result.is_clean()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_in_one_file_becomes_unreadable_file_detection() {
        let scan = scan_guarded("bad.bin", || panic!("boom"));
        assert_eq!(scan.detections.len(), 1);
        let d = &scan.detections[0];
        assert_eq!(d.rule, RuleId::UnreadableFile);
        assert_eq!(d.evidence.get("error"), Some(&json!("boom")));
        assert!(scan.sha256.is_none());
    }
}
