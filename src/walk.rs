//! The crawl: turns a scan root into a sorted list of entries to inspect.
//!
//! Security properties this module owns:
//! - symlinks are never followed out of the containment root (the scan root, or the
//!   `models--org--name` folder when scanning inside a Hugging Face cache); absolute links are not
//!   followed at all, because they name a different file on every machine;
//! - FIFOs, sockets and devices are recorded, never opened (opening a FIFO blocks forever);
//! - symlink loops cannot loop: links to directories are never descended (their targets inside
//!   the root are crawled at their real location anyway), and file links are resolved once with
//!   `canonicalize`, which fails on loops;
//! - every count and depth is bounded by a named limit.
//!
//! Output order is the byte order of the relative path, so reports are deterministic.

use std::path::{Component, Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::model::finding::Detection;
use crate::model::rules::RuleId;

/// Directory names skipped by default: build output and vendored JavaScript. `.git` is always
/// skipped (its objects are not the files a loader reads). Excluded directories are listed in the
/// report so nothing disappears silently.
pub const DEFAULT_EXCLUDES: &[&str] = &["**/node_modules", "**/target"];

/// Options for the crawl.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Globs (relative to the root) to exclude; a matching directory is not descended.
    pub excludes: Vec<String>,
    /// Stop after this many entries (`max_files` limit).
    pub max_files: u64,
    /// Maximum directory depth (`max_depth` limit).
    pub max_depth: usize,
    /// Containment root for symlinks, when wider than the scan root (Hugging Face cache).
    pub containment: Option<PathBuf>,
    /// Relative directory paths whose files are reached only through symlinks and are not listed
    /// on their own (the `blobs/` folder of a Hugging Face cache).
    pub hidden_dirs: Vec<String>,
}

/// What a crawled entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file (or a symlink to one inside the containment root), to be opened at `open`.
    File {
        /// The real path to open (canonical for symlinks).
        open: PathBuf,
        /// Size from the crawl's stat (the scan re-checks it).
        size: u64,
        /// When reached through a symlink: the link's target as written.
        link_target: Option<String>,
    },
    /// A symlink that was not followed; `reason` says why (`escapes-root`, `absolute`,
    /// `dangling`, `loop`, `directory`).
    Link {
        /// The link's target as written (escaped).
        target: String,
        /// Why it was not followed.
        reason: &'static str,
    },
    /// A FIFO, socket or device: never opened.
    Special {
        /// `fifo`, `socket`, `block-device` or `char-device`.
        what: &'static str,
    },
}

/// One crawled entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Path relative to the scan root, '/'-separated, escaped (see [`display_rel`]).
    pub rel: String,
    /// What it is.
    pub kind: EntryKind,
}

/// The result of a crawl.
#[derive(Debug, Default)]
pub struct Walk {
    /// Entries sorted by `rel`.
    pub entries: Vec<Entry>,
    /// Relative directory paths (sorted), including `""` for the root.
    pub dirs: Vec<String>,
    /// Directories skipped by an exclude glob.
    pub excluded: Vec<String>,
    /// Findings produced by the crawl itself (symlinks, special files, limits, unreadable dirs).
    pub detections: Vec<Detection>,
}

/// Errors that stop the crawl of a root: only a missing or unreadable root.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// The root does not exist or cannot be resolved.
    #[error("cannot scan {path}: {source}")]
    Root {
        /// The root as given.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An exclude glob is invalid.
    #[error("invalid --exclude glob `{glob}`: {message}")]
    Glob {
        /// The glob.
        glob: String,
        /// What is wrong with it.
        message: String,
    },
}

/// Renders a relative path losslessly enough to find the file: valid UTF-8 is kept as is, each
/// byte of an invalid sequence becomes `\xNN`. Components are joined with `/`.
pub fn display_rel(rel: &Path) -> String {
    let mut out = String::new();
    for (i, comp) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&escape_os(comp.as_os_str()));
    }
    out
}

