//! `modelgate verify`: are the files in a tree still the ones an SBOM recorded?
//!
//! A consumer downloads a model and its `model.cdx.json`; verify re-hashes the tree and reports
//! every file whose SHA-256 differs (`modified`), every recorded file that is gone (`missing`)
//! and every file the SBOM does not list (`added`): a swapped pickle, a dropped safety file and
//! a smuggled-in `modeling.py` are all differences. The tree is crawled with the scanner's own
//! rules (symlinks out of the root and special files are never opened) and hashed with the
//! scanner's own streaming reader, so both sides compute digests the same way.
//!
//! An LFS pointer's recorded digest is the content's oid: the file matches when its own SHA-256
//! equals it (content pulled) or when it is still a pointer naming that oid.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use cyclonedx_bom::models::bom::Bom;
use cyclonedx_bom::models::component::{Classification, Component};
use cyclonedx_bom::models::hash::HashAlgorithm;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::inspect::{open_regular, read::HashingReader};
use crate::model::rules::RuleId;
use crate::provenance::hfcache;
use crate::report::cyclonedx::{prop, sbom_text};
use crate::report::text::sanitize;
use crate::walk::{self, EntryKind, WalkOptions};

/// Bounds for `verify` (the SBOM is input from elsewhere, the tree may be hostile).
#[derive(Debug, Clone)]
pub struct VerifyLimits {
    /// Largest SBOM file read.
    pub max_sbom_bytes: u64,
    /// Components visited in the SBOM (nested included).
    pub max_components: usize,
    /// Component nesting depth.
    pub max_depth: usize,
    /// Entries crawled in the tree.
    pub max_files: u64,
    /// Directory depth crawled.
    pub max_tree_depth: usize,
}

impl Default for VerifyLimits {
    fn default() -> Self {
        VerifyLimits {
            max_sbom_bytes: 512 << 20,
            max_components: 10_000_000,
            max_depth: 64,
            max_files: 10_000_000,
            max_tree_depth: 256,
        }
    }
}

/// A file whose state differs from the SBOM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Modified {
    /// Path relative to the root.
    pub path: String,
    /// The recorded SHA-256 (`None` when the SBOM recorded none).
    pub expected: Option<String>,
    /// What the tree holds now: a SHA-256, or `None` when it could not be hashed.
    pub actual: Option<String>,
    /// Why it differs, e.g. `digest-mismatch`, `unreadable`, `symlink-changed`.
    pub reason: String,
    /// The I/O error, for `unreadable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The result of a verification.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    /// Files recorded in the SBOM.
    pub checked: u64,
    /// Recorded files that match.
    pub ok: u64,
    /// Files whose content (or kind) changed.
    pub modified: Vec<Modified>,
    /// Recorded files no longer in the tree.
    pub missing: Vec<String>,
    /// Files in the tree that the SBOM does not list.
    pub added: Vec<String>,
}

impl VerifyReport {
    /// No differences at all.
    pub fn is_clean(&self) -> bool {
        self.modified.is_empty() && self.missing.is_empty() && self.added.is_empty()
    }

    /// Human-readable listing; paths are sanitized.
    pub fn render_text(&self, w: &mut dyn Write) -> io::Result<()> {
        for m in &self.modified {
            let exp = m.expected.as_deref().unwrap_or("(none)");
            let act = m.actual.as_deref().unwrap_or("(unreadable)");
            writeln!(
                w,
                "modified  {} [{}]: expected sha256 {exp}, found {act}",
                sanitize(&m.path),
                m.reason
            )?;
            if let Some(e) = &m.error {
                writeln!(w, "          error: {}", sanitize(e))?;
            }
        }
        for p in &self.missing {
            writeln!(w, "missing   {}", sanitize(p))?;
        }
        for p in &self.added {
            writeln!(w, "added     {}", sanitize(p))?;
        }
        writeln!(
            w,
            "checked {} files: {} ok, {} modified, {} missing, {} added",
            self.checked,
            self.ok,
            self.modified.len(),
            self.missing.len(),
            self.added.len()
        )?;
        writeln!(
            w,
            "result: {}",
            if self.is_clean() { "MATCH" } else { "MISMATCH" }
        )
    }

    /// The report as pretty JSON with a trailing newline.
    pub fn render_json(&self, w: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *w, self)?;
        w.write_all(b"\n")
    }
}

