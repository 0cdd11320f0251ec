//! One scan root: its crawl before the read stage, and everything after it (file records,
//! repository checks, git) with root-relative paths, prefixed at the end for multi-root scans.

use crate::model::facts::{Fact, FactMap};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::schedule::Unit;
use crate::inspect::FileScan;
use crate::model::finding::Detection;
use crate::model::format::{Format, Kind};
use crate::model::report::{FileRecord, GitFacts};
use crate::provenance::hfcache::{self, HfCache};
use crate::repository;
use crate::walk::{self, EntryKind, Walk, WalkError, WalkOptions};

/// A crawled root waiting for its files to be read.
pub struct Crawled {
    /// The root as given.
    pub root: PathBuf,
    /// What every path of this root is prefixed with (`""` in a single-root scan).
    pub prefix: String,
    hf: Option<HfCache>,
    walked: Walk,
    owners: Vec<Option<usize>>,
    /// Entry index -> index into this root's units.
    unit_of: BTreeMap<usize, usize>,
    /// Where this root's units start in the scan-wide unit list.
    pub first_unit: usize,
    /// This root's units.
    pub units: Vec<Unit>,
}

/// What one root contributed, paths already prefixed.
pub struct Collected {
    /// File records.
    pub files: Vec<FileRecord>,
    /// Detections (not yet judged).
    pub detections: Vec<Detection>,
    /// Repository facts (`huggingface`, `model_dirs`).
    pub repository: Map<String, Value>,
    /// Git facts, when the root is in a repository and git was not skipped.
    pub git: Option<GitFacts>,
    /// Directories skipped by an exclude glob.
    pub excluded: Vec<String>,
}

/// The prefix of a root's paths in a multi-root scan: the root as given; a file given as a root
/// is reported by its own name, so its prefix is its directory.
pub fn prefix_of(root: &Path) -> String {
    let shown = if root.is_file() {
        root.parent().map(walk::display_rel).unwrap_or_default()
    } else {
        walk::display_rel(root)
    };
    shown.trim_end_matches('/').to_string()
}

/// Joins a prefix and a root-relative path (`""` stands for the root itself).
pub fn join(prefix: &str, rel: &str) -> String {
    match (prefix.is_empty(), rel.is_empty()) {
        (true, _) => rel.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}/{rel}"),
    }
}

/// Crawls `root`. Inside a Hugging Face cache, snapshot files are symlinks into the repository's
/// `blobs/`: the symlink containment widens to the repository and blobs are listed through their
/// snapshots only.
pub fn crawl(
    root: &Path,
    prefix: String,
    base: &WalkOptions,
    first_unit: usize,
) -> Result<Crawled, WalkError> {
    let hf = hfcache::detect(root);
    let (containment, hidden_dirs) = match &hf {
        Some(cache) => cache.walk_layout(root),
        None => (None, Vec::new()),
    };
    let opts = WalkOptions {
        containment,
        hidden_dirs,
        ..base.clone()
    };
    let walked = walk::walk(root, &opts)?;
    let owners = walk::dedupe_targets(&walked.entries);
    let mut units = Vec::new();
    let mut unit_of = BTreeMap::new();
    for (i, e) in walked.entries.iter().enumerate() {
        if let (EntryKind::File { open, size, .. }, Some(owner)) = (&e.kind, owners[i])
            && owner == i
        {
            unit_of.insert(i, units.len());
            // Inspectors see the root-relative path: classification by name must not depend on
            // where the root sits.
            units.push(Unit {
                open: open.clone(),
                rel: e.rel.clone(),
                size: *size,
            });
        }
    }
    Ok(Crawled {
        root: root.to_path_buf(),
        prefix,
        hf,
        walked,
        owners,
        unit_of,
        first_unit,
        units,
    })
}

/// Repository-level settings the checks after the read need.
pub struct After<'a> {
    /// Card and shard-index options.
    pub repo: &'a repository::RepoOptions,
    /// Skip git provenance.
    pub no_git: bool,
    /// The signature check's policy and clock (issue 19).
    pub signing: super::signing::Signing<'a>,
}