fn escape_os(s: &std::ffi::OsStr) -> String {
    // The raw bytes on Unix; WTF-8 on Windows (UTF-8 for every valid name).
    let bytes = s.as_encoded_bytes();
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

fn build_globset(globs: &[String]) -> Result<GlobSet, WalkError> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let glob = globset::GlobBuilder::new(g)
            .literal_separator(true)
            .build()
            .map_err(|e| WalkError::Glob {
                glob: g.clone(),
                message: e.kind().to_string(),
            })?;
        b.add(glob);
        // `dir/` and `dir` both mean "this directory and everything below".
        let trimmed = g.trim_end_matches('/');
        if let Ok(below) = Glob::new(&format!("{trimmed}/**")) {
            b.add(below);
        }
    }
    b.build().map_err(|e| WalkError::Glob {
        glob: globs.join(", "),
        message: e.kind().to_string(),
    })
}

/// Crawls `root`.
pub fn walk(root: &Path, opts: &WalkOptions) -> Result<Walk, WalkError> {
    let root_err = |source| WalkError::Root {
        path: root.display().to_string(),
        source,
    };
    let canon_root = root.canonicalize().map_err(root_err)?;
    let meta = std::fs::metadata(&canon_root).map_err(root_err)?;
    let containment = match &opts.containment {
        Some(c) => c.canonicalize().unwrap_or_else(|_| canon_root.clone()),
        None => canon_root.clone(),
    };
    let excludes = build_globset(&opts.excludes)?;
    let mut out = Walk::default();

    if meta.is_file() {
        // A single file given as the root: report it by its file name.
        let name = canon_root
            .file_name()
            .map(|n| display_rel(Path::new(n)))
            .unwrap_or_default();
        out.entries.push(Entry {
            rel: name,
            kind: EntryKind::File {
                open: canon_root.clone(),
                size: meta.len(),
                link_target: None,
            },
        });
        return Ok(out);
    }

    let mut count: u64 = 0;
    let mut limit_hit = false;
    let walker = walkdir::WalkDir::new(&canon_root)
        .follow_links(false)
        .max_depth(opts.max_depth)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            if e.file_type().is_dir() && e.file_name() == ".git" {
                return false;
            }
            true
        });
    let mut skip_prefixes: Vec<PathBuf> = Vec::new();
    for item in walker {
        let entry = match item {
            Ok(e) => e,
            Err(err) => {
                record_walk_error(&err, &canon_root, &mut out);
                continue;
            }
        };
        if entry.depth() == 0 {
            out.dirs.push(String::new());
            continue;
        }
        let path = entry.path();
        if skip_prefixes.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        let Ok(rel_path) = path.strip_prefix(&canon_root) else {
            continue;
        };
        let rel = display_rel(rel_path);
        let ft = entry.file_type();
        if excludes.is_match(rel_path) {
            if ft.is_dir() {
                out.excluded.push(rel);
                skip_prefixes.push(path.to_path_buf());
            }
            continue;
        }
        if ft.is_dir() {
            record_dir(&entry, rel, opts, &mut out, &mut skip_prefixes);
            continue;
        }
        count += 1;
        if count > opts.max_files {
            limit_hit = true;
            break;
        }
        record_leaf(&entry, rel, &containment, &mut out);
    }
    if limit_hit {
        out.detections.push(
            Detection::new(
                RuleId::LimitExceeded,
                "",
                "max_files",
                format!(
                    "the tree holds more than max_files ({}) entries; the rest were not scanned",
                    opts.max_files
                ),
            )
            .with("limit", "max_files")
            .with("value", opts.max_files),
        );
    }
    out.entries.sort_by(|a, b| a.rel.cmp(&b.rel));
    out.dirs.sort();
    Ok(out)
}

