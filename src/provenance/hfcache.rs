//! Recognise a Hugging Face hub cache and say which repository and commit each file belongs to.
//!
//! `huggingface_hub` stores downloads as
//! `hub/<type>s--<org>--<name>/{blobs/<hash>, refs/<ref>, snapshots/<40-hex commit>/<path>}`, where
//! each snapshot file is a symlink into `../../blobs/<hash>`. Scanning a cache is how a team checks
//! what it is about to load, so the scanner reports the repository id and commit of every file
//! (provenance) and checks that the cache was not edited after download (tamper): a blob's name is
//! the digest of its content, so a backdoored `modeling_*.py` or a swapped weight file no longer
//! matches its name, and a snapshot symlink that leaves the repository's `blobs/` directory points
//! at something the hub never served.
//!
//! Blob names are either 64 lowercase hex (SHA-256 of the content, used for LFS files, i.e.
//! weights) or 40 lowercase hex (the git blob SHA-1, `sha1("blob <len>\0" + content)`, used for
//! small non-LFS files: configs, tokenizers and remote code). Both are verifiable: the SHA-256 from
//! the digest the scanner computes anyway, the git SHA-1 with [`GitBlobHasher`]. SHA-1 is weak
//! against a chosen-prefix attacker, but that attacker would also have to get the colliding blob
//! onto the hub; here it only has to catch edits made after download.
//!
//! Only directory listings, symlink targets and `refs/*` files (capped, never followed when they
//! are symlinks) are read here; nothing is executed or fetched.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use sha1::{Digest, Sha1};

/// Bounds for reading a cache layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Most directory entries read from any one directory (hub, `snapshots/`, `refs/`).
    pub max_dir_entries: usize,
    /// Most repositories recorded for a hub directory.
    pub max_repos: usize,
    /// Most snapshots recorded per repository.
    pub max_snapshots: usize,
    /// Most refs recorded per repository (`refs/main`, `refs/pr/1`, ...).
    pub max_refs: usize,
    /// Largest `refs/*` file read; a ref is 40 hex digits.
    pub max_ref_bytes: u64,
    /// How many ancestors of the scan root are examined for a `snapshots/<commit>` parent.
    pub max_ancestor_depth: usize,
    /// Most problems recorded per repository.
    pub max_problems: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_dir_entries: 100_000,
            max_repos: 10_000,
            max_snapshots: 1_000,
            max_refs: 1_000,
            max_ref_bytes: 256,
            max_ancestor_depth: 64,
            max_problems: 1_000,
        }
    }
}

/// The kind of hub repository, from the directory prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RepoType {
    /// `models--`
    Model,
    /// `datasets--`
    Dataset,
    /// `spaces--`
    Space,
}

impl RepoType {
    /// The directory-name prefix, e.g. `models--`.
    pub fn prefix(self) -> &'static str {
        match self {
            RepoType::Model => "models--",
            RepoType::Dataset => "datasets--",
            RepoType::Space => "spaces--",
        }
    }
}

/// What the scan root is within the cache layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CacheRoot {
    /// The `hub/` directory holding `models--*` etc.
    Hub,
    /// One `models--org--name` directory.
    Repo,
    /// `snapshots/<commit>` of one repository, or a directory inside it.
    Snapshot {
        /// The snapshot's commit.
        commit: String,
        /// Where the scan root sits inside the snapshot (`""` for the snapshot itself).
        prefix: String,
    },
}

/// A problem with the cache layout, a likely sign of tampering or damage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheProblem {
    /// Stable kebab-case sub-code: `bad-snapshot-name`, `bad-ref`, `ref-not-file`,
    /// `ref-without-snapshot`, `not-in-snapshot`, `symlink-outside-blobs`, `bad-blob-name`,
    /// `too-many-entries`.
    pub code: &'static str,
    /// The path concerned, relative to the scan root when it lies inside it.
    pub path: String,
    /// Lowercase description with the data.
    pub message: String,
}

