//! The model manifest: how a tree becomes a list of (name, digest) resources, and how two lists
//! differ.
//!
//! This follows the reference `model_signing` serializers exactly, because the signer and the
//! verifier must compute the same list:
//! - method `files`: one resource per regular file, named by its `/`-separated path relative to
//!   the model root, digest = SHA-256 of the whole file (algorithm `sha256`). A model that is a
//!   single file has one resource named `.`.
//! - method `shards`: each non-empty file is cut at every `shard_size` bytes; one resource per
//!   piece, named `path:start:end`, algorithm `sha256-sharded-<shard_size>`. Empty files have no
//!   shards (and so are invisible to this method, as in the reference).
//! - ignored: an ignore path covers itself and everything below it, matched by whole path
//!   components from the model root. The reference always ignores `.git`, `.gitattributes`,
//!   `.github` and `.gitignore` at the root and the signature file itself; the signer records the
//!   full list in the payload and the verifier ignores it too.
//! - a symlink anywhere (outside ignored paths) is an error, as with the reference's default
//!   `allow_symlinks = false`; so are sockets, fifos and devices. Resources are ordered by path
//!   components, then shard offsets (what the reference's sort produces).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::error::SignError;
use super::limits::Limits;
use crate::inspect::read::Sha256Stream;
use crate::model::finding::hex;

/// Paths the reference ignores by default (at the model root).
pub const GIT_PATHS: [&str; 4] = [".git", ".gitattributes", ".github", ".gitignore"];

/// The only digest the serializers support here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashType {
    /// SHA-256.
    Sha256,
}

/// The serialization parameters recorded in the predicate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Serialization {
    /// One digest per file.
    Files {
        /// Digest.
        hash: HashType,
        /// Paths (relative to the root) the signer ignored.
        ignore_paths: Vec<String>,
    },
    /// One digest per `shard_size` piece of each file.
    Shards {
        /// Digest.
        hash: HashType,
        /// Piece size in bytes.
        shard_size: u64,
        /// Paths (relative to the root) the signer ignored.
        ignore_paths: Vec<String>,
    },
}

impl Serialization {
    /// The `algorithm` every resource carries under this serialization.
    pub fn resource_algorithm(&self) -> String {
        match self {
            Serialization::Files { .. } => "sha256".to_string(),
            Serialization::Shards { shard_size, .. } => format!("sha256-sharded-{shard_size}"),
        }
    }

    /// The recorded ignore paths.
    pub fn ignore_paths(&self) -> &[String] {
        match self {
            Serialization::Files { ignore_paths, .. }
            | Serialization::Shards { ignore_paths, .. } => ignore_paths,
        }
    }

    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            Serialization::Files { .. } => "files",
            Serialization::Shards { .. } => "shards",
        }
    }
}

/// One manifest entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// `path` (files) or `path:start:end` (shards).
    pub name: String,
    /// SHA-256.
    pub digest: [u8; 32],
}

/// A model manifest: name, serialization and resources in canonical order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Informative only (the final component of the signed path); never compared.
    pub model_name: String,
    /// How the resources were computed.
    pub serialization: Serialization,
    /// In signing order.
    pub resources: Vec<Resource>,
}

impl Manifest {
    /// Builds a manifest, rejecting duplicate resource names and malformed shard names.
    pub fn new(
        model_name: String,
        serialization: Serialization,
        resources: Vec<Resource>,
    ) -> Result<Manifest, SignError> {
        let mut seen = BTreeSet::new();
        for r in &resources {
            if let Serialization::Shards { shard_size, .. } = &serialization {
                let (_, start, end) = split_shard_name(&r.name).ok_or_else(|| {
                    SignError::Statement(format!("resource {:?} is not path:start:end", r.name))
                })?;
                if end <= start || end - start > *shard_size {
                    return Err(SignError::Statement(format!(
                        "resource {:?}: shard bounds do not fit shard_size {shard_size}",
                        r.name
                    )));
                }
            }
            // The reference keeps the last of two equal names; a duplicate is never produced by
            // a signer, so it can only be an attempt to smuggle a second digest.
            if !seen.insert(r.name.as_str()) {
                return Err(SignError::Statement(format!(
                    "resource {:?} appears twice",
                    r.name
                )));
            }
        }
        Ok(Manifest {
            model_name,
            serialization,
            resources,
        })
    }