impl Crawled {
    /// Builds this root's records from its read results and runs the repository checks.
    ///
    /// A file's facts move into its record; only a scan that several entries share (hard links,
    /// links to one target) is copied, for all but its last entry. Copying every record's facts
    /// was a twentieth of a standard-library scan, on the one thread that runs after the read.
    pub fn collect(self, scans: &mut [FileScan], after: &After<'_>) -> Collected {
        let Crawled {
            root,
            prefix,
            hf,
            walked,
            owners,
            unit_of,
            ..
        } = self;
        let mut detections: Vec<Detection> = walked.detections;
        let mut files = Vec::with_capacity(walked.entries.len());
        let mut texts: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut link_targets: BTreeMap<String, String> = BTreeMap::new();
        let units = scans.len();
        let unit_at = |i: usize| {
            owners[i]
                .and_then(|owner| unit_of.get(&owner).copied())
                .filter(|&u| u < units)
        };
        let mut readers = vec![0usize; scans.len()];
        for (i, e) in walked.entries.iter().enumerate() {
            if let (EntryKind::File { .. }, Some(u)) = (&e.kind, unit_at(i)) {
                readers[u] += 1;
            }
        }
        for (i, e) in walked.entries.iter().enumerate() {
            match &e.kind {
                EntryKind::File { link_target, .. } => {
                    let Some(u) = unit_at(i) else { continue };
                    readers[u] -= 1;
                    let scan = &mut scans[u];
                    if let Some(t) = &scan.text {
                        texts.insert(e.rel.clone(), t.clone());
                    }
                    let mut facts = if readers[u] == 0 {
                        std::mem::take(&mut scan.facts)
                    } else {
                        scan.facts.clone()
                    };
                    if let Some(t) = link_target {
                        facts.set_fact(Fact::SymlinkTarget, json!(t));
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
                        (Fact::SymlinkTarget, json!(target)),
                        (Fact::NotFollowed, json!(reason)),
                    ],
                )),
                EntryKind::Special { what } => files.push(unread_record(
                    &e.rel,
                    Format::Special,
                    [(Fact::Special, Value::from(*what))],
                )),
            }
        }

        // The checks below read what the facts do not carry (tensors, card, text, detections).
        let mut side: BTreeMap<&str, &FileScan> = BTreeMap::new();
        for (i, e) in walked.entries.iter().enumerate() {
            if let (EntryKind::File { .. }, Some(u)) = (&e.kind, unit_at(i)) {
                side.insert(e.rel.as_str(), &scans[u]);
            }
        }
        detections.extend(repository::check_shards(&files, &side, after.repo));
        detections.extend(repository::check_onnx_external_data(&files));
        repository::check_openvino_weights(&mut files, &mut detections);
        detections.extend(repository::check_coreml_packages(&files));
        repository::check_model_confusion(&files, &mut detections);
        repository::mark_lfs_coverage(&mut files, &texts);
        let mut repo_facts = Map::new();
        if let Some(cache) = &hf {
            let (d, facts) = repository::check_hf_cache(cache, &root, &mut files, &link_targets);
            detections.extend(d);
            repo_facts.set_fact(Fact::Huggingface, facts);
        }
        // A single file given as the root (pre-commit hooks pass staged files) is not a model
        // directory: its neighbours were not scanned, so card checks would be noise.
        if !root.is_file() {
            let (d, model_dirs) = repository::check_model_dirs(&files, &side, after.repo);
            detections.extend(d);
            repository::scope_native_library_loads(&files, &mut detections);
            repo_facts.set_fact(Fact::ModelDirs, Value::Array(model_dirs));
        }
        let git = if after.no_git {
            None
        } else {
            let (facts, d) = repository::check_git(&root, &files);
            detections.extend(d);
            facts
        };
        drop(side);
        // Issue 19: the model signature, compared with the digests the read stage computed.
        if !root.is_file() {
            let (d, fact) = super::signing::check_root(&root, &files, &after.signing);
            detections.extend(d);
            if let Some(f) = fact {
                repo_facts.set_fact(Fact::Signature, f);
            }
        }

        let mut out = Collected {
            files,
            detections,
            repository: repo_facts,
            git,
            excluded: walked.excluded,
        };
        if !prefix.is_empty() {
            out.prefix(&prefix);
        }
        out
    }
}

impl Collected {
    /// Prefixes every path this root reports (files, detections, model directories, excluded
    /// directories).
    fn prefix(&mut self, prefix: &str) {
        for f in &mut self.files {
            f.path = join(prefix, &f.path);
        }
        for d in &mut self.detections {
            d.path = join(prefix, &d.path);
        }
        for e in &mut self.excluded {
            *e = join(prefix, e);
        }
        if let Some(Value::Array(dirs)) = self.repository.get_mut(Fact::ModelDirs.name()) {
            for d in dirs.iter_mut().filter_map(Value::as_object_mut) {
                for key in ["path", "card_path"] {
                    if let Some(Value::String(p)) = d.get_mut(key) {
                        *p = join(prefix, p);
                    }
                }
            }
        }
    }
}

/// The record of an entry that was listed but never opened (a link not followed, a FIFO).
fn unread_record<const N: usize>(
    rel: &str,
    format: Format,
    facts: [(Fact, Value); N],
) -> FileRecord {
    FileRecord {
        path: rel.to_string(),
        size: 0,
        sha256: None,
        sha512: None,
        kind: Kind::Other,
        format,
        facts: facts.into_iter().map(|(k, v)| (k.key(), v)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_handles_the_root_itself_and_empty_prefixes() {
        assert_eq!(join("", "a/b"), "a/b");
        assert_eq!(join("r", ""), "r");
        assert_eq!(join("r", "a"), "r/a");
    }
}