/// What the SBOM says about one path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Recorded {
    sha256: Option<String>,
    sha512: Option<String>,
    lfs_pointer: bool,
    format: Option<String>,
    symlink_target: Option<String>,
}

/// What the tree holds at one path.
#[derive(Debug, Clone)]
enum Found {
    File {
        sha256: String,
        sha512: Option<String>,
        lfs_oid: Option<String>,
    },
    Unreadable(String),
    Link {
        target: String,
    },
    Special,
}

/// What verify needs from an SBOM: its files and the scan's excludes.
#[derive(Debug, Default)]
struct Sbom {
    files: BTreeMap<String, Recorded>,
    excludes: Vec<String>,
}

/// Reads an SBOM (JSON or XML, told apart by the first non-blank byte). CycloneDX 1.5 goes
/// through the `cyclonedx-bom` crate; 1.6 and 1.7 JSON (which the crate's 1.5 model rejects) is read
/// leniently with `serde_json`, taking only what verify needs.
fn read_sbom(path: &Path, limits: &VerifyLimits) -> Result<Sbom> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open sbom {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(limits.max_sbom_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read sbom {}", path.display()))?;
    if bytes.len() as u64 > limits.max_sbom_bytes {
        bail!(
            "sbom {} is larger than the max_sbom_bytes limit ({} bytes)",
            path.display(),
            limits.max_sbom_bytes
        );
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    match first {
        Some(b'{') => {
            let doc: Value = serde_json::from_slice(&bytes)
                .map_err(|e| anyhow::anyhow!("invalid json sbom: {e}"))?;
            if doc.get("bomFormat").and_then(Value::as_str) != Some("CycloneDX") {
                bail!("{} is not a cyclonedx sbom", path.display());
            }
            match doc.get("specVersion").and_then(Value::as_str) {
                Some("1.5") => {
                    let bom = Bom::parse_from_json_v1_5(&bytes[..])
                        .map_err(|e| anyhow::anyhow!("invalid cyclonedx 1.5 json sbom: {e}"))?;
                    from_bom(&bom, limits)
                }
                Some("1.6" | "1.7") => from_json(&doc, limits),
                Some(v) => bail!(
                    "cyclonedx {} sbom: verify reads 1.5, 1.6 and 1.7",
                    sanitize(v)
                ),
                None => bail!("sbom has no specVersion"),
            }
        }
        Some(b'<') => {
            let bom = Bom::parse_from_xml_v1_5(&bytes[..])
                .map_err(|e| anyhow::anyhow!("invalid cyclonedx 1.5 xml sbom: {e}"))?;
            from_bom(&bom, limits)
        }
        _ => bail!("{} is neither a json nor an xml sbom", path.display()),
    }
}

fn property<'a>(c: &'a Component, name: &str) -> Option<&'a str> {
    c.properties
        .as_ref()?
        .0
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.value.as_ref())
}

/// Formats whose files carry no content digest by design (the link or node itself is checked).
fn digestless(format: Option<&str>) -> bool {
    matches!(format, Some("symlink" | "special"))
}

fn record(files: &mut BTreeMap<String, Recorded>, path: &str, rec: Recorded) -> Result<()> {
    if rec.sha256.is_none() && rec.sha512.is_none() && !digestless(rec.format.as_deref()) {
        // A file without a digest would "verify" whatever bytes sit there.
        bail!(
            "sbom records no digest for `{}`: refusing to verify against it",
            sanitize(path)
        );
    }
    if files.insert(path.to_string(), rec).is_some() {
        bail!("sbom lists the path `{}` twice", sanitize(path));
    }
    Ok(())
}

fn check_count(
    visited: usize,
    depth: usize,
    has_children: bool,
    limits: &VerifyLimits,
) -> Result<()> {
    if visited > limits.max_components {
        bail!(
            "sbom has more than the max_components limit ({}) components",
            limits.max_components
        );
    }
    if has_children && depth + 1 > limits.max_depth {
        bail!(
            "sbom components nest deeper than the max_depth limit ({})",
            limits.max_depth
        );
    }
    Ok(())
}