    /// SHA-256 over every resource digest in order: the statement's subject digest.
    pub fn root_digest(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        for r in &self.resources {
            h.update(r.digest);
        }
        h.finalize().into()
    }
}

/// `path:start:end` -> parts (the reference splits on `:` and wants exactly three parts).
fn split_shard_name(name: &str) -> Option<(&str, u64, u64)> {
    let mut it = name.split(':');
    let (p, s, e) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some() {
        return None;
    }
    Some((p, s.parse().ok()?, e.parse().ok()?))
}

/// A set of ignored paths, as component lists relative to the root.
#[derive(Debug, Clone, Default)]
pub struct IgnoreSet {
    entries: BTreeSet<Vec<String>>,
}

impl IgnoreSet {
    /// Adds a root-relative path (`/`-separated). Paths that leave the root (`..`) are dropped,
    /// as the reference drops them; a path naming the root itself is refused.
    pub fn add(&mut self, rel: &str) -> Result<(), SignError> {
        let parts: Vec<String> = rel
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .map(str::to_string)
            .collect();
        if parts.iter().any(|c| c == "..") || rel.starts_with('/') {
            return Ok(());
        }
        if parts.is_empty() {
            return Err(SignError::Tree(format!(
                "ignore path {rel:?} would ignore the whole model"
            )));
        }
        self.entries.insert(parts);
        Ok(())
    }

    /// The reference's default git paths.
    pub fn add_git_paths(&mut self) {
        for p in GIT_PATHS {
            self.entries.insert(vec![p.to_string()]);
        }
    }

    /// Whether `components` (relative to the root) is, or is below, an ignored path.
    pub fn covers(&self, components: &[&str]) -> bool {
        self.entries
            .iter()
            .any(|e| e.len() <= components.len() && e.iter().zip(components).all(|(a, b)| a == b))
    }

    /// The set as sorted `/`-joined strings (what the signer records).
    pub fn to_strings(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.join("/")).collect()
    }
}

/// One regular file found in the tree.
#[derive(Debug, Clone)]
pub struct TreeFile {
    /// `/`-separated path relative to the root (`.` for a single-file model).
    pub rel: String,
    /// Where to read it.
    pub abs: PathBuf,
}

/// Lists the regular files of `root` (sorted by path components), applying `ignore`.
pub fn walk_tree(
    root: &Path,
    ignore: &IgnoreSet,
    limits: &Limits,
) -> Result<Vec<TreeFile>, SignError> {
    let meta = std::fs::symlink_metadata(root)
        .map_err(|e| SignError::Tree(format!("{}: {e}", root.display())))?;
    if meta.file_type().is_symlink() {
        return Err(SignError::Tree(format!(
            "{} is a symlink (symlinks are not allowed)",
            root.display()
        )));
    }
    if meta.is_file() {
        return Ok(vec![TreeFile {
            rel: ".".into(),
            abs: root.to_path_buf(),
        }]);
    }
    let mut out = Vec::new();
    let mut it = walkdir::WalkDir::new(root)
        .follow_links(false)
        .max_depth(limits.max_tree_depth)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter();
    while let Some(entry) = it.next() {
        let entry = entry.map_err(|e| SignError::Tree(e.to_string()))?;
        let rel_path = entry
            .path()
            .strip_prefix(root)
            .map_err(|e| SignError::Tree(e.to_string()))?;
        let mut comps = Vec::new();
        for c in rel_path.components() {
            let s = c.as_os_str().to_str().ok_or_else(|| {
                SignError::Tree(format!(
                    "{}: file name is not UTF-8",
                    entry.path().display()
                ))
            })?;
            comps.push(s);
        }
        let ft = entry.file_type();
        if ignore.covers(&comps) {
            if ft.is_dir() {
                it.skip_current_dir();
            }
            continue;
        }
        if ft.is_symlink() {
            return Err(SignError::Tree(format!(
                "{} is a symlink (symlinks are not allowed in a signed model)",
                comps.join("/")
            )));
        }
        if ft.is_dir() {
            continue;
        }
        if !ft.is_file() {
            return Err(SignError::Tree(format!(
                "{} is not a regular file or directory",
                comps.join("/")
            )));
        }
        if out.len() as u64 >= limits.max_files {
            return Err(SignError::TooLarge {
                what: "files in the tree",
                len: out.len() as u64 + 1,
                max: limits.max_files,
            });
        }
        out.push(TreeFile {
            rel: comps.join("/"),
            abs: entry.path().to_path_buf(),
        });
    }
    // walkdir sorts siblings by name, which already is component order; sort anyway so the
    // order never depends on the walker.
    out.sort_by(|a, b| a.rel.split('/').cmp(b.rel.split('/')));
    Ok(out)
}

