//! The git revision a scan looked at: commit, branch, tags, remote, and what is not committed.
//!
//! A scan result is only worth something if it names exactly which bytes were scanned. This
//! module wraps `git2` at the edge: the rest of modelgate sees [`GitState`] and [`GitInfo`], never
//! a `git2` type. Being outside a repository is a state ([`GitState::NotARepository`], PRV001), not
//! an error. Uncommitted and untracked files under the scan root (PRV002) and weights that were
//! never committed (PRV003, via [`GitInfo::is_tracked`]) are reported because a scan of a dirty
//! tree certifies a revision that does not exist anywhere else.
//!
//! The scanned repository is attacker-controlled, `.git/config` included. libgit2 (unlike the
//! `git` binary) never runs hooks, `core.fsmonitor` or external filter drivers, so reading status
//! here executes nothing. The remote URL is stripped of credentials before it reaches a report.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use git2::{ErrorCode, Repository, RepositoryOpenFlags, Status, StatusOptions};
use serde::Serialize;

/// Bounds for what is read from a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Most dirty entries recorded; beyond it `dirty_truncated` is set.
    pub max_dirty_entries: usize,
    /// Most tracked paths (index entries under the scan root) kept for [`GitInfo::is_tracked`].
    pub max_tracked_paths: usize,
    /// Most tag references examined when looking for tags on HEAD.
    pub max_tag_refs: usize,
    /// Most submodule paths recorded.
    pub max_submodules: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_dirty_entries: 1_000,
            max_tracked_paths: 1_000_000,
            max_tag_refs: 100_000,
            max_submodules: 1_000,
        }
    }
}

/// Where the scan root stands with respect to git.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "info", rename_all = "kebab-case")]
pub enum GitState {
    /// No repository at or above the scan root (PRV001).
    NotARepository,
    /// The scan root is in a repository.
    Repository(Box<GitInfo>),
    /// A repository was found but could not be read; the message says why.
    Error(String),
}

/// How a path differs from the committed revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DirtyState {
    /// Changed in the work tree, not staged.
    Modified,
    /// Staged (added or changed in the index) but not committed.
    Staged,
    /// Present in the work tree, unknown to git and not ignored.
    Untracked,
    /// Deleted in the index or the work tree.
    Deleted,
    /// Renamed in the index.
    Renamed,
    /// Unresolved merge conflict.
    Conflicted,
}

/// One uncommitted change under the scan root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct DirtyEntry {
    /// Path relative to the scan root, `/`-separated.
    pub path: String,
    /// What kind of change.
    pub state: DirtyState,
}

/// Facts about the repository containing the scan root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GitInfo {
    /// HEAD commit, 40 hex; `None` on an unborn branch (no commits yet).
    pub commit: Option<String>,
    /// Checked-out branch name (`main`, `feature/x`); `None` when HEAD is detached.
    pub branch: Option<String>,
    /// HEAD points at a commit, not a branch (usual in CI checkouts).
    pub detached: bool,
    /// Tags (annotated and lightweight) whose target is the HEAD commit, sorted.
    pub tags: Vec<String>,
    /// URL of `origin`, credentials removed by [`sanitize_url`].
    pub remote: Option<String>,
    /// The clone is shallow (history cut off; usual in CI).
    pub shallow: bool,
    /// The repository has no work tree.
    pub bare: bool,
    /// The scan root lies inside the git directory itself (e.g. `.git/objects`).
    pub in_git_dir: bool,
    /// Scan root relative to the work tree (`""` at the top, `models/x` below it);
    /// `None` for a bare repository or a root inside the git directory.
    pub workdir_prefix: Option<String>,
    /// Uncommitted changes under the scan root, sorted by path.
    pub dirty: Vec<DirtyEntry>,
    /// More than `Limits::max_dirty_entries` changes existed.
    pub dirty_truncated: bool,
    /// Submodule paths (gitlinks in the index) under the scan root, relative to it, sorted.
    pub submodules: Vec<String>,
    /// How many tracked paths under the scan root were recorded.
    pub tracked_count: usize,
    /// More than `Limits::max_tracked_paths` were tracked; unrecorded paths read as untracked.
    pub tracked_truncated: bool,
    #[serde(skip)]
    tracked: BTreeSet<String>,
}

impl GitInfo {
    /// Is `rel_path` (relative to the scan root, `/`-separated) in the index?
    ///
    /// A file staged but not yet committed counts as tracked and shows up in `dirty` as
    /// [`DirtyState::Staged`]. Past `max_tracked_paths` the answer errs towards "not tracked",
    /// so an oversized index yields extra findings rather than hiding weights.
    pub fn is_tracked(&self, rel_path: &str) -> bool {
        self.tracked.contains(rel_path)
    }