/// Every file component with a `modelgate:path`, by path. Iterative, bounded walk.
fn from_bom(bom: &Bom, limits: &VerifyLimits) -> Result<Sbom> {
    let mut out = Sbom::default();
    let mut stack: Vec<(&Component, usize)> = Vec::new();
    if let Some(cs) = &bom.components {
        stack.extend(cs.0.iter().map(|c| (c, 0)));
    }
    let mut visited = 0usize;
    while let Some((c, depth)) = stack.pop() {
        visited += 1;
        check_count(visited, depth, c.components.is_some(), limits)?;
        if let Some(children) = &c.components {
            stack.extend(children.0.iter().map(|k| (k, depth + 1)));
        }
        if c.component_type != Classification::File {
            continue;
        }
        let Some(path) = property(c, prop::PATH) else {
            continue;
        };
        let digest = |alg: HashAlgorithm| {
            c.hashes.as_ref().and_then(|hs| {
                hs.0.iter()
                    .find(|h| h.alg == alg)
                    .map(|h| h.content.0.to_ascii_lowercase())
            })
        };
        let rec = Recorded {
            sha256: digest(HashAlgorithm::SHA_256),
            sha512: digest(HashAlgorithm::SHA_512),
            lfs_pointer: property(c, prop::LFS_POINTER) == Some("true"),
            format: property(c, prop::FORMAT).map(str::to_string),
            symlink_target: property(c, prop::SYMLINK_TARGET).map(str::to_string),
        };
        record(&mut out.files, path, rec)?;
    }
    out.excludes = bom
        .metadata
        .as_ref()
        .and_then(|m| m.properties.as_ref())
        .map(|props| {
            props
                .0
                .iter()
                .filter(|p| p.name == prop::EXCLUDE)
                .map(|p| p.value.to_string())
                .collect()
        })
        .unwrap_or_default();
    Ok(out)
}

fn json_props<'a>(v: &'a Value, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    v.get("properties")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(move |p| p.get("name").and_then(Value::as_str) == Some(name))
        .filter_map(|p| p.get("value").and_then(Value::as_str))
}

