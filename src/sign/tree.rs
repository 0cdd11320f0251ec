//! Checking a model tree against a signed manifest: [`check_tree`] rehashes the files with the
//! manifest's serialization and ignores, and [`VerifyOptions`] says what else to ignore and when.

use std::path::Path;

use super::error::SignError;
use super::limits::Limits;
use super::manifest::{self, IgnoreSet, Manifest, TreeDiff};

/// Options for checking the tree.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Seconds since the epoch: when certificate chains must be valid (certificate method).
    pub now: i64,
    /// Extra root-relative paths to ignore (the signature file's path when inside the tree).
    pub ignore_paths: Vec<String>,
    /// Ignore the reference's git paths (its default).
    pub ignore_git_paths: bool,
}

/// Recomputes the tree's resources with the signed serialization and compares.
pub fn check_tree(
    root: &Path,
    expected: &Manifest,
    opts: &VerifyOptions,
    limits: &Limits,
) -> Result<TreeDiff, SignError> {
    let mut ignore = IgnoreSet::default();
    if opts.ignore_git_paths {
        ignore.add_git_paths();
    }
    for p in expected.serialization.ignore_paths() {
        // A recorded path that would cover the whole model is signed nonsense: refuse it.
        ignore.add(p)?;
    }
    for p in &opts.ignore_paths {
        ignore.add(p)?;
    }
    let files = manifest::walk_tree(root, &ignore, limits)?;
    let actual = manifest::hash_files(&files, &expected.serialization)?;
    Ok(manifest::diff(expected, &actual))
}

/// The path of `file` relative to `root` when it lies inside it (for ignoring the signature
/// file). Both are resolved; `None` when outside or unresolvable.
pub fn relative_inside(root: &Path, file: &Path) -> Option<String> {
    let root = std::fs::canonicalize(root).ok()?;
    let parent = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let abs = std::fs::canonicalize(parent).ok()?.join(file.file_name()?);
    let rel = abs.strip_prefix(&root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    let parts = parts?;
    (!parts.is_empty()).then(|| parts.join("/"))
}