    /// Is anything under the scan root uncommitted?
    pub fn is_dirty(&self) -> bool {
        !self.dirty.is_empty() || self.dirty_truncated
    }
}

/// Find the repository containing `scan_root` (searching parent directories, as `git` does).
pub fn discover(scan_root: &Path) -> GitState {
    discover_with(scan_root, &Limits::default(), &[])
}

/// Like [`discover`], with explicit limits and ceiling directories: the upward search stops
/// before entering any of `ceiling_dirs` (as `GIT_CEILING_DIRECTORIES` does).
///
/// Scanning `repo/models/x` must find `repo`, so discovery walks up by default; ceilings exist
/// for callers (and tests) that must not pick up an unrelated enclosing repository.
pub fn discover_with(scan_root: &Path, limits: &Limits, ceiling_dirs: &[PathBuf]) -> GitState {
    let root = match fs::canonicalize(scan_root) {
        Ok(root) => root,
        Err(e) => {
            return GitState::Error(format!(
                "cannot resolve scan root {}: {e}",
                scan_root.display()
            ));
        }
    };
    let repo = match Repository::open_ext(&root, RepositoryOpenFlags::empty(), ceiling_dirs) {
        Ok(repo) => repo,
        Err(e) => return open_error_state(&e, &root),
    };
    match read_info(&repo, &root, limits) {
        Ok(info) => GitState::Repository(Box::new(info)),
        Err(message) => GitState::Error(message),
    }
}

/// The author of the HEAD commit of the repository holding `scan_root`, as git writes it
/// (`Name <email>`), for the SBOM's `metadata.authors` when the user asks for it. `None` outside
/// a repository, on an unborn branch, or when the name is not UTF-8. Bounded: a name or email
/// longer than 256 characters is cut.
pub fn head_author(scan_root: &Path) -> Option<String> {
    let root = fs::canonicalize(scan_root).ok()?;
    let repo = Repository::open_ext(&root, RepositoryOpenFlags::empty(), &[] as &[&Path]).ok()?;
    let commit = repo.head().ok()?.peel_to_commit().ok()?;
    let author = commit.author();
    let cut = |s: &str| s.chars().take(256).collect::<String>();
    let name = cut(author.name()?.trim());
    let email = cut(author.email()?.trim());
    match (name.is_empty(), email.is_empty()) {
        (true, true) => None,
        (false, true) => Some(name),
        (true, false) => Some(format!("<{email}>")),
        (false, false) => Some(format!("{name} <{email}>")),
    }
}

/// Map a failure to open a repository to a state.
fn open_error_state(e: &git2::Error, root: &Path) -> GitState {
    match e.code() {
        ErrorCode::NotFound => GitState::NotARepository,
        // libgit2 refuses repositories owned by another user (CVE-2022-24765 hardening). Turning
        // the check off needs an `unsafe` global switch, which this crate forbids; the user can
        // mark the directory safe instead.
        ErrorCode::Owner => GitState::Error(format!(
            "repository containing {} is owned by another user and was not opened; \
             if it is trusted, run `git config --global --add safe.directory <repository path>` ({})",
            root.display(),
            e.message()
        )),
        _ => GitState::Error(format!(
            "cannot open git repository for {}: {}",
            root.display(),
            e.message()
        )),
    }
}

fn read_info(repo: &Repository, root: &Path, limits: &Limits) -> Result<GitInfo, String> {
    let bare = repo.is_bare();
    let git_dir = fs::canonicalize(repo.path()).unwrap_or_else(|_| repo.path().to_path_buf());
    let in_git_dir = root.starts_with(&git_dir);

    let workdir_prefix = match (repo.workdir(), in_git_dir) {
        (Some(workdir), false) => {
            let workdir = fs::canonicalize(workdir)
                .map_err(|e| format!("cannot resolve work tree {}: {e}", workdir.display()))?;
            // `core.worktree` in an attacker's config can point anywhere (`/`); a status walk of
            // that would scan the whole machine, so only a root inside the work tree is read.
            let prefix = root.strip_prefix(&workdir).map_err(|_| {
                format!(
                    "scan root {} is outside the work tree {} of the repository at {}",
                    root.display(),
                    workdir.display(),
                    git_dir.display()
                )
            })?;
            Some(path_to_slash(prefix)?)
        }
        _ => None,
    };

    let head = read_head(repo)?;
    let mut info = GitInfo {
        tags: match &head.commit {
            Some(commit) => tags_at(repo, commit, limits),
            None => Vec::new(),
        },
        commit: head.commit,
        branch: head.branch,
        detached: head.detached,
        remote: repo
            .find_remote("origin")
            .ok()
            .and_then(|r| r.url().map(sanitize_url)),
        shallow: repo.is_shallow(),
        bare,
        in_git_dir,
        workdir_prefix: workdir_prefix.clone(),
        dirty: Vec::new(),
        dirty_truncated: false,
        submodules: Vec::new(),
        tracked_count: 0,
        tracked_truncated: false,
        tracked: BTreeSet::new(),
    };
    if let Some(prefix) = workdir_prefix {
        read_status(repo, &prefix, limits, &mut info)?;
        read_index(repo, &prefix, limits, &mut info)?;
    }
    Ok(info)
}

