//! Where a model directory comes from (its root's Hugging Face and git facts, refined by the
//! per-file cache facts), its digest, and the supplier and name the SBOM gives it.

use std::collections::{BTreeMap, BTreeSet};

use cyclonedx_bom::external_models::normalized_string::NormalizedString;
use cyclonedx_bom::external_models::uri::Uri;
use cyclonedx_bom::models::organization::OrganizationalEntity;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::purl::*;
use super::text::sbom_text;
use crate::classify::{self, Format, Kind};
use crate::model::facts::{Fact, FactMap};
use crate::model::report::{FileRecord, Report};

/// One model directory as the lead's repository facts describe it; every key is optional.
pub(super) struct ModelDir<'a> {
    pub(super) path: String,
    pub(super) card: Option<&'a Map<String, Value>>,
    pub(super) config: Option<&'a Map<String, Value>>,
    pub(super) files: Option<Vec<String>>,
}

/// The model directories of the SBOM, from the repository facts' `model_dirs` (every folder with
/// weights or a `config.json`), narrowed to folders that hold a model:
/// - a folder is a model when it directly holds a serialized model (a weights file or format,
///   pickles included, but not plain NumPy arrays) or an LFS pointer standing for one;
/// - a sentence-transformers module folder (`1_Pooling`, `2_Dense`: a digit, `_`, a name) inside
///   a model is part of that model, weights or not;
/// - other folders (`1_Pooling` with only a config, `assets/` with mel filters as `.npz`) are not
///   models: their files join the nearest model above them, or stay top-level.
pub(super) fn model_dirs(report: &Report) -> Vec<ModelDir<'_>> {
    let Some(Value::Array(dirs)) = report.repository.fact(Fact::ModelDirs) else {
        return Vec::new();
    };
    let mut all: Vec<ModelDir<'_>> = dirs
        .iter()
        .filter_map(Value::as_object)
        .map(|d| ModelDir {
            path: d
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim_matches('/')
                .to_string(),
            card: d.get("card").and_then(Value::as_object),
            config: d.get("config").and_then(Value::as_object),
            files: d.get("files").and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|v| {
                        v.as_str()
                            .or_else(|| v.get("path").and_then(Value::as_str))
                            .map(str::to_string)
                    })
                    .collect()
            }),
        })
        .collect();
    all.sort_by(|a, b| a.path.cmp(&b.path));
    all.dedup_by(|a, b| a.path == b.path);

    let holds_model: BTreeSet<&str> = report
        .files
        .iter()
        .filter(|f| {
            f.format == Format::LfsPointer
                || ((f.kind == Kind::Weights || f.format.is_weights())
                    && !matches!(f.format, Format::Numpy | Format::Npz))
        })
        .map(|f| dir_of(&f.path))
        .collect();
    // Sorted by path, so every ancestor is decided before its sub-folders.
    let mut is_model = vec![false; all.len()];
    for i in 0..all.len() {
        let path = all[i].path.as_str();
        let has_parent_model = (0..i).any(|j| is_model[j] && is_ancestor(&all[j].path, path));
        is_model[i] = holds_model.contains(path) && !(has_parent_model && is_module_folder(path));
    }
    let mut out: Vec<ModelDir<'_>> = Vec::new();
    let mut orphans: Vec<ModelDir<'_>> = Vec::new();
    for (d, m) in all.into_iter().zip(is_model) {
        if m {
            out.push(d);
        } else {
            orphans.push(d);
        }
    }
    for o in orphans {
        let parent = out
            .iter_mut()
            .filter(|m| is_ancestor(&m.path, &o.path))
            .max_by_key(|m| m.path.len());
        if let (Some(p), Some(extra)) = (parent, o.files)
            && let Some(files) = p.files.as_mut()
        {
            files.extend(extra);
        }
    }
    out
}

/// `dir` is a strict ancestor of `path` (`""` is every path's ancestor).
pub(super) fn is_ancestor(dir: &str, path: &str) -> bool {
    dir != path && under(path, dir)
}

/// A sentence-transformers module folder name: digits, `_`, then a name (`1_Pooling`).
pub(super) fn is_module_folder(path: &str) -> bool {
    let name = classify::basename(path);
    let Some((idx, rest)) = name.split_once('_') else {
        return false;
    };
    !idx.is_empty()
        && idx.bytes().all(|b| b.is_ascii_digit())
        && rest.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
}