/// One cached hub repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CachedRepo {
    /// Model, dataset or space.
    pub repo_type: RepoType,
    /// `org/name`, or `name` for ids without an organisation.
    pub repo_id: String,
    /// The repository directory relative to the scan root (`""` unless the root is the hub).
    pub dir: String,
    /// Commits present under `snapshots/`, sorted.
    pub snapshots: Vec<String>,
    /// `refs/<name>` → commit, e.g. `main` → 40-hex.
    pub refs: BTreeMap<String, String>,
    /// Layout problems found while reading.
    pub problems: Vec<CacheProblem>,
    #[serde(skip)]
    abs_dir: PathBuf,
}

/// A recognised hub cache at the scan root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HfCache {
    /// What the scan root is.
    pub root: CacheRoot,
    /// The repositories found, sorted by directory name.
    pub repos: Vec<CachedRepo>,
    /// True when a hub held more repositories than `Limits::max_repos`.
    pub repos_truncated: bool,
    #[serde(skip)]
    abs_root: PathBuf,
}

/// Which repository, commit and in-repo path a scanned file belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotFile {
    /// Model, dataset or space.
    pub repo_type: RepoType,
    /// `org/name`.
    pub repo_id: String,
    /// The snapshot commit (40 hex).
    pub commit: String,
    /// The file's path inside the hub repository.
    pub path_in_repo: String,
}

/// Parse a cache directory name: `models--org--name` → (Model, `org/name`).
///
/// The hub forbids `--` inside repository ids, and the cache joins org and name with a single
/// `--`, so the split is made at the FIRST `--` after the type prefix. Anything after a second
/// `--` stays in the name (such a directory was not written by the hub client).
pub fn parse_repo_dir_name(name: &str) -> Option<(RepoType, String)> {
    for repo_type in [RepoType::Model, RepoType::Dataset, RepoType::Space] {
        let Some(rest) = name.strip_prefix(repo_type.prefix()) else {
            continue;
        };
        if rest.is_empty() {
            return None;
        }
        return match rest.split_once("--") {
            Some((org, repo)) if !org.is_empty() && !repo.is_empty() => {
                Some((repo_type, format!("{org}/{repo}")))
            }
            Some(_) => None,
            None => Some((repo_type, rest.to_owned())),
        };
    }
    None
}

/// Is `s` a full git commit id (40 lowercase hex)?
pub fn is_commit_hex(s: &str) -> bool {
    is_lower_hex(s, 40)
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The kind of digest a blob's file name claims for its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "method", content = "hex", rename_all = "kebab-case")]
pub enum BlobName {
    /// 64 hex: SHA-256 of the content (LFS files).
    Sha256(String),
    /// 40 hex: git blob SHA-1 of the content (non-LFS files).
    GitSha1(String),
}

/// Classify a blob file name; `None` when it is neither digest form.
pub fn classify_blob_name(name: &str) -> Option<BlobName> {
    if is_lower_hex(name, 64) {
        Some(BlobName::Sha256(name.to_owned()))
    } else if is_lower_hex(name, 40) {
        Some(BlobName::GitSha1(name.to_owned()))
    } else {
        None
    }
}

/// The SHA-256 (lowercase hex) a blob's content must have, for 64-hex blob names.
///
/// 40-hex names are git blob SHA-1s, not SHA-256: this returns `None` for them; check those with
/// [`GitBlobHasher`] and [`verify_blob`].
pub fn expected_blob_digest(blob_file_name: &str) -> Option<String> {
    match classify_blob_name(blob_file_name) {
        Some(BlobName::Sha256(hex)) => Some(hex),
        _ => None,
    }
}

/// Streaming git blob id: `sha1("blob <len>\0" + content)`, as `git hash-object` computes it.
#[derive(Debug, Clone)]
pub struct GitBlobHasher {
    hasher: Sha1,
}

impl GitBlobHasher {
    /// Start hashing a blob whose content is `len` bytes (the header needs the length first).
    pub fn new(len: u64) -> Self {
        let mut hasher = Sha1::new();
        hasher.update(format!("blob {len}\0").as_bytes());
        Self { hasher }
    }

    /// Feed the next block of content.
    pub fn update(&mut self, block: &[u8]) {
        self.hasher.update(block);
    }

    /// The 40 lowercase hex id. Wrong if fewer or more than `len` bytes were fed.
    pub fn finish(self) -> String {
        to_hex(&self.hasher.finalize())
    }
}

/// The git blob id of `content`.
pub fn git_blob_sha1(content: &[u8]) -> String {
    let mut hasher = GitBlobHasher::new(u64::try_from(content.len()).unwrap_or(u64::MAX));
    hasher.update(content);
    hasher.finish()
}

fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len().saturating_mul(2));
    for &b in bytes {
        out.push(char::from(
            HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'),
        ));
        out.push(char::from(
            HEX.get(usize::from(b & 0xf)).copied().unwrap_or(b'0'),
        ));
    }
    out
}