struct Head {
    commit: Option<String>,
    branch: Option<String>,
    detached: bool,
}

fn read_head(repo: &Repository) -> Result<Head, String> {
    match repo.head() {
        Ok(head) => {
            let detached = repo.head_detached().unwrap_or(false);
            let commit = head.peel_to_commit().ok().map(|c| c.id().to_string());
            let branch = if detached {
                None
            } else {
                head.name()
                    .and_then(|n| n.strip_prefix("refs/heads/"))
                    .or_else(|| head.shorthand())
                    .map(str::to_owned)
            };
            Ok(Head {
                commit,
                branch,
                detached,
            })
        }
        Err(e) if e.code() == ErrorCode::UnbornBranch || e.code() == ErrorCode::NotFound => {
            let branch = repo.find_reference("HEAD").ok().and_then(|r| {
                r.symbolic_target()
                    .and_then(|t| t.strip_prefix("refs/heads/"))
                    .map(str::to_owned)
            });
            Ok(Head {
                commit: None,
                branch,
                detached: false,
            })
        }
        Err(e) => Err(format!("cannot read head: {}", e.message())),
    }
}

fn tags_at(repo: &Repository, commit: &str, limits: &Limits) -> Vec<String> {
    let Ok(refs) = repo.references_glob("refs/tags/*") else {
        return Vec::new();
    };
    let mut tags: Vec<String> = refs
        .take(limits.max_tag_refs)
        .flatten()
        .filter(|r| {
            r.peel_to_commit()
                .is_ok_and(|c| c.id().to_string() == commit)
        })
        .filter_map(|r| {
            let name = String::from_utf8_lossy(r.name_bytes()).into_owned();
            name.strip_prefix("refs/tags/").map(str::to_owned)
        })
        .collect();
    tags.sort();
    tags.dedup();
    tags
}

fn read_status(
    repo: &Repository,
    prefix: &str,
    limits: &Limits,
    info: &mut GitInfo,
) -> Result<(), String> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .include_unmodified(false)
        .exclude_submodules(true)
        .renames_head_to_index(true);
    if !prefix.is_empty() {
        // Literal, so a directory named `[ab]*` is not read as a glob.
        opts.pathspec(prefix).disable_pathspec_match(true);
    }
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| format!("cannot read git status: {}", e.message()))?;
    for entry in statuses.iter() {
        let status = entry.status();
        let Some(state) = dirty_state(status) else {
            continue;
        };
        let renamed_to = if status.contains(Status::INDEX_RENAMED) {
            entry
                .head_to_index()
                .and_then(|d| d.new_file().path_bytes().map(<[u8]>::to_vec))
        } else {
            None
        };
        let path_bytes = renamed_to.unwrap_or_else(|| entry.path_bytes().to_vec());
        let Some(rel) = strip_prefix_bytes(&path_bytes, prefix) else {
            continue;
        };
        if info.dirty.len() >= limits.max_dirty_entries {
            info.dirty_truncated = true;
            break;
        }
        info.dirty.push(DirtyEntry { path: rel, state });
    }
    info.dirty.sort();
    Ok(())
}

/// One state per entry; the most serious change wins when index and work tree both differ.
fn dirty_state(s: Status) -> Option<DirtyState> {
    if s.is_conflicted() {
        Some(DirtyState::Conflicted)
    } else if s.intersects(Status::INDEX_DELETED | Status::WT_DELETED) {
        Some(DirtyState::Deleted)
    } else if s.intersects(Status::INDEX_RENAMED | Status::WT_RENAMED) {
        Some(DirtyState::Renamed)
    } else if s.contains(Status::WT_NEW) {
        Some(DirtyState::Untracked)
    } else if s.intersects(Status::WT_MODIFIED | Status::WT_TYPECHANGE) {
        Some(DirtyState::Modified)
    } else if s.intersects(Status::INDEX_NEW | Status::INDEX_MODIFIED | Status::INDEX_TYPECHANGE) {
        Some(DirtyState::Staged)
    } else {
        None
    }
}