/// An entry walkdir could not read becomes an unreadable-file detection (a loop report does
/// not: it names no unreadable entry).
fn record_walk_error(err: &walkdir::Error, canon_root: &Path, out: &mut Walk) {
    let rel = err
        .path()
        .and_then(|p| p.strip_prefix(canon_root).ok())
        .map(display_rel)
        .unwrap_or_default();
    if err.loop_ancestor().is_some() {
        return;
    }
    out.detections.push(
        Detection::new(
            RuleId::UnreadableFile,
            rel.clone(),
            "walk",
            format!("cannot read directory entry: {}", io_message(err)),
        )
        .with("error", io_message(err)),
    );
}

/// A directory is listed unless it is hidden (then skipped with everything under it); one at
/// the depth limit also gets a limit detection.
fn record_dir(
    entry: &walkdir::DirEntry,
    rel: String,
    opts: &WalkOptions,
    out: &mut Walk,
    skip_prefixes: &mut Vec<PathBuf>,
) {
    let path = entry.path();
    if opts.hidden_dirs.iter().any(|h| h == &rel) {
        skip_prefixes.push(path.to_path_buf());
        return;
    }
    out.dirs.push(rel);
    if entry.depth() == opts.max_depth {
        out.detections.push(
            Detection::new(
                RuleId::LimitExceeded,
                rel_dirname(&out.dirs),
                "max_depth",
                format!(
                    "directory nesting reaches the max_depth limit ({}); deeper entries were not scanned",
                    opts.max_depth
                ),
            )
            .with("limit", "max_depth")
            .with("value", opts.max_depth as u64),
        );
    }
}

/// A symlink, a regular file or a special file (device, fifo, socket) becomes one entry;
/// links and special files carry their detection.
fn record_leaf(entry: &walkdir::DirEntry, rel: String, containment: &Path, out: &mut Walk) {
    let path = entry.path();
    let ft = entry.file_type();
    if ft.is_symlink() {
        let (kind, det) = classify_link(path, &rel, containment);
        if let Some(d) = det {
            out.detections.push(d);
        }
        out.entries.push(Entry { rel, kind });
        return;
    }
    if ft.is_file() {
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        out.entries.push(Entry {
            rel,
            kind: EntryKind::File {
                open: path.to_path_buf(),
                size,
                link_target: None,
            },
        });
        return;
    }
    let what = special_kind(&ft);
    out.detections.push(
        Detection::new(
            RuleId::SpecialFile,
            rel.clone(),
            what,
            format!("{what} in the tree; it was not opened"),
        )
        .with("type", what),
    );
    out.entries.push(Entry {
        rel,
        kind: EntryKind::Special { what },
    });
}

// The deepest directory recorded so far: where a depth limit was hit.
fn rel_dirname(dirs: &[String]) -> String {
    dirs.last().cloned().unwrap_or_default()
}

fn io_message(err: &walkdir::Error) -> String {
    match err.io_error() {
        Some(e) => e.to_string(),
        None => err.to_string(),
    }
}

#[cfg(not(unix))]
fn special_kind(_ft: &std::fs::FileType) -> &'static str {
    "unknown-file-type"
}

#[cfg(unix)]
fn special_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "fifo"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_block_device() {
        "block-device"
    } else if ft.is_char_device() {
        "char-device"
    } else {
        "unknown-file-type"
    }
}