/// Outcome of checking a blob's content against its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum BlobCheck {
    /// The content matches the name.
    Match,
    /// The content does not match: the blob was edited after download (tamper).
    Mismatch {
        /// The digest the name claims.
        expected: String,
        /// The digest of the content.
        actual: String,
    },
    /// The name is not a digest, or the needed digest was not computed.
    Unverifiable,
}

/// Check a blob against its name, given the content's SHA-256 and (for 40-hex names) git SHA-1.
pub fn verify_blob(blob_name: &str, sha256_hex: &str, git_sha1_hex: Option<&str>) -> BlobCheck {
    let (expected, actual) = match classify_blob_name(blob_name) {
        Some(BlobName::Sha256(expected)) => (expected, sha256_hex.to_ascii_lowercase()),
        Some(BlobName::GitSha1(expected)) => match git_sha1_hex {
            Some(actual) => (expected, actual.to_ascii_lowercase()),
            None => return BlobCheck::Unverifiable,
        },
        None => return BlobCheck::Unverifiable,
    };
    if expected == actual {
        BlobCheck::Match
    } else {
        BlobCheck::Mismatch { expected, actual }
    }
}

/// Recognise a hub cache at `scan_root` with default [`Limits`].
pub fn detect(scan_root: &Path) -> Option<HfCache> {
    detect_with(scan_root, &Limits::default())
}

/// Recognise a hub cache at `scan_root`: the hub directory itself, one `models--org--name`
/// directory, or a `snapshots/<commit>` directory (or a directory inside one).
pub fn detect_with(scan_root: &Path, limits: &Limits) -> Option<HfCache> {
    let abs_root = fs::canonicalize(scan_root).ok()?;

    if let Some((repo_type, repo_id)) = repo_dir_identity(&abs_root) {
        let repo = read_repo(&abs_root, repo_type, repo_id, String::new(), limits);
        return Some(HfCache {
            root: CacheRoot::Repo,
            repos: vec![repo],
            repos_truncated: false,
            abs_root,
        });
    }

    if let Some((snapshot_dir, commit)) = enclosing_snapshot(&abs_root, limits) {
        let repo_dir = snapshot_dir.parent()?.parent()?;
        let (repo_type, repo_id) = repo_dir_identity(repo_dir)?;
        let prefix = rel_string(abs_root.strip_prefix(&snapshot_dir).ok()?)?;
        let repo = read_repo(repo_dir, repo_type, repo_id, String::new(), limits);
        return Some(HfCache {
            root: CacheRoot::Snapshot { commit, prefix },
            repos: vec![repo],
            repos_truncated: false,
            abs_root,
        });
    }

    let mut names = list_dir_names(&abs_root, limits.max_dir_entries).0;
    names.sort();
    let mut repos = Vec::new();
    let mut repos_truncated = false;
    for name in names {
        let dir = abs_root.join(&name);
        let Some((repo_type, repo_id)) = repo_dir_identity(&dir) else {
            continue;
        };
        if repos.len() >= limits.max_repos {
            repos_truncated = true;
            break;
        }
        repos.push(read_repo(&dir, repo_type, repo_id, name, limits));
    }
    if repos.is_empty() {
        return None;
    }
    Some(HfCache {
        root: CacheRoot::Hub,
        repos,
        repos_truncated,
        abs_root,
    })
}

/// A directory named like a cache repo that has at least one of the cache subdirectories.
fn repo_dir_identity(dir: &Path) -> Option<(RepoType, String)> {
    let name = dir.file_name()?.to_str()?;
    let identity = parse_repo_dir_name(name)?;
    let meta = fs::symlink_metadata(dir).ok()?;
    if !meta.is_dir() {
        return None;
    }
    let has_layout = ["snapshots", "blobs", "refs"]
        .iter()
        .any(|sub| fs::symlink_metadata(dir.join(sub)).is_ok_and(|m| m.is_dir()));
    has_layout.then_some(identity)
}