/// Gitlink entries (mode 160000) in the index are submodules.
const GITLINK_MODE: u32 = 0o160_000;

fn read_index(
    repo: &Repository,
    prefix: &str,
    limits: &Limits,
    info: &mut GitInfo,
) -> Result<(), String> {
    let index = repo
        .index()
        .map_err(|e| format!("cannot read git index: {}", e.message()))?;
    for entry in index.iter() {
        let Some(rel) = strip_prefix_bytes(&entry.path, prefix) else {
            continue;
        };
        if entry.mode & 0o170_000 == GITLINK_MODE {
            if info.submodules.len() < limits.max_submodules {
                info.submodules.push(rel);
            }
            continue;
        }
        if info.tracked.len() >= limits.max_tracked_paths {
            info.tracked_truncated = true;
            continue;
        }
        info.tracked.insert(rel);
    }
    info.tracked_count = info.tracked.len();
    info.submodules.sort();
    info.submodules.dedup();
    Ok(())
}

/// `models/a.bin` with prefix `models` → `a.bin`; `None` when the path is not under the prefix.
fn strip_prefix_bytes(path: &[u8], prefix: &str) -> Option<String> {
    let rest = if prefix.is_empty() {
        path
    } else {
        path.strip_prefix(prefix.as_bytes())?.strip_prefix(b"/")?
    };
    if rest.is_empty() {
        return None;
    }
    Some(String::from_utf8_lossy(rest).into_owned())
}

fn path_to_slash(path: &Path) -> Result<String, String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component.as_os_str().to_str() {
            Some(part) => parts.push(part),
            None => return Err(format!("path {} is not valid utf-8", path.display())),
        }
    }
    Ok(parts.join("/"))
}

/// Remove credentials from a remote URL so it can be printed in a report.
///
/// - `scheme://user:password@host/...`: for http(s) and every scheme but ssh, the whole userinfo
///   goes (a lone "user" is often a token: `https://ghp_xxx@github.com/...`); for `ssh`,
///   `git+ssh` and `ssh+git` the user name stays and the password goes. Query and fragment are
///   dropped too, since `?access_token=` is another place credentials hide.
/// - scp-like `user@host:path` keeps its user; a `user:password@` form loses the password.
/// - Local paths and `file://` URLs are kept as they are.
/// - Control characters become `%XX` so a crafted URL cannot forge lines in a text report.
pub fn sanitize_url(url: &str) -> String {
    let cleaned = escape_controls(url.trim());
    if let Some((scheme, rest)) = split_scheme(&cleaned) {
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = rest.get(..authority_end).unwrap_or("");
        let tail = rest.get(authority_end..).unwrap_or("");
        let host_part = match authority.rfind('@') {
            Some(at) => {
                let userinfo = authority.get(..at).unwrap_or("");
                let hostport = authority.get(at.saturating_add(1)..).unwrap_or("");
                let user = userinfo.split(':').next().unwrap_or("");
                if keeps_user(scheme) && !user.is_empty() {
                    format!("{user}@{hostport}")
                } else {
                    hostport.to_owned()
                }
            }
            None => authority.to_owned(),
        };
        let path = tail.split(['?', '#']).next().unwrap_or("");
        return format!("{scheme}://{host_part}{path}");
    }
    let head_end = cleaned.find('/').unwrap_or(cleaned.len());
    let head = cleaned.get(..head_end).unwrap_or("");
    match head.rfind('@') {
        Some(at) => {
            let userinfo = head.get(..at).unwrap_or("");
            let rest = cleaned.get(at.saturating_add(1)..).unwrap_or("");
            let user = userinfo.split(':').next().unwrap_or("");
            if user.is_empty() {
                rest.to_owned()
            } else {
                format!("{user}@{rest}")
            }
        }
        None => cleaned,
    }
}

/// `scheme://rest` with a syntactically valid scheme.
fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (first_ok && rest_ok).then_some((scheme, rest))
}

fn keeps_user(scheme: &str) -> bool {
    matches!(
        scheme.to_ascii_lowercase().as_str(),
        "ssh" | "git+ssh" | "ssh+git"
    )
}

fn escape_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A hosted repository named by a remote URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remote {
    /// Lowercased host name without port or user (`github.com`).
    pub host: String,
    /// Repository path without leading `/` or trailing `.git` (`org/repo`).
    pub path: String,
}