/// Which model directory (index into `dirs`) holds each path: a directory with a `files` list
/// holds exactly those, one without holds everything under it; the deepest holder wins.
pub(super) fn owners(dirs: &[ModelDir<'_>], files: &[FileRecord]) -> Vec<Option<usize>> {
    let mut listed: BTreeMap<&str, usize> = BTreeMap::new();
    let mut joined: BTreeMap<String, usize> = BTreeMap::new();
    for (i, d) in dirs.iter().enumerate() {
        for f in d.files.iter().flatten() {
            listed.insert(f.as_str(), i);
            if !d.path.is_empty() {
                joined.insert(format!("{}/{f}", d.path), i);
            }
        }
    }
    let unlisted: Vec<usize> = (0..dirs.len())
        .filter(|&i| dirs[i].files.is_none())
        .collect();
    let deeper = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(x), Some(y)) => Some(if dirs[y].path.len() > dirs[x].path.len() {
            y
        } else {
            x
        }),
        (x, None) => x,
        (None, y) => y,
    };
    files
        .iter()
        .map(|f| {
            let by_list = deeper(
                listed.get(f.path.as_str()).copied(),
                joined.get(f.path.as_str()).copied(),
            );
            let by_prefix = unlisted
                .iter()
                .copied()
                .filter(|&i| is_ancestor(&dirs[i].path, &f.path))
                .max_by_key(|&i| dirs[i].path.len());
            deeper(by_list, by_prefix)
        })
        .collect()
}

/// Where a model directory comes from: its root's Hugging Face and git facts, refined by the
/// per-file cache facts (`hf_repo`/`hf_commit`/`hf_path`) when the files sit in an HF cache.
#[derive(Debug, Clone, Default)]
pub(super) struct Origin {
    pub(super) hf: Option<HfRepo>,
    pub(super) github: Option<(String, String)>,
    pub(super) commit: Option<String>,
    pub(super) remote: Option<String>,
    /// The model directory's path inside its repository (`""` at the top).
    pub(super) subpath: String,
    /// Display prefix of the root the directory belongs to (multi-root scans).
    pub(super) prefix: String,
}

/// `org/name` (or `name`) when `remote` is a Hugging Face *model* repository URL; dataset and
/// space repositories are not models and are left to the generic purl.
pub(super) fn hub_repo_of_remote(remote: &str) -> Option<String> {
    let rest = remote
        .strip_prefix("https://huggingface.co/")
        .or_else(|| remote.strip_prefix("http://huggingface.co/"))
        .or_else(|| remote.strip_prefix("git@hf.co:"))
        .or_else(|| remote.strip_prefix("https://hf.co/"))?;
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix(".git").unwrap_or(rest);
    if rest.starts_with("datasets/") || rest.starts_with("spaces/") {
        return None;
    }
    valid_repo_id(rest).then(|| rest.to_string())
}

pub(super) fn under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|r| r.starts_with('/'))
}

pub(super) fn strip_root<'a>(path: &'a str, prefix: &str) -> &'a str {
    path.strip_prefix(prefix)
        .unwrap_or(path)
        .trim_start_matches('/')
}

/// The origin of a path: the facts of the root holding it (multi-root scans list them in
/// `repository.roots[]`), else the report's own.
pub(super) fn root_origin(report: &Report, path: &str) -> Origin {
    let mut o = Origin::default();
    let roots = report
        .repository
        .fact(Fact::Roots)
        .and_then(Value::as_array);
    let root = roots.and_then(|rs| {
        rs.iter()
            .filter_map(Value::as_object)
            .filter(|r| {
                r.get("path")
                    .and_then(Value::as_str)
                    .is_some_and(|p| under(path, p.trim_matches('/')))
            })
            .max_by_key(|r| r.get("path").and_then(Value::as_str).map_or(0, str::len))
    });
    match root {
        Some(r) => {
            o.prefix = r
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim_matches('/')
                .to_string();
            o.hf = hf_of(r.fact(Fact::Huggingface));
            let git = r.get("git").and_then(Value::as_object);
            let field = |k: &str| git.and_then(|g| g.get(k)).and_then(Value::as_str);
            o.commit = field("commit")
                .filter(|c| is_commit(c))
                .map(str::to_ascii_lowercase);
            o.remote = field("remote").map(str::to_string);
        }
        None => {
            o.hf = hf_of(report.repository.fact(Fact::Huggingface));
            o.commit = report
                .git
                .as_ref()
                .and_then(|g| g.commit.as_deref())
                .filter(|c| is_commit(c))
                .map(str::to_ascii_lowercase);
            o.remote = report.git.as_ref().and_then(|g| g.remote.clone());
        }
    }
    o.github = o.remote.as_deref().and_then(github_repo);
    if o.hf.is_none() {
        // A git clone of a Hub repository is that Hub repository at the checked-out commit.
        o.hf = o
            .remote
            .as_deref()
            .and_then(hub_repo_of_remote)
            .map(|repo_id| HfRepo {
                repo_id,
                commit: o.commit.clone(),
                dataset: false,
            });
    }
    o
}