/// The nearest ancestor (or self) of `abs_root` named `<40-hex>` inside a `snapshots` directory.
fn enclosing_snapshot(abs_root: &Path, limits: &Limits) -> Option<(PathBuf, String)> {
    for dir in abs_root.ancestors().take(limits.max_ancestor_depth) {
        let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !is_commit_hex(name) {
            continue;
        }
        let parent_is_snapshots = dir
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "snapshots");
        if parent_is_snapshots {
            return Some((dir.to_path_buf(), name.to_owned()));
        }
    }
    None
}

/// Names of the entries of `dir`, at most `max`; the flag says the listing was cut.
fn list_dir_names(dir: &Path, max: usize) -> (Vec<String>, bool) {
    let Ok(entries) = fs::read_dir(dir) else {
        return (Vec::new(), false);
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        if names.len() >= max {
            return (names, true);
        }
        if let Some(name) = entry.file_name().to_str() {
            names.push(name.to_owned());
        }
    }
    (names, false)
}

fn push_problem(repo: &mut CachedRepo, limits: &Limits, problem: CacheProblem) {
    if repo.problems.len() < limits.max_problems {
        repo.problems.push(problem);
    }
}

fn join_rel(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_owned()
    } else {
        format!("{dir}/{rest}")
    }
}

fn read_repo(
    abs_dir: &Path,
    repo_type: RepoType,
    repo_id: String,
    dir: String,
    limits: &Limits,
) -> CachedRepo {
    let mut repo = CachedRepo {
        repo_type,
        repo_id,
        dir,
        snapshots: Vec::new(),
        refs: BTreeMap::new(),
        problems: Vec::new(),
        abs_dir: abs_dir.to_path_buf(),
    };

    let (mut names, cut) = list_dir_names(&abs_dir.join("snapshots"), limits.max_dir_entries);
    names.sort();
    if cut {
        let path = join_rel(&repo.dir, "snapshots");
        push_problem(
            &mut repo,
            limits,
            CacheProblem {
                code: "too-many-entries",
                path,
                message: format!("more than {} entries", limits.max_dir_entries),
            },
        );
    }
    for name in names {
        if !is_commit_hex(&name) {
            let path = join_rel(&repo.dir, &format!("snapshots/{name}"));
            push_problem(
                &mut repo,
                limits,
                CacheProblem {
                    code: "bad-snapshot-name",
                    path,
                    message: format!("snapshot directory {name:?} is not a 40-hex commit"),
                },
            );
            continue;
        }
        if repo.snapshots.len() < limits.max_snapshots {
            repo.snapshots.push(name);
        }
    }

    read_refs(&mut repo, limits);
    let dangling: Vec<(String, String)> = repo
        .refs
        .iter()
        .filter(|(_, commit)| repo.snapshots.binary_search(commit).is_err())
        .map(|(name, commit)| (name.clone(), commit.clone()))
        .collect();
    for (name, commit) in dangling {
        let path = join_rel(&repo.dir, &format!("refs/{name}"));
        push_problem(
            &mut repo,
            limits,
            CacheProblem {
                code: "ref-without-snapshot",
                path,
                message: format!("ref {name:?} names commit {commit} with no snapshot directory"),
            },
        );
    }
    repo
}

/// Read `refs/<name>` and `refs/<a>/<b>` (e.g. `refs/pr/1`): two levels, as the hub writes them.
fn read_refs(repo: &mut CachedRepo, limits: &Limits) {
    let refs_dir = repo.abs_dir.join("refs");
    let mut pending: Vec<String> = list_dir_names(&refs_dir, limits.max_dir_entries).0;
    pending.sort();
    let mut queue: Vec<String> = Vec::new();
    for name in pending {
        let path = refs_dir.join(&name);
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            let mut inner = list_dir_names(&path, limits.max_dir_entries).0;
            inner.sort();
            queue.extend(inner.into_iter().map(|n| format!("{name}/{n}")));
        } else {
            queue.push(name);
        }
    }
    for name in queue {
        if repo.refs.len() >= limits.max_refs {
            break;
        }
        let rel = join_rel(&repo.dir, &format!("refs/{name}"));
        match read_ref(&refs_dir.join(&name), limits) {
            Ok(commit) => {
                repo.refs.insert(name, commit);
            }
            Err((code, message)) => push_problem(
                repo,
                limits,
                CacheProblem {
                    code,
                    path: rel,
                    message,
                },
            ),
        }
    }
}