/// The same walk over a CycloneDX 1.6 or 1.7 JSON document.
fn from_json(doc: &Value, limits: &VerifyLimits) -> Result<Sbom> {
    let mut out = Sbom::default();
    let mut stack: Vec<(&Value, usize)> = Vec::new();
    if let Some(cs) = doc.get("components").and_then(Value::as_array) {
        stack.extend(cs.iter().map(|c| (c, 0)));
    }
    let mut visited = 0usize;
    while let Some((c, depth)) = stack.pop() {
        visited += 1;
        let kids = c.get("components").and_then(Value::as_array);
        check_count(visited, depth, kids.is_some(), limits)?;
        if let Some(kids) = kids {
            stack.extend(kids.iter().map(|k| (k, depth + 1)));
        }
        if c.get("type").and_then(Value::as_str) != Some("file") {
            continue;
        }
        let Some(path) = json_props(c, prop::PATH).next() else {
            continue;
        };
        let digest = |alg: &str| {
            c.get("hashes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find(|h| h.get("alg").and_then(Value::as_str) == Some(alg))
                .and_then(|h| h.get("content").and_then(Value::as_str))
                .map(str::to_ascii_lowercase)
        };
        let rec = Recorded {
            sha256: digest("SHA-256"),
            sha512: digest("SHA-512"),
            lfs_pointer: json_props(c, prop::LFS_POINTER).next() == Some("true"),
            format: json_props(c, prop::FORMAT).next().map(str::to_string),
            symlink_target: json_props(c, prop::SYMLINK_TARGET)
                .next()
                .map(str::to_string),
        };
        record(&mut out.files, path, rec)?;
    }
    if let Some(m) = doc.get("metadata") {
        out.excludes = json_props(m, prop::EXCLUDE).map(str::to_string).collect();
    }
    Ok(out)
}

/// Git LFS pointers are at most this large (spec: "less than 1024 bytes").
const LFS_POINTER_MAX: u64 = 1024;

/// The `sha256` oid of a Git LFS pointer, when `head` is one: the scan's strict pointer parser,
/// so `verify` and `scan` agree on what a pointer is.
fn lfs_oid(head: &[u8]) -> Option<String> {
    crate::provenance::lfs::parse_pointer(head)
        .ok()
        .map(|p| p.sha256().to_ascii_lowercase())
}

/// One streaming read: the SHA-256 and, for a small file, the LFS oid from the same buffer.
fn hash_file(open: &Path, sha512: bool) -> Found {
    let file = match open_regular(open) {
        Ok(f) => f,
        Err(e) => return Found::Unreadable(e.to_string()),
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let mut r = HashingReader::new(file, crate::inspect::read::block_for(size, 0), sha512);
    let mut oid = None;
    if size <= LFS_POINTER_MAX {
        match r.fill_buf() {
            Ok(head) => oid = lfs_oid(head),
            Err(e) => return Found::Unreadable(e.to_string()),
        }
    }
    if let Err(e) = r.drain() {
        return Found::Unreadable(e.to_string());
    }
    let (sha256, sha512) = r.finish();
    Found::File {
        sha256,
        sha512,
        lfs_oid: oid,
    }
}

fn compare(path: &str, rec: &Recorded, found: &Found) -> Option<Modified> {
    let modified = |actual: Option<String>, reason: &str| {
        Some(Modified {
            path: path.to_string(),
            expected: rec.sha256.clone(),
            actual,
            reason: reason.to_string(),
            error: None,
        })
    };
    match (found, &rec.sha256) {
        (
            Found::File {
                sha256,
                sha512,
                lfs_oid,
            },
            Some(expected),
        ) => {
            let pointer_ok = lfs_oid.as_deref() == Some(expected.as_str());
            // Every algorithm the SBOM records must match (a pointer only carries the SHA-256
            // oid, so a still-pointer file is checked against that alone).
            let sha512_ok = pointer_ok
                || match (&rec.sha512, sha512) {
                    (Some(want), Some(got)) => want == got,
                    (Some(_), None) => false,
                    (None, _) => true,
                };
            if (sha256 == expected && sha512_ok) || pointer_ok {
                None
            } else if sha256 == expected {
                modified(sha512.clone(), "sha512-mismatch")
            } else if rec.lfs_pointer && lfs_oid.is_some() {
                modified(lfs_oid.clone(), "lfs-oid-mismatch")
            } else {
                modified(Some(sha256.clone()), "digest-mismatch")
            }
        }
        (Found::File { sha512, .. }, None) if rec.sha512.is_some() => {
            if *sha512 == rec.sha512 {
                None
            } else {
                modified(sha512.clone(), "sha512-mismatch")
            }
        }
        (Found::File { sha256, .. }, None) => modified(Some(sha256.clone()), "no-recorded-digest"),
        (Found::Unreadable(e), _) => modified(None, "unreadable").map(|m| Modified {
            error: Some(e.clone()),
            ..m
        }),
        (Found::Link { target }, None) if rec.format.as_deref() == Some("symlink") => {
            match &rec.symlink_target {
                Some(t) if *t != sbom_text(target) => modified(None, "symlink-changed"),
                _ => None,
            }
        }
        (Found::Link { .. }, _) => modified(None, "now-a-symlink"),
        (Found::Special, None) if rec.format.as_deref() == Some("special") => None,
        (Found::Special, _) => modified(None, "now-a-special-file"),
    }
}

/// The root-relative path a relative link target names, when it stays inside the root.
fn resolve_link(link: &str, target: &str) -> Option<String> {
    if target.starts_with('/') || target.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for seg in target.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Re-hashes `root` and compares it with the SBOM at `sbom_path`, on `jobs` threads.
pub fn verify(sbom_path: &Path, root: &Path, jobs: usize) -> Result<VerifyReport> {
    verify_with(sbom_path, root, jobs, &VerifyLimits::default())
}

/// [`verify`] with explicit limits.
pub fn verify_with(
    sbom_path: &Path,
    root: &Path,
    jobs: usize,
    limits: &VerifyLimits,
) -> Result<VerifyReport> {
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let sbom = read_sbom(sbom_path, limits)?;
    let recorded = sbom.files;
    let want512 = recorded.values().any(|r| r.sha512.is_some());

    // The scan's own excludes (recorded in the SBOM metadata), so excluded files are not "added".
    let mut excludes = sbom.excludes;
    if excludes.is_empty() {
        excludes = walk::DEFAULT_EXCLUDES
            .iter()
            .map(|s| s.to_string())
            .collect();
    }
    // The crawl layout `scan` uses, so the SBOM's paths are found the same way.
    let (containment, hidden_dirs) = hfcache::detect(root)
        .map(|cache| cache.walk_layout(root))
        .unwrap_or_default();
    let opts = WalkOptions {
        excludes,
        max_files: limits.max_files,
        max_depth: limits.max_tree_depth,
        containment,
        hidden_dirs,
    };
    let walked = walk::walk(root, &opts)?;
    if let Some(d) = walked
        .detections
        .iter()
        .find(|d| d.rule == RuleId::LimitExceeded)
    {
        // A partial crawl would report files as missing that were merely not reached.
        bail!("cannot verify {}: {}", root.display(), d.message);
    }

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .stack_size(crate::model::limits::WORKER_STACK_BYTES)
        .build()
        .context("cannot start worker threads")?;
    let found: Vec<(String, Found)> = pool.install(|| {
        walked
            .entries
            .par_iter()
            .map(|e| {
                let f = match &e.kind {
                    EntryKind::File { open, .. } => hash_file(open, want512),
                    EntryKind::Link { target, .. } => Found::Link {
                        target: target.clone(),
                    },
                    EntryKind::Special { .. } => Found::Special,
                };
                (sbom_text(&e.rel), f)
            })
            .collect()
    });

    let mut report = VerifyReport {
        checked: recorded.len() as u64,
        ..VerifyReport::default()
    };
    let mut seen: BTreeMap<&str, &Found> = BTreeMap::new();
    for (path, f) in &found {
        seen.insert(path.as_str(), f);
    }
    // A link the SBOM records as a regular file is the scan having followed it inside the
    // root: a Hugging Face cache's `snapshots/<rev>/x` -> `../../blobs/<digest>`. Compare the
    // file it resolves to, and count that blob as accounted for rather than "added".
    let mut covered: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for (path, rec) in &recorded {
        let mut here = seen.get(path.as_str()).copied();
        if let Some(Found::Link { target }) = here
            && rec.format.as_deref() != Some("symlink")
            && let Some(resolved) = resolve_link(path, target)
            && let Some(f @ Found::File { .. }) = seen.get(resolved.as_str()).copied()
        {
            here = Some(f);
            covered.insert(resolved);
        }
        match here {
            None => report.missing.push(path.clone()),
            Some(f) => match compare(path, rec, f) {
                Some(m) => report.modified.push(m),
                None => report.ok += 1,
            },
        }
    }
    for path in seen.keys() {
        if !recorded.contains_key(*path) && !covered.contains(*path) {
            report.added.push(path.to_string());
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(sha: &str) -> Recorded {
        Recorded {
            sha256: Some(sha.into()),
            sha512: None,
            lfs_pointer: false,
            format: None,
            symlink_target: None,
        }
    }

    #[test]
    fn parses_lfs_oid() {
        let p = b"version https://git-lfs.github.com/spec/v1\noid sha256:abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789\nsize 3\n";
        assert_eq!(
            lfs_oid(p).as_deref(),
            Some("abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789")
        );
        assert_eq!(lfs_oid(b"oid sha256:00"), None);
    }

    #[test]
    fn uses_the_scans_strict_pointer_parser() {
        // Issue 14: verify had its own looser parser that took an upper-case oid the scan
        // rejects; both now agree (the LFS spec's oid is lower-case hex).
        let p = b"version https://git-lfs.github.com/spec/v1\noid sha256:ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789\nsize 3\n";
        assert_eq!(lfs_oid(p), None);
        assert!(crate::provenance::lfs::parse_pointer(p).is_err());
    }

    #[test]
    fn pointer_or_content_matches_recorded_oid() {
        let oid = "a".repeat(64);
        let pointer = Found::File {
            sha256: "b".repeat(64),
            sha512: None,
            lfs_oid: Some(oid.clone()),
        };
        let content = Found::File {
            sha256: oid.clone(),
            sha512: None,
            lfs_oid: None,
        };
        assert_eq!(compare("m.bin", &rec(&oid), &pointer), None);
        assert_eq!(compare("m.bin", &rec(&oid), &content), None);
    }

    #[test]
    fn reports_digest_mismatch() {
        let f = Found::File {
            sha256: "c".repeat(64),
            sha512: None,
            lfs_oid: None,
        };
        let m = compare("x", &rec(&"d".repeat(64)), &f);
        assert!(matches!(m, Some(Modified { ref reason, .. }) if reason == "digest-mismatch"));
    }

    #[test]
    fn resolves_relative_links_inside_the_root() {
        assert_eq!(
            resolve_link("m/snapshots/abc/x.bin", "../../blobs/ff").as_deref(),
            Some("m/blobs/ff")
        );
        assert_eq!(resolve_link("x", "../../etc/passwd"), None);
        assert_eq!(resolve_link("x", "/etc/passwd"), None);
    }
}