pub(super) fn model_origin(dir: &ModelDir<'_>, files: &[&FileRecord], report: &Report) -> Origin {
    let mut o = root_origin(report, &dir.path);
    o.subpath = strip_root(&dir.path, &o.prefix).to_string();
    // Files in an HF cache snapshot know their repository, revision and path in the repository:
    // that identity beats the root's (a cache with two snapshots holds two revisions).
    let direct = files.iter().find(|f| {
        dir_of(&f.path) == dir.path && f.facts.fact(Fact::HfRepo).and_then(Value::as_str).is_some()
    });
    if let Some(f) = direct {
        let repo_id = f
            .facts
            .fact(Fact::HfRepo)
            .and_then(Value::as_str)
            .unwrap_or("");
        if valid_repo_id(repo_id) {
            o.hf = Some(HfRepo {
                repo_id: repo_id.to_string(),
                commit: f
                    .facts
                    .fact(Fact::HfCommit)
                    .and_then(Value::as_str)
                    .filter(|c| is_commit(c))
                    .map(str::to_ascii_lowercase),
                dataset: false,
            });
            o.subpath = f
                .facts
                .fact(Fact::HfPath)
                .and_then(Value::as_str)
                .map(|p| dir_of(p).to_string())
                .unwrap_or_default();
        }
    }
    o
}

/// The model's digest: SHA-256 over the sorted lines `path NUL digest LF`, one per file of the
/// model, `path` relative to the model directory and `digest` the content's SHA-256 (an LFS
/// pointer's oid), or `symlink:` and the target for a link that was not followed. Same files
/// and bytes, same digest, wherever the model sits. `None` when a file's content is unknown
/// (unreadable, or a special file): the model's content is then not fully known.
pub(super) fn model_digest(dir: &str, files: &[&FileRecord]) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let mut lines = Vec::with_capacity(files.len());
    for f in files {
        let digest = if f.format == Format::LfsPointer {
            f.facts
                .fact(Fact::LfsOid)
                .and_then(Value::as_str)
                .map(|s| s.strip_prefix("sha256:").unwrap_or(s))
                .filter(|d| is_sha256(d))
                .map(str::to_ascii_lowercase)
        } else if f.format == Format::Symlink {
            f.facts
                .fact(Fact::SymlinkTarget)
                .and_then(Value::as_str)
                .map(|t| format!("symlink:{}", sbom_text(t)))
        } else {
            f.sha256
                .as_deref()
                .filter(|d| is_sha256(d))
                .map(str::to_ascii_lowercase)
        }?;
        lines.push((sbom_text(strip_root(&f.path, dir)), digest));
    }
    lines.sort();
    let mut h = Sha256::new();
    for (p, d) in &lines {
        h.update(p.as_bytes());
        h.update([0]);
        h.update(d.as_bytes());
        h.update(b"\n");
    }
    Some(crate::model::finding::hex(&h.finalize()))
}

/// The supplier of something the Hub hosts under `repo_id` (`kind` is `""` for models,
/// `"datasets/"` for datasets): its namespace, or for an id without one (a canonical
/// repository such as `imdb`) the Hub itself, which distributes it.
pub(super) fn hub_supplier(repo_id: &str, kind: &str) -> OrganizationalEntity {
    match repo_id.split_once('/') {
        Some((ns, _)) => organization(ns, Some(format!("https://huggingface.co/{ns}"))),
        None => organization(
            "Hugging Face Hub",
            Some(format!("https://huggingface.co/{kind}{repo_id}")),
        ),
    }
}

pub(super) fn organization(name: &str, url: Option<String>) -> OrganizationalEntity {
    OrganizationalEntity {
        bom_ref: None,
        name: Some(NormalizedString::new(name)),
        url: url.map(|u| vec![Uri::new(&u)]),
        contact: None,
    }
}

pub(super) fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// The repository's name: the option, the Hugging Face id, the remote's repository name, or
/// the scan root's last component.
pub(super) fn root_name(report: &Report, explicit: Option<&str>) -> String {
    if let Some(n) = explicit.filter(|n| !n.is_empty()) {
        return n.to_string();
    }
    if let Some(hf) = hf_repo(report) {
        return hf.repo_id;
    }
    if let Some(remote) = report.git.as_ref().and_then(|g| g.remote.as_deref()) {
        let last = remote
            .trim_end_matches('/')
            .rsplit(['/', ':'])
            .next()
            .unwrap_or("");
        let last = last.strip_suffix(".git").unwrap_or(last);
        if !last.is_empty() {
            return last.to_string();
        }
    }
    let base = report.root.trim_end_matches('/');
    let base = classify::basename(base);
    if base.is_empty() || base == "." || base == ".." {
        "repository".to_string()
    } else {
        base.to_string()
    }
}