fn read_ref(path: &Path, limits: &Limits) -> Result<String, (&'static str, String)> {
    // A ref that is a symlink could make the scanner read any file on the machine; a ref is
    // always a plain file written by the hub client.
    let meta = fs::symlink_metadata(path).map_err(|e| ("bad-ref", format!("cannot stat: {e}")))?;
    if !meta.is_file() {
        return Err((
            "ref-not-file",
            "ref is not a regular file (symlink or directory)".to_owned(),
        ));
    }
    let file = fs::File::open(path).map_err(|e| ("bad-ref", format!("cannot open: {e}")))?;
    let mut buf = Vec::new();
    file.take(limits.max_ref_bytes)
        .read_to_end(&mut buf)
        .map_err(|e| ("bad-ref", format!("cannot read: {e}")))?;
    let text = std::str::from_utf8(&buf).unwrap_or("").trim_end();
    if is_commit_hex(text) {
        Ok(text.to_owned())
    } else {
        Err((
            "bad-ref",
            format!(
                "ref content is not a 40-hex commit ({} bytes read)",
                buf.len()
            ),
        ))
    }
}

/// Resolve `..` and `.` without touching the file system.
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn rel_string(path: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

impl HfCache {
    /// How a scan rooted at `root` (where this cache was detected) walks it: the containment
    /// root links may resolve inside, and the directories to hide. Blobs are reached through
    /// their snapshots only (reports and SBOMs list `snapshots/<rev>/...` paths with the blob's
    /// digest); a snapshot root may follow its links up to the repository's `blobs/`.
    pub fn walk_layout(&self, root: &Path) -> (Option<PathBuf>, Vec<String>) {
        match &self.root {
            CacheRoot::Hub => (
                None,
                self.repos
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

    /// The repository, commit and in-repo path of `rel_path` (relative to the scan root,
    /// `/`-separated), when it lies inside a snapshot.
    pub fn snapshot_of(&self, rel_path: &str) -> Option<SnapshotFile> {
        let (repo, commit, path_in_repo) = self.locate(rel_path)?;
        Some(SnapshotFile {
            repo_type: repo.repo_type,
            repo_id: repo.repo_id.clone(),
            commit,
            path_in_repo,
        })
    }

    /// For a file under a repository's `blobs/` (relative to the scan root), its blob name.
    pub fn blob_name_of(&self, rel_path: &str) -> Option<String> {
        if matches!(self.root, CacheRoot::Snapshot { .. }) {
            return None;
        }
        let repo = self.repo_for(rel_path)?;
        let inside = strip_dir(rel_path, &repo.dir)?;
        let name = inside.strip_prefix("blobs/")?;
        (!name.is_empty() && !name.contains('/')).then(|| name.to_owned())
    }

    /// Check the symlink at `rel_path` (relative to the scan root) whose target (as read with
    /// `read_link`) is `link_target`: it must resolve into its own repository's `blobs/`
    /// directory and name a digest. Returns the blob name on success.
    ///
    /// A snapshot link aimed elsewhere (another repository's blobs, `/etc`, a second copy of the
    /// weights) substitutes content the hub never served for this commit.
    pub fn blob_for_symlink(
        &self,
        rel_path: &str,
        link_target: &Path,
    ) -> Result<String, CacheProblem> {
        let problem = |code: &'static str, message: String| CacheProblem {
            code,
            path: rel_path.to_owned(),
            message,
        };
        let Some((repo, _, _)) = self.locate(rel_path) else {
            return Err(problem(
                "not-in-snapshot",
                "symlink is not inside a snapshot directory".to_owned(),
            ));
        };
        let link_abs = self.abs_root.join(rel_path);
        let link_dir = link_abs.parent().unwrap_or(&self.abs_root);
        let resolved = normalize_lexically(&link_dir.join(link_target));
        let blobs_dir = repo.abs_dir.join("blobs");
        let inside = resolved
            .strip_prefix(&blobs_dir)
            .ok()
            .and_then(rel_string)
            .filter(|name| !name.is_empty() && !name.contains('/'));
        let Some(name) = inside else {
            return Err(problem(
                "symlink-outside-blobs",
                format!(
                    "symlink target {:?} does not resolve into the repository's blobs directory",
                    link_target.display().to_string()
                ),
            ));
        };
        if classify_blob_name(&name).is_none() {
            return Err(problem(
                "bad-blob-name",
                format!("blob name {name:?} is neither 64-hex sha-256 nor 40-hex git sha-1"),
            ));
        }
        Ok(name)
    }

    fn repo_for(&self, rel_path: &str) -> Option<&CachedRepo> {
        match self.root {
            CacheRoot::Hub => {
                let first = rel_path.split('/').next()?;
                self.repos.iter().find(|r| r.dir == first)
            }
            CacheRoot::Repo | CacheRoot::Snapshot { .. } => self.repos.first(),
        }
    }

    fn locate(&self, rel_path: &str) -> Option<(&CachedRepo, String, String)> {
        let repo = self.repo_for(rel_path)?;
        if let CacheRoot::Snapshot { commit, prefix } = &self.root {
            if rel_path.is_empty() {
                return None;
            }
            return Some((repo, commit.clone(), join_rel(prefix, rel_path)));
        }
        let inside = strip_dir(rel_path, &repo.dir)?;
        let rest = inside.strip_prefix("snapshots/")?;
        let (commit, path_in_repo) = rest.split_once('/')?;
        if !is_commit_hex(commit) || path_in_repo.is_empty() {
            return None;
        }
        Some((repo, commit.to_owned(), path_in_repo.to_owned()))
    }
}

fn strip_dir<'a>(rel_path: &'a str, dir: &str) -> Option<&'a str> {
    if dir.is_empty() {
        Some(rel_path)
    } else {
        rel_path.strip_prefix(dir)?.strip_prefix('/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C1: &str = "0123456789abcdef0123456789abcdef01234567";
    const C2: &str = "89abcdef0123456789abcdef0123456789abcdef";
    const B64: &str = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

    /// hub/models--org--name with two snapshots, refs/main → C1, refs/pr/1 → C2, and a
    /// weight symlinked into blobs; plus datasets--squad.
    fn build_hub() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("models--org--name");
        fs::create_dir_all(repo.join("blobs")).unwrap();
        fs::create_dir_all(repo.join("refs/pr")).unwrap();
        fs::create_dir_all(repo.join(format!("snapshots/{C1}/sub"))).unwrap();
        fs::create_dir_all(repo.join(format!("snapshots/{C2}"))).unwrap();
        fs::write(repo.join(format!("blobs/{B64}")), b"weights").unwrap();
        fs::write(repo.join("refs/main"), C1).unwrap();
        fs::write(repo.join("refs/pr/1"), format!("{C2}\n")).unwrap();
        std::os::unix::fs::symlink(
            format!("../../blobs/{B64}"),
            repo.join(format!("snapshots/{C1}/model.safetensors")),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            format!("../../../blobs/{B64}"),
            repo.join(format!("snapshots/{C1}/sub/model.safetensors")),
        )
        .unwrap();
        let ds = tmp.path().join("datasets--squad");
        fs::create_dir_all(ds.join("snapshots")).unwrap();
        fs::create_dir_all(tmp.path().join(".locks")).unwrap();
        tmp
    }

    #[test]
    fn parses_repo_dir_names() {
        assert_eq!(
            parse_repo_dir_name("models--org--name"),
            Some((RepoType::Model, "org/name".to_owned()))
        );
        assert_eq!(
            parse_repo_dir_name("datasets--squad"),
            Some((RepoType::Dataset, "squad".to_owned()))
        );
        assert_eq!(
            parse_repo_dir_name("spaces--a--b--c"),
            Some((RepoType::Space, "a/b--c".to_owned()))
        );
        assert_eq!(parse_repo_dir_name("models--"), None);
        assert_eq!(parse_repo_dir_name("models----x"), None);
        assert_eq!(parse_repo_dir_name("model--x"), None);
    }

    #[test]
    fn detects_hub_directory() {
        let tmp = build_hub();
        let cache = detect(tmp.path()).unwrap();
        assert_eq!(cache.root, CacheRoot::Hub);
        assert_eq!(cache.repos.len(), 2);
        let model = cache
            .repos
            .iter()
            .find(|r| r.repo_type == RepoType::Model)
            .unwrap();
        assert_eq!(model.repo_id, "org/name");
        assert_eq!(model.snapshots, vec![C1.to_owned(), C2.to_owned()]);
        assert_eq!(model.refs.get("main").map(String::as_str), Some(C1));
        assert_eq!(model.refs.get("pr/1").map(String::as_str), Some(C2));
        assert!(model.problems.is_empty(), "{:?}", model.problems);

        let file = cache
            .snapshot_of(&format!(
                "models--org--name/snapshots/{C1}/sub/model.safetensors"
            ))
            .unwrap();
        assert_eq!(file.repo_id, "org/name");
        assert_eq!(file.commit, C1);
        assert_eq!(file.path_in_repo, "sub/model.safetensors");
        assert_eq!(cache.snapshot_of("models--org--name/refs/main"), None);
        assert_eq!(cache.snapshot_of("elsewhere/x"), None);
        assert_eq!(
            cache.blob_name_of(&format!("models--org--name/blobs/{B64}")),
            Some(B64.to_owned())
        );
    }

    #[test]
    fn detects_repo_directory() {
        let tmp = build_hub();
        let cache = detect(&tmp.path().join("models--org--name")).unwrap();
        assert_eq!(cache.root, CacheRoot::Repo);
        let file = cache
            .snapshot_of(&format!("snapshots/{C2}/config.json"))
            .unwrap();
        assert_eq!(file.commit, C2);
        assert_eq!(file.path_in_repo, "config.json");
    }

    #[test]
    fn detects_snapshot_directory_and_subdirectory() {
        let tmp = build_hub();
        let snap = tmp.path().join(format!("models--org--name/snapshots/{C1}"));
        let cache = detect(&snap).unwrap();
        assert!(
            matches!(&cache.root, CacheRoot::Snapshot { commit, prefix } if commit == C1 && prefix.is_empty())
        );
        let file = cache.snapshot_of("model.safetensors").unwrap();
        assert_eq!(
            (file.repo_id.as_str(), file.commit.as_str()),
            ("org/name", C1)
        );

        let cache = detect(&snap.join("sub")).unwrap();
        let file = cache.snapshot_of("model.safetensors").unwrap();
        assert_eq!(file.path_in_repo, "sub/model.safetensors");
        assert_eq!(
            cache
                .blob_for_symlink(
                    "model.safetensors",
                    Path::new(&format!("../../../blobs/{B64}"))
                )
                .unwrap(),
            B64
        );
    }

    #[test]
    fn plain_directory_is_not_a_cache() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("models")).unwrap();
        fs::create_dir_all(tmp.path().join("models--x")).unwrap(); // no cache layout inside
        assert_eq!(detect(tmp.path()), None);
        assert_eq!(detect(&tmp.path().join("missing")), None);
    }

    #[test]
    fn accepts_symlink_into_own_blobs() {
        let tmp = build_hub();
        let cache = detect(tmp.path()).unwrap();
        let rel = format!("models--org--name/snapshots/{C1}/model.safetensors");
        let target = fs::read_link(tmp.path().join(&rel)).unwrap();
        assert_eq!(cache.blob_for_symlink(&rel, &target).unwrap(), B64);
        let rel = format!("models--org--name/snapshots/{C1}/sub/model.safetensors");
        let target = fs::read_link(tmp.path().join(&rel)).unwrap();
        assert_eq!(cache.blob_for_symlink(&rel, &target).unwrap(), B64);
        // Absolute targets (written when a relative link is impossible) are accepted too.
        let abs = fs::canonicalize(tmp.path())
            .unwrap()
            .join(format!("models--org--name/blobs/{B64}"));
        assert_eq!(cache.blob_for_symlink(&rel, &abs).unwrap(), B64);
    }

    #[test]
    fn rejects_symlink_outside_blobs() {
        let tmp = build_hub();
        let cache = detect(tmp.path()).unwrap();
        let rel = format!("models--org--name/snapshots/{C1}/model.safetensors");
        for target in [
            "/etc/passwd".to_owned(),
            format!("../../../datasets--squad/blobs/{B64}"),
            format!("../blobs/{B64}"),
            "../../blobs".to_owned(),
        ] {
            let err = cache
                .blob_for_symlink(&rel, Path::new(&target))
                .unwrap_err();
            assert_eq!(err.code, "symlink-outside-blobs", "{target}");
        }
    }

    #[test]
    fn rejects_bad_blob_name() {
        let tmp = build_hub();
        let cache = detect(tmp.path()).unwrap();
        let rel = format!("models--org--name/snapshots/{C1}/model.safetensors");
        let err = cache
            .blob_for_symlink(&rel, Path::new("../../blobs/evil"))
            .unwrap_err();
        assert_eq!(err.code, "bad-blob-name");
    }

    #[test]
    fn rejects_symlink_not_in_snapshot() {
        let tmp = build_hub();
        let cache = detect(tmp.path()).unwrap();
        let err = cache
            .blob_for_symlink("models--org--name/refs/main", Path::new("x"))
            .unwrap_err();
        assert_eq!(err.code, "not-in-snapshot");
    }

    #[test]
    fn reports_bad_snapshot_name_and_refs() {
        let tmp = build_hub();
        let repo = tmp.path().join("models--org--name");
        fs::create_dir_all(repo.join("snapshots/not-a-commit")).unwrap();
        fs::write(repo.join("refs/bad"), "zzz").unwrap();
        fs::write(repo.join("refs/gone"), "f".repeat(40)).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", repo.join("refs/linked")).unwrap();
        let cache = detect(&repo).unwrap();
        let codes: Vec<&str> = cache.repos[0].problems.iter().map(|p| p.code).collect();
        assert!(codes.contains(&"bad-snapshot-name"), "{codes:?}");
        assert!(codes.contains(&"bad-ref"), "{codes:?}");
        assert!(codes.contains(&"ref-not-file"), "{codes:?}");
        assert!(codes.contains(&"ref-without-snapshot"), "{codes:?}");
        assert!(!cache.repos[0].refs.contains_key("linked"));
    }

    #[test]
    fn reports_too_many_entries() {
        let tmp = build_hub();
        let repo = tmp.path().join("models--org--name");
        let limits = Limits {
            max_dir_entries: 1,
            ..Limits::default()
        };
        let cache = detect_with(&repo, &limits).unwrap();
        assert!(
            cache.repos[0]
                .problems
                .iter()
                .any(|p| p.code == "too-many-entries")
        );
    }

    #[test]
    fn blob_digests() {
        assert_eq!(expected_blob_digest(B64), Some(B64.to_owned()));
        assert_eq!(expected_blob_digest(C1), None);
        assert_eq!(expected_blob_digest(&B64.to_ascii_uppercase()), None);
        assert_eq!(
            classify_blob_name(C1),
            Some(BlobName::GitSha1(C1.to_owned()))
        );
        assert_eq!(classify_blob_name("x"), None);
    }

    #[test]
    fn git_blob_sha1_matches_git() {
        // `printf 'hello\n' | git hash-object --stdin` and the empty blob.
        assert_eq!(
            git_blob_sha1(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        assert_eq!(
            git_blob_sha1(b""),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
        let mut h = GitBlobHasher::new(6);
        h.update(b"hel");
        h.update(b"lo\n");
        assert_eq!(h.finish(), "ce013625030ba8dba906f756967f9e9ca394464a");
    }

    #[test]
    fn verify_blob_outcomes() {
        assert_eq!(verify_blob(B64, B64, None), BlobCheck::Match);
        assert!(matches!(
            verify_blob(B64, &"0".repeat(64), None),
            BlobCheck::Mismatch { .. }
        ));
        let sha1 = git_blob_sha1(b"hello\n");
        assert_eq!(verify_blob(&sha1, B64, Some(&sha1)), BlobCheck::Match);
        assert!(matches!(
            verify_blob(&sha1, B64, Some(C1)),
            BlobCheck::Mismatch { .. }
        ));
        assert_eq!(verify_blob(&sha1, B64, None), BlobCheck::Unverifiable);
        assert_eq!(verify_blob("README", B64, None), BlobCheck::Unverifiable);
    }
}