/// Computes the resources of `files` under `serialization` (files hashed in parallel).
pub fn hash_files(
    files: &[TreeFile],
    serialization: &Serialization,
) -> Result<Vec<Resource>, SignError> {
    let shard = match serialization {
        Serialization::Files { .. } => None,
        Serialization::Shards { shard_size, .. } => Some(*shard_size),
    };
    let per_file: Vec<Result<Vec<Resource>, SignError>> =
        files.par_iter().map(|f| hash_one(f, shard)).collect();
    let mut out = Vec::new();
    for r in per_file {
        out.extend(r?);
    }
    Ok(out)
}

fn hash_one(f: &TreeFile, shard: Option<u64>) -> Result<Vec<Resource>, SignError> {
    let err = |e: std::io::Error| SignError::Tree(format!("{}: {e}", f.rel));
    let mut file = crate::inspect::open_regular(&f.abs).map_err(err)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut out = Vec::new();
    // Whole files, often gigabytes: the file-hashing SHA-256 (src/inspect/read.rs).
    let mut h = Sha256Stream::new();
    let mut pos: u64 = 0;
    let mut start: u64 = 0;
    loop {
        // Within a shard, never read past its end so each piece is hashed on its own.
        let want = match shard {
            Some(size) => ((start + size - pos) as usize).min(buf.len()),
            None => buf.len(),
        };
        let n = file.read(&mut buf[..want]).map_err(err)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        pos += n as u64;
        if let Some(size) = shard
            && pos - start == size
        {
            out.push(Resource {
                name: format!("{}:{start}:{pos}", f.rel),
                digest: std::mem::take(&mut h).finish(),
            });
            start = pos;
        }
    }
    match shard {
        None => out.push(Resource {
            name: f.rel.clone(),
            digest: h.finish(),
        }),
        Some(_) if pos > start => out.push(Resource {
            name: format!("{}:{start}:{pos}", f.rel),
            digest: h.finish(),
        }),
        Some(_) => {}
    }
    Ok(out)
}

/// A file whose content differs from the signed manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Changed {
    /// Path relative to the root.
    pub path: String,
    /// Signed SHA-256 (files method only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// SHA-256 found (files method only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

/// How the tree compares with the signed manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TreeDiff {
    /// Files the manifest lists.
    pub checked: u64,
    /// Listed files that match.
    pub ok: u64,
    /// Listed files whose content differs.
    pub changed: Vec<Changed>,
    /// Listed files that are gone.
    pub missing: Vec<String>,
    /// Files present but not listed (and not ignored).
    pub added: Vec<String>,
}

impl TreeDiff {
    /// No difference.
    pub fn is_clean(&self) -> bool {
        self.changed.is_empty() && self.missing.is_empty() && self.added.is_empty()
    }
}

