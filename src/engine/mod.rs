//! The scan engine: the library's one entry point for a scan, used by the CLI and by library
//! users alike.
//!
//! ```text
//! roots ─> crawl (each root) ─> read stage (every file of every root, one pool, one read each:
//!          digests + inspector) ─> per-root repository checks and git ─> prefix paths
//!       ─> policy::evaluate ONCE over every detection ─> Report
//! ```
//!
//! Evaluating the policy once over the whole set is what makes multi-root scans right:
//! exceptions are used (or unused, POL002) across all roots together, and model directories and
//! the SBOM see every root's files under their own prefix.
//!
//! ```no_run
//! use modelgate::{Scanner, ScanOptions};
//! let policy = modelgate::policy::builtin("default").expect("built-in policy");
//! let scanner = Scanner::new(policy, ScanOptions::default());
//! let report = scanner.scan(&["examples/clean-model".into()]).expect("scan");
//! println!("{} files, {} denied", report.summary.files, report.summary.denied);
//! ```

mod cache;
mod remote;
mod root;
mod scanner;
mod schedule;
mod signing;

pub use scanner::{ScanError, ScanOptions, Scanner, Stats};
pub use schedule::{on_worker_stack, scan_guarded};

use crate::model::facts::{Fact, FactMap};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Map, Value, json};

use crate::inspect::{ScanConfig, read};
use crate::knowledge::ExtraLists;
use crate::model::finding::Finding;
use crate::model::report::{PolicyInfo, Report, Settings, ToolInfo};
use crate::policy::Policy;
use crate::repository::RepoOptions;
use crate::walk::{self, WalkOptions};

impl Scanner {
    /// A scanner that judges with `policy`.
    pub fn new(policy: Policy, options: ScanOptions) -> Scanner {
        let mut excludes: Vec<String> = walk::DEFAULT_EXCLUDES
            .iter()
            .map(|s| s.to_string())
            .collect();
        excludes.extend(policy.scan.exclude.iter().cloned());
        excludes.extend(options.excludes.iter().cloned());
        let cfg = ScanConfig {
            sha512: options.sha512,
            block_size: options.block_size,
            ..scan_config(&policy, options.check_values)
        };
        Scanner {
            policy,
            options,
            cfg,
            excludes,
        }
    }

    /// The policy this scanner judges with.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Scans `roots` (directories or files) into one report.
    pub fn scan(&self, roots: &[PathBuf]) -> Result<Report, ScanError> {
        self.scan_with_stats(roots).map(|(r, _)| r)
    }

    /// [`Scanner::scan`], also saying where the time went.
    pub fn scan_with_stats(&self, roots: &[PathBuf]) -> Result<(Report, Stats), ScanError> {
        if self.options.jobs == 0 {
            return Err(ScanError::NoJobs);
        }
        if roots.is_empty() {
            return Err(ScanError::NoRoots);
        }
        let mut stats = Stats::default();
        let limits = &self.policy.limits;
        let base = WalkOptions {
            excludes: self.excludes.clone(),
            max_files: limits.max_files.min(u64::MAX - 1),
            max_depth: usize::try_from(limits.max_depth.min(1 << 16)).unwrap_or(1 << 16),
            containment: None,
            hidden_dirs: Vec::new(),
        };

        let started = Instant::now();
        let many = roots.len() > 1;
        let mut crawled = Vec::with_capacity(roots.len());
        let mut units = Vec::new();
        for r in roots {
            let prefix = if many {
                root::prefix_of(r)
            } else {
                String::new()
            };
            let c = root::crawl(r, prefix, &base, units.len())?;
            units.extend(c.units.iter().cloned());
            crawled.push(c);
        }
        stats.walk = started.elapsed();

        let started = Instant::now();
        let cpu = schedule::Cpu::default();
        let hash_before = read::read_hash_time();
        let cache = self.options.cache.as_deref().map(|dir| {
            let flags = format!(
                "check_values={} sha512={}",
                self.cfg.check_values, self.cfg.sha512
            );
            cache::Cache::open(dir, &[&self.policy.sha256, &flags])
        });
        if let Some(note) = cache.as_ref().and_then(|c| c.note.clone()) {
            stats.cache_notes.push(note);
        }
        // Which Python files are model code is decided from the whole crawl before any is read.
        let cfg = ScanConfig {
            model_code: std::sync::Arc::new(crate::repository::model_code_paths(
                units.iter().map(|u| u.rel.as_str()),
            )),
            ..self.cfg.clone()
        };
        let mut scans = schedule::scan_all(
            &units,
            &cfg,
            self.options.jobs,
            self.options.progress,
            &cpu,
            cache.as_ref(),
        )?;
        schedule::rescan_late_model_code(&units, &mut scans, &cfg, self.options.jobs, &cpu)?;
        if let Some(c) = cache
            && let Err(e) = c.save()
        {
            stats
                .cache_notes
                .push(format!("the result cache was not written: {e}"));
        }
        stats.cache_hits = cpu.cache_hits.load(std::sync::atomic::Ordering::Relaxed);
        stats.read = started.elapsed();
        stats.read_cpu = cpu.total();
        stats.hash_cpu = read::read_hash_time().saturating_sub(hash_before);
        stats.files = scans.len() as u64;
        stats.bytes = scans.iter().map(|s| s.size).fold(0, u64::saturating_add);

        let started = Instant::now();
        let repo = RepoOptions {
            required_fields: self.policy.card.required_fields.clone(),
            allowed_licenses: self.policy.card.allowed_licenses.clone(),
            json_bytes: self.cfg.limits.json_bytes,
        };
        let after = root::After {
            repo: &repo,
            no_git: self.options.no_git,
            signing: signing::Signing {
                options: &self.policy.signing,
                now: self.options.clock.now().unix_timestamp(),
            },
        };
        let mut collected = Vec::with_capacity(crawled.len());
        for c in crawled {
            let (first, n) = (c.first_unit, c.units.len());
            let prefix = c.prefix.clone();
            let mine = scans.get_mut(first..first + n).unwrap_or(&mut []);
            collected.push((prefix, c.collect(mine, &after)));
        }
        stats.provenance = started.elapsed();

        let started = Instant::now();
        let report = self.assemble(roots, collected);
        stats.policy = started.elapsed();
        Ok((report, stats))
    }