/// Split a network remote URL (`https`, `http`, `ssh`, `git`, scp-like) into host and path.
///
/// `None` for local paths, `file://` URLs and anything without both a host and a path.
pub fn parse_remote(url: &str) -> Option<Remote> {
    let url = url.trim();
    let (host, path) = if let Some((scheme, rest)) = split_scheme(url) {
        let scheme = scheme.to_ascii_lowercase();
        if !matches!(
            scheme.as_str(),
            "https" | "http" | "ssh" | "git" | "git+ssh" | "ssh+git"
        ) {
            return None;
        }
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = rest.get(..authority_end)?;
        let hostport = match authority.rfind('@') {
            Some(at) => authority.get(at.saturating_add(1)..)?,
            None => authority,
        };
        let host = if hostport.starts_with('[') {
            hostport.get(..=hostport.find(']')?)?
        } else {
            hostport.split(':').next()?
        };
        let path = rest.get(authority_end..)?.split(['?', '#']).next()?;
        (host, path)
    } else {
        // scp-like: [user@]host:path, where the colon comes before any slash.
        let colon = url.find(':')?;
        if url.find('/').is_some_and(|slash| slash < colon) {
            return None;
        }
        let head = url.get(..colon)?;
        let host = match head.rfind('@') {
            Some(at) => head.get(at.saturating_add(1)..)?,
            None => head,
        };
        // `C:\repo` is a Windows path, not a host named `C`.
        if host.len() == 1 {
            return None;
        }
        (host, url.get(colon.saturating_add(1)..)?)
    };
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    if host.is_empty() || path.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '/') {
        return None;
    }
    Some(Remote {
        host: host.to_ascii_lowercase(),
        path: path.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{IndexEntry, IndexTime, Oid, RepositoryInitOptions, Signature, Time};

    /// A temp dir whose parent is used as a ceiling, so no enclosing repository is found.
    struct Fixture {
        tmp: tempfile::TempDir,
        ceiling: Vec<PathBuf>,
    }

    impl Fixture {
        fn new() -> Self {
            let tmp = tempfile::tempdir().unwrap();
            let parent = fs::canonicalize(tmp.path()).unwrap();
            let ceiling = parent.parent().map(Path::to_path_buf).into_iter().collect();
            Self { tmp, ceiling }
        }

        fn path(&self) -> &Path {
            self.tmp.path()
        }

        fn init(&self) -> Repository {
            let mut opts = RepositoryInitOptions::new();
            opts.initial_head("main");
            Repository::init_opts(self.path(), &opts).unwrap()
        }

        fn write(&self, rel: &str, content: &str) {
            let path = self.path().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, content).unwrap();
        }

        fn discover(&self, rel: &str) -> GitState {
            discover_with(&self.path().join(rel), &Limits::default(), &self.ceiling)
        }

        fn info(&self, rel: &str) -> GitInfo {
            match self.discover(rel) {
                GitState::Repository(info) => *info,
                other => panic!("expected a repository, got {other:?}"),
            }
        }
    }

    fn stage(repo: &Repository, paths: &[&str]) {
        let mut index = repo.index().unwrap();
        for p in paths {
            index.add_path(Path::new(p)).unwrap();
        }
        index.write().unwrap();
    }

    fn commit(repo: &Repository, message: &str) -> Oid {
        let sig = Signature::new("t", "t@example.com", &Time::new(1_700_000_000, 0)).unwrap();
        let mut index = repo.index().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap()
    }

    #[test]
    fn reports_not_a_repository() {
        let fx = Fixture::new();
        fx.write("model.bin", "x");
        assert_eq!(fx.discover(""), GitState::NotARepository);
    }

    #[test]
    fn missing_scan_root_is_an_error() {
        let fx = Fixture::new();
        assert!(matches!(fx.discover("missing"), GitState::Error(m) if m.contains("missing")));
    }

    #[test]
    fn clean_repository() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("model.safetensors", "weights");
        stage(&repo, &["model.safetensors"]);
        let oid = commit(&repo, "init");
        let info = fx.info("");
        assert_eq!(info.commit, Some(oid.to_string()));
        assert_eq!(info.branch.as_deref(), Some("main"));
        assert!(!info.detached && !info.shallow && !info.bare && !info.in_git_dir);
        assert!(info.dirty.is_empty() && !info.is_dirty());
        assert_eq!(info.workdir_prefix.as_deref(), Some(""));
        assert!(info.is_tracked("model.safetensors"));
        assert_eq!(info.tracked_count, 1);
        assert_eq!(info.remote, None);
        assert!(info.tags.is_empty());
    }

    #[test]
    fn dirty_entries_only_under_scan_root() {
        let fx = Fixture::new();
        let repo = fx.init();
        for p in [
            "models/a.bin",
            "models/b.bin",
            "models/c.bin",
            "models/d.bin",
            "other/x.txt",
        ] {
            fx.write(p, p);
        }
        stage(
            &repo,
            &[
                "models/a.bin",
                "models/b.bin",
                "models/c.bin",
                "models/d.bin",
                "other/x.txt",
            ],
        );
        commit(&repo, "init");
        fx.write("models/a.bin", "changed");
        fx.write("models/b.bin", "staged change");
        fx.write("models/new.bin", "new");
        stage(&repo, &["models/b.bin", "models/new.bin"]);
        fx.write("models/sub/untracked.bin", "u");
        fs::remove_file(fx.path().join("models/c.bin")).unwrap();
        fx.write("other/x.txt", "changed outside the root");
        fx.write("other/untracked.txt", "outside");

        let info = fx.info("models");
        assert_eq!(info.workdir_prefix.as_deref(), Some("models"));
        let got: Vec<(&str, DirtyState)> = info
            .dirty
            .iter()
            .map(|d| (d.path.as_str(), d.state))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a.bin", DirtyState::Modified),
                ("b.bin", DirtyState::Staged),
                ("c.bin", DirtyState::Deleted),
                ("new.bin", DirtyState::Staged),
                ("sub/untracked.bin", DirtyState::Untracked),
            ]
        );
        assert!(info.is_tracked("a.bin"));
        assert!(info.is_tracked("d.bin"));
        assert!(!info.is_tracked("sub/untracked.bin"));
        assert!(!info.is_tracked("other/x.txt"));
        assert!(!info.is_tracked("../other/x.txt"));
    }

    #[test]
    fn untracked_weights_are_not_tracked() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("README.md", "card");
        stage(&repo, &["README.md"]);
        commit(&repo, "init");
        fx.write("pytorch_model.bin", "weights");
        let info = fx.info("");
        assert!(info.is_tracked("README.md"));
        assert!(!info.is_tracked("pytorch_model.bin"));
        assert_eq!(
            info.dirty,
            vec![DirtyEntry {
                path: "pytorch_model.bin".into(),
                state: DirtyState::Untracked
            }]
        );
    }

    #[test]
    fn ignored_files_are_not_dirty_and_not_tracked() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write(".gitignore", "*.bin\n");
        stage(&repo, &[".gitignore"]);
        commit(&repo, "init");
        fx.write("model.bin", "weights");
        let info = fx.info("");
        assert!(info.dirty.is_empty());
        assert!(!info.is_tracked("model.bin"));
    }

    #[test]
    fn renamed_entry_reports_new_path() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("old.bin", "same content for rename detection");
        stage(&repo, &["old.bin"]);
        commit(&repo, "init");
        fs::rename(fx.path().join("old.bin"), fx.path().join("new.bin")).unwrap();
        let mut index = repo.index().unwrap();
        index.remove_path(Path::new("old.bin")).unwrap();
        index.add_path(Path::new("new.bin")).unwrap();
        index.write().unwrap();
        let info = fx.info("");
        assert_eq!(
            info.dirty,
            vec![DirtyEntry {
                path: "new.bin".into(),
                state: DirtyState::Renamed
            }]
        );
    }

    #[test]
    fn dirty_entries_are_bounded() {
        let fx = Fixture::new();
        fx.init();
        for n in 0..5 {
            fx.write(&format!("f{n}"), "x");
        }
        let limits = Limits {
            max_dirty_entries: 2,
            max_tracked_paths: 0,
            ..Limits::default()
        };
        let GitState::Repository(info) = discover_with(fx.path(), &limits, &fx.ceiling) else {
            panic!("not a repository");
        };
        assert_eq!(info.dirty.len(), 2);
        assert!(info.dirty_truncated && info.is_dirty());
    }

    #[test]
    fn tracked_paths_are_bounded() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("a", "1");
        fx.write("b", "2");
        stage(&repo, &["a", "b"]);
        commit(&repo, "init");
        let limits = Limits {
            max_tracked_paths: 1,
            ..Limits::default()
        };
        let GitState::Repository(info) = discover_with(fx.path(), &limits, &fx.ceiling) else {
            panic!("not a repository");
        };
        assert_eq!(info.tracked_count, 1);
        assert!(info.tracked_truncated);
        assert!(info.is_tracked("a") && !info.is_tracked("b"));
    }

    #[test]
    fn detached_head() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("a", "1");
        stage(&repo, &["a"]);
        let oid = commit(&repo, "init");
        repo.set_head_detached(oid).unwrap();
        let info = fx.info("");
        assert!(info.detached);
        assert_eq!(info.branch, None);
        assert_eq!(info.commit, Some(oid.to_string()));
    }

    #[test]
    fn tags_on_head_annotated_and_lightweight() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("a", "1");
        stage(&repo, &["a"]);
        let first = commit(&repo, "first");
        fx.write("a", "2");
        stage(&repo, &["a"]);
        let second = commit(&repo, "second");
        let sig = Signature::new("t", "t@example.com", &Time::new(1_700_000_000, 0)).unwrap();
        let first_obj = repo.find_object(first, None).unwrap();
        let second_obj = repo.find_object(second, None).unwrap();
        repo.tag_lightweight("old", &first_obj, false).unwrap();
        repo.tag_lightweight("v1", &second_obj, false).unwrap();
        repo.tag("v1.0", &second_obj, &sig, "release", false)
            .unwrap();
        repo.tag("release/2024", &second_obj, &sig, "nested", false)
            .unwrap();
        let info = fx.info("");
        assert_eq!(info.tags, vec!["release/2024", "v1", "v1.0"]);
    }

    #[test]
    fn remote_credentials_are_stripped() {
        let fx = Fixture::new();
        let repo = fx.init();
        repo.remote("origin", "https://user:s3cret@github.com/org/repo.git")
            .unwrap();
        let info = fx.info("");
        assert_eq!(
            info.remote.as_deref(),
            Some("https://github.com/org/repo.git")
        );
    }

    #[test]
    fn unborn_repository() {
        let fx = Fixture::new();
        fx.init();
        fx.write("model.bin", "w");
        let info = fx.info("");
        assert_eq!(info.commit, None);
        assert_eq!(info.branch.as_deref(), Some("main"));
        assert!(!info.detached);
        assert!(info.tags.is_empty());
        assert!(!info.is_tracked("model.bin"));
        assert_eq!(info.dirty.len(), 1);
    }

    #[test]
    fn shallow_clone() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("a", "1");
        stage(&repo, &["a"]);
        let oid = commit(&repo, "init");
        fs::write(fx.path().join(".git/shallow"), format!("{oid}\n")).unwrap();
        let info = fx.info("");
        assert!(info.shallow);
        assert_eq!(info.commit, Some(oid.to_string()));
    }

    #[test]
    fn bare_repository() {
        let fx = Fixture::new();
        Repository::init_bare(fx.path()).unwrap();
        let info = fx.info("");
        assert!(info.bare);
        assert_eq!(info.workdir_prefix, None);
        assert!(info.dirty.is_empty());
    }

    #[test]
    fn scan_root_inside_git_dir() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("a", "1");
        stage(&repo, &["a"]);
        commit(&repo, "init");
        let info = fx.info(".git/objects");
        assert!(info.in_git_dir);
        assert_eq!(info.workdir_prefix, None);
        assert!(info.dirty.is_empty());
        assert!(!info.is_tracked("a"));
    }

    #[test]
    fn submodule_gitlinks_are_reported() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("a", "1");
        stage(&repo, &["a"]);
        let oid = commit(&repo, "init");
        let mut index = repo.index().unwrap();
        index
            .add(&IndexEntry {
                ctime: IndexTime::new(0, 0),
                mtime: IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o160_000,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: oid,
                flags: 0,
                flags_extended: 0,
                path: b"vendor/lib".to_vec(),
            })
            .unwrap();
        index.write().unwrap();
        commit(&repo, "add submodule");
        let info = fx.info("");
        assert_eq!(info.submodules, vec!["vendor/lib"]);
        assert!(!info.is_tracked("vendor/lib"));
    }

    #[test]
    fn conflicted_entry() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("a.bin", "base");
        stage(&repo, &["a.bin"]);
        let oid = commit(&repo, "init");
        let blob = repo
            .head()
            .unwrap()
            .peel_to_tree()
            .unwrap()
            .get_name("a.bin")
            .unwrap()
            .id();
        let mut index = repo.index().unwrap();
        index.remove_path(Path::new("a.bin")).unwrap();
        for stage_no in 1u16..=3 {
            index
                .add(&IndexEntry {
                    ctime: IndexTime::new(0, 0),
                    mtime: IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: 0o100_644,
                    uid: 0,
                    gid: 0,
                    file_size: 0,
                    id: blob,
                    flags: stage_no << 12,
                    flags_extended: 0,
                    path: b"a.bin".to_vec(),
                })
                .unwrap();
        }
        index.write().unwrap();
        assert!(repo.index().unwrap().has_conflicts());
        let info = fx.info("");
        assert_eq!(info.commit, Some(oid.to_string()));
        assert_eq!(
            info.dirty,
            vec![DirtyEntry {
                path: "a.bin".into(),
                state: DirtyState::Conflicted
            }]
        );
        assert!(info.is_tracked("a.bin"));
    }

    #[test]
    fn owner_refusal_is_a_clear_error() {
        let e = git2::Error::new(ErrorCode::Owner, git2::ErrorClass::Config, "not owned");
        let state = open_error_state(&e, Path::new("/srv/repo"));
        assert!(matches!(state, GitState::Error(m) if m.contains("safe.directory")));
        let e = git2::Error::new(ErrorCode::NotFound, git2::ErrorClass::Repository, "none");
        assert_eq!(
            open_error_state(&e, Path::new("/x")),
            GitState::NotARepository
        );
    }

    #[test]
    fn worktree_outside_scan_root_is_an_error() {
        let fx = Fixture::new();
        let repo = fx.init();
        fx.write("inner/a", "1");
        let elsewhere = fx.path().join("inner");
        repo.config()
            .unwrap()
            .set_str("core.worktree", elsewhere.to_str().unwrap())
            .unwrap();
        // The scan root (the repository top) is above the configured work tree.
        assert!(
            matches!(fx.discover(""), GitState::Error(m) if m.contains("outside the work tree"))
        );
    }

    #[test]
    fn sanitizes_urls() {
        let cases = [
            ("https://user:token@host/x", "https://host/x"),
            (
                "https://ghp_abc123@github.com/org/repo.git",
                "https://github.com/org/repo.git",
            ),
            ("https://user:pw@host:8443/p?x=1", "https://host:8443/p"),
            ("https://host/p?access_token=abc#frag", "https://host/p"),
            ("http://a:b@c@evil.example/r", "http://evil.example/r"),
            ("HTTPS://u:p@Host/x", "HTTPS://Host/x"),
            (
                "ssh://git@github.com/org/repo.git",
                "ssh://git@github.com/org/repo.git",
            ),
            ("ssh://git:pw@host:2222/r", "ssh://git@host:2222/r"),
            ("git+ssh://:pw@host/r", "git+ssh://host/r"),
            ("git://host/r.git", "git://host/r.git"),
            ("file:///srv/repos/r.git", "file:///srv/repos/r.git"),
            ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
            ("user:pw@host:org/repo", "user@host:org/repo"),
            ("/srv/repos/r.git", "/srv/repos/r.git"),
            ("../sibling", "../sibling"),
            ("", ""),
            ("not a url", "not a url"),
            ("://@@@", "://@@@"),
            ("@", ""),
            ("https://", "https://"),
            ("https://host/x\ninjected", "https://host/x%0Ainjected"),
            ("  https://t@h/x  ", "https://h/x"),
        ];
        for (input, expected) in cases {
            assert_eq!(sanitize_url(input), expected, "input {input:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn sanitize_url_removes_passwords(
            user in "[a-z]{1,8}", pw in "[A-Za-z0-9]{6,12}", host in "[a-z]{1,8}\\.com",
        ) {
            for scheme in ["https", "http", "ssh"] {
                let url = format!("{scheme}://{user}:{pw}@{host}/org/repo");
                let out = sanitize_url(&url);
                proptest::prop_assert!(!out.contains(&pw), "{out}");
            }
        }

        #[test]
        fn url_helpers_never_panic(s in "\\PC{0,80}") {
            let _ = sanitize_url(&s);
            let _ = parse_remote(&s);
        }
    }

    #[test]
    fn parses_remotes() {
        let r = |host: &str, path: &str| {
            Some(Remote {
                host: host.into(),
                path: path.into(),
            })
        };
        assert_eq!(
            parse_remote("https://github.com/org/repo.git"),
            r("github.com", "org/repo")
        );
        assert_eq!(
            parse_remote("https://u:p@GitHub.com:443/org/repo/"),
            r("github.com", "org/repo")
        );
        assert_eq!(
            parse_remote("git@github.com:org/repo.git"),
            r("github.com", "org/repo")
        );
        assert_eq!(
            parse_remote("ssh://git@host:2222/org/repo"),
            r("host", "org/repo")
        );
        assert_eq!(
            parse_remote("https://huggingface.co/org/model"),
            r("huggingface.co", "org/model")
        );
        assert_eq!(
            parse_remote("https://[::1]:8080/a/b.git"),
            r("[::1]", "a/b")
        );
        assert_eq!(parse_remote("file:///srv/r.git"), None);
        assert_eq!(parse_remote("/srv/r.git"), None);
        assert_eq!(parse_remote("C:\\repos\\r"), None);
        assert_eq!(parse_remote("https://host"), None);
        assert_eq!(parse_remote("garbage"), None);
        assert_eq!(parse_remote(""), None);
    }
}