/// Decides what to do with a symlink at `path`. A link is followed only when it is relative and
/// its fully resolved target is a regular file inside `containment`.
fn classify_link(path: &Path, rel: &str, containment: &Path) -> (EntryKind, Option<Detection>) {
    let target = match std::fs::read_link(path) {
        Ok(t) => t,
        Err(e) => {
            let d = Detection::new(
                RuleId::UnreadableFile,
                rel,
                "readlink",
                format!("cannot read symlink: {e}"),
            );
            return (
                EntryKind::Link {
                    target: String::new(),
                    reason: "unreadable",
                },
                Some(d),
            );
        }
    };
    let shown = escape_os(target.as_os_str());
    let link = |reason| EntryKind::Link {
        target: shown.clone(),
        reason,
    };
    let escape = |reason: &'static str, msg: String| {
        Detection::new(RuleId::SymlinkEscape, rel, reason, msg)
            .with("target", shown.clone())
            .with("reason", reason)
    };
    if target.is_absolute() {
        return (
            link("absolute"),
            Some(escape(
                "absolute",
                format!("symlink has an absolute target `{shown}`; not followed"),
            )),
        );
    }
    let resolved = match path.canonicalize() {
        Ok(p) => p,
        Err(e) => {
            // ELOOP: a loop; ENOENT: dangling. Neither is followed; a dangling link is a fact.
            let reason = if is_loop_error(&e) {
                "loop"
            } else {
                "dangling"
            };
            // A dangling link that would leave the root is still an escape attempt.
            if lexically_escapes(path, &target, containment) {
                return (
                    link("escapes-root"),
                    Some(escape(
                        "escapes-root",
                        format!("symlink target `{shown}` leaves the scan root; not followed"),
                    )),
                );
            }
            return (link(reason), None);
        }
    };
    if !resolved.starts_with(containment) {
        return (
            link("escapes-root"),
            Some(escape(
                "escapes-root",
                format!("symlink target `{shown}` leaves the scan root; not followed"),
            )),
        );
    }
    match std::fs::metadata(&resolved) {
        Ok(m) if m.is_file() => (
            EntryKind::File {
                open: resolved,
                size: m.len(),
                link_target: Some(shown.clone()),
            },
            None,
        ),
        Ok(m) if m.is_dir() => (link("directory"), None),
        Ok(m) => {
            let what = special_kind(&m.file_type());
            (
                link("special"),
                Some(
                    Detection::new(
                        RuleId::SpecialFile,
                        rel,
                        what,
                        format!("symlink to a {what}; it was not opened"),
                    )
                    .with("type", what)
                    .with("target", shown.clone()),
                ),
            )
        }
        Err(_) => (link("dangling"), None),
    }
}

#[cfg(unix)]
fn is_loop_error(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(not(unix))]
fn is_loop_error(_e: &std::io::Error) -> bool {
    false
}

/// Whether a relative link target climbs out of `containment` by `..` components alone.
fn lexically_escapes(link: &Path, target: &Path, containment: &Path) -> bool {
    let Some(parent) = link.parent() else {
        return true;
    };
    let mut stack: Vec<std::ffi::OsString> = parent
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            _ => None,
        })
        .collect();
    let base_len = containment.components().count().saturating_sub(1);
    for c in target.components() {
        match c {
            Component::ParentDir if stack.pop().is_none() => return true,
            Component::ParentDir => {}
            Component::Normal(n) => stack.push(n.to_os_string()),
            _ => {}
        }
        if stack.len() < base_len {
            return true;
        }
    }
    false
}

/// Groups entries that are the same underlying file (a symlink and its target), so each file is
/// read once. Returns, for each entry index, the index of the entry that reads the file.
pub fn dedupe_targets(entries: &[Entry]) -> Vec<Option<usize>> {
    // Keyed by the raw bytes: comparing `Path`s component by component was a tenth of the time
    // of a scan of 100,000 small files.
    let mut first: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::new();
    let mut out = vec![None; entries.len()];
    for (i, e) in entries.iter().enumerate() {
        if let EntryKind::File { open, .. } = &e.kind {
            let owner = *first
                .entry(open.as_os_str().as_encoded_bytes())
                .or_insert(i);
            out[i] = Some(owner);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn escapes_invalid_utf8_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"a/b\xffc"));
        assert_eq!(display_rel(p), "a/b\\xFFc");
    }

    #[test]
    fn lexical_escape_detects_parent_climb() {
        let root = Path::new("/r");
        assert!(lexically_escapes(
            Path::new("/r/a"),
            Path::new("../../x"),
            root
        ));
        assert!(!lexically_escapes(
            Path::new("/r/d/a"),
            Path::new("../x"),
            root
        ));
    }
}