    /// Merges the roots' results, judges every detection once and builds the report.
    fn assemble(&self, roots: &[PathBuf], collected: Vec<(String, root::Collected)>) -> Report {
        let many = collected.len() > 1;
        let mut files = Vec::new();
        let mut detections = Vec::new();
        let mut excluded = Vec::new();
        let mut model_dirs = Vec::new();
        let mut repository = Map::new();
        let mut per_root = Vec::new();
        let mut git = None;
        // Display path -> path inside its root, so an exception written for one root's layout
        // (`weights/model.bin`) matches that file in a multi-root scan too.
        let mut in_root: BTreeMap<String, String> = BTreeMap::new();
        for (i, (prefix, c)) in collected.into_iter().enumerate() {
            if many {
                let paths = c.files.iter().map(|f| &f.path);
                for p in paths.chain(c.detections.iter().map(|d| &d.path)) {
                    let inner = p.strip_prefix(prefix.as_str()).unwrap_or(p);
                    in_root.insert(p.clone(), inner.trim_start_matches('/').to_string());
                }
                let mut entry = Map::new();
                entry.insert("path".into(), json!(prefix));
                entry.insert("git".into(), json!(c.git));
                if let Some(hf) = c.repository.fact(Fact::Huggingface) {
                    entry.set_fact(Fact::Huggingface, hf.clone());
                }
                if let Some(sig) = c.repository.fact(Fact::Signature) {
                    entry.set_fact(Fact::Signature, sig.clone());
                }
                per_root.push(Value::Object(entry));
            } else {
                for (k, v) in &c.repository {
                    if k != Fact::ModelDirs.name() {
                        repository.insert(k.clone(), v.clone());
                    }
                }
            }
            if i == 0 {
                git = c.git.clone();
            }
            if let Some(Value::Array(d)) = c.repository.fact(Fact::ModelDirs) {
                model_dirs.extend(d.iter().cloned());
            }
            files.extend(c.files);
            detections.extend(c.detections);
            excluded.extend(c.excluded);
        }
        if many || !model_dirs.is_empty() || roots.iter().any(|r| !r.is_file()) {
            repository.set_fact(Fact::ModelDirs, Value::Array(model_dirs));
        }
        if many {
            repository.set_fact(Fact::Roots, Value::Array(per_root));
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        excluded.sort();

        let digests: BTreeMap<&str, &str> = files
            .iter()
            .filter_map(|f| f.sha256.as_deref().map(|d| (f.path.as_str(), d)))
            .collect();
        let mut findings = self.policy.evaluate_in_roots(
            detections,
            &|p| digests.get(p).map(|d| (*d).to_string()),
            &|p| in_root.get(p).cloned(),
            self.options.clock.today(),
        );
        findings.sort_by(finding_order);

        let mut report = Report {
            schema_version: 1,
            tool: ToolInfo::default(),
            root: roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(" "),
            policy: PolicyInfo {
                source: self.policy.source.to_string(),
                sha256: self.policy.sha256.clone(),
            },
            settings: Settings {
                fail_on: self.options.fail_on,
                check_values: self.cfg.check_values,
                excludes: self.excludes.clone(),
                excluded,
                no_git: self.options.no_git,
            },
            git,
            repository,
            files,
            findings,
            summary: Default::default(),
        };
        report.summarize();
        report
    }
}

/// What the inspectors take from the policy (and `--check-values`).
pub fn scan_config(policy: &Policy, check_values: bool) -> ScanConfig {
    ScanConfig {
        check_values: check_values || policy.safetensors.check_values,
        pickle_extra: ExtraLists::from_policy(
            &policy.pickle.safe_globals,
            &policy.pickle.dangerous_globals,
        ),
        pinned_revisions: policy
            .source_code
            .pinned_revisions
            .iter()
            .cloned()
            .collect(),
        limits: policy.limits,
        ..ScanConfig::default()
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

/// Whether `path` exists (without following a final symlink).
pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}