/// Compares the signed resources with the tree's, per file.
pub fn diff(expected: &Manifest, actual: &[Resource]) -> TreeDiff {
    let sharded = matches!(expected.serialization, Serialization::Shards { .. });
    let group = |rs: &[Resource]| -> BTreeMap<String, Vec<(String, [u8; 32])>> {
        let mut m: BTreeMap<String, Vec<(String, [u8; 32])>> = BTreeMap::new();
        for r in rs {
            let path = if sharded {
                split_shard_name(&r.name).map_or(r.name.as_str(), |(p, _, _)| p)
            } else {
                r.name.as_str()
            };
            m.entry(path.to_string())
                .or_default()
                .push((r.name.clone(), r.digest));
        }
        for v in m.values_mut() {
            v.sort();
        }
        m
    };
    let exp = group(&expected.resources);
    let act = group(actual);
    let mut d = TreeDiff {
        checked: exp.len() as u64,
        ..TreeDiff::default()
    };
    for (path, e) in &exp {
        match act.get(path) {
            None => d.missing.push(path.clone()),
            Some(a) if a == e => d.ok += 1,
            Some(a) => d.changed.push(Changed {
                path: path.clone(),
                expected: (!sharded).then(|| hex(&e[0].1)),
                actual: (!sharded).then(|| hex(&a[0].1)),
            }),
        }
    }
    d.added = act
        .keys()
        .filter(|p| !exp.contains_key(*p))
        .cloned()
        .collect();
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(ignore: &[&str]) -> Serialization {
        Serialization::Files {
            hash: HashType::Sha256,
            ignore_paths: ignore.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn tree(entries: &[(&str, &[u8])]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, c) in entries {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c).unwrap();
        }
        d
    }

    #[test]
    fn ignore_matches_whole_components_from_root() {
        let mut s = IgnoreSet::default();
        s.add(".git").unwrap();
        s.add("sub/model.sig").unwrap();
        assert!(s.covers(&[".git"]));
        assert!(s.covers(&[".git", "HEAD"]));
        assert!(!s.covers(&[".gitx"]));
        assert!(!s.covers(&["sub", ".git"]));
        assert!(s.covers(&["sub", "model.sig"]));
        assert!(!s.covers(&["model.sig"]));
    }

    #[test]
    fn ignore_drops_paths_outside_and_refuses_root() {
        let mut s = IgnoreSet::default();
        s.add("../x").unwrap();
        assert!(s.to_strings().is_empty());
        assert!(matches!(s.add("."), Err(SignError::Tree(_))));
    }

    #[test]
    fn walks_sorted_and_skips_ignored() {
        let d = tree(&[
            ("b.bin", b"b"),
            ("a/x", b"x"),
            (".git/HEAD", b"h"),
            ("a.b", b"ab"),
            ("model.sig", b"{}"),
        ]);
        let mut ig = IgnoreSet::default();
        ig.add_git_paths();
        ig.add("model.sig").unwrap();
        let f = walk_tree(d.path(), &ig, &Limits::default()).unwrap();
        let names: Vec<_> = f.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(names, ["a/x", "a.b", "b.bin"]);
    }

    #[cfg(unix)]
    #[test]
    fn rejects_symlink() {
        let d = tree(&[("a", b"x")]);
        std::os::unix::fs::symlink(d.path().join("a"), d.path().join("l")).unwrap();
        let e = walk_tree(d.path(), &IgnoreSet::default(), &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
    }

    #[test]
    fn enforces_file_limit() {
        let d = tree(&[("a", b"1"), ("b", b"2")]);
        let l = Limits {
            max_files: 1,
            ..Limits::default()
        };
        assert!(matches!(
            walk_tree(d.path(), &IgnoreSet::default(), &l),
            Err(SignError::TooLarge { .. })
        ));
    }

    #[test]
    fn shards_cut_at_shard_size_and_skip_empty_files() {
        let d = tree(&[("f", b"0123456789"), ("e", b"")]);
        let s = Serialization::Shards {
            hash: HashType::Sha256,
            shard_size: 4,
            ignore_paths: vec![],
        };
        let f = walk_tree(d.path(), &IgnoreSet::default(), &Limits::default()).unwrap();
        let r = hash_files(&f, &s).unwrap();
        let names: Vec<_> = r.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["f:0:4", "f:4:8", "f:8:10"]);
        assert_eq!(r[2].digest, <[u8; 32]>::from(Sha256::digest(b"89")));
    }

    #[test]
    fn diff_names_changed_missing_added() {
        let m = Manifest::new(
            "m".into(),
            files(&[]),
            vec![
                Resource {
                    name: "a".into(),
                    digest: [1; 32],
                },
                Resource {
                    name: "b".into(),
                    digest: [2; 32],
                },
                Resource {
                    name: "c".into(),
                    digest: [3; 32],
                },
            ],
        )
        .unwrap();
        let actual = vec![
            Resource {
                name: "a".into(),
                digest: [1; 32],
            },
            Resource {
                name: "b".into(),
                digest: [9; 32],
            },
            Resource {
                name: "d".into(),
                digest: [4; 32],
            },
        ];
        let d = diff(&m, &actual);
        assert_eq!(d.ok, 1);
        assert_eq!(d.changed[0].path, "b");
        assert_eq!(d.missing, ["c"]);
        assert_eq!(d.added, ["d"]);
    }

    #[test]
    fn rejects_duplicate_resource() {
        let r = Resource {
            name: "a".into(),
            digest: [1; 32],
        };
        assert!(Manifest::new("m".into(), files(&[]), vec![r.clone(), r]).is_err());
    }
}
