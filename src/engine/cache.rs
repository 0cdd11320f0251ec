//! The opt-in result cache (`scan --cache DIR`): a file whose identity has not changed since the
//! last scan is not read again; its digests and inspection results come from the cache.
//!
//! Safe by construction, within its trust boundary:
//! - The key is the file's identity: the path opened, device, inode, size, modification and
//!   change times in nanoseconds. Any change re-reads. The change time cannot be set by a user
//!   (a same-size rewrite with the modification time restored still moves it), and a rename that
//!   swaps in another file changes the inode.
//! - Every entry is also bound to a salt: the modelgate version, the binary itself (its size and
//!   modification time, so a rebuilt development binary never reuses results of older code), the
//!   policy's digest and the options that change inspection (`--check-values`, `--hash sha512`).
//! - Only results worth caching are kept: files of at least [`MIN_CACHED_BYTES`] whose scan kept
//!   no text or card for the repository checks (those are small and re-read).
//! - The cache file is versioned, bounded ([`MAX_CACHE_BYTES`], [`MAX_ENTRIES`]), written
//!   atomically (a temporary file renamed over the old one), and anything unexpected in it (a
//!   corrupt file, another version, another salt, a value that does not decode) makes the whole
//!   file ignored with a note. It is never half-trusted.
//! - Trust boundary: the cache directory must be as trusted as the binary. Whoever can write it
//!   can make a file look scanned; do not point `--cache` at a directory a scanned repository (or
//!   a pull request) can write.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::inspect::FileScan;
use crate::model::finding::{Detection, Location, Severity, hex};
use crate::model::format::{Format, Kind};
use crate::model::rules::RuleId;

/// Version of the cache file layout.
const CACHE_VERSION: u32 = 1;
/// The cache file's name inside the directory.
const FILE_NAME: &str = "modelgate-scan-cache.v1.json";
/// Files smaller than this are re-read: reading them costs less than a cache entry.
pub const MIN_CACHED_BYTES: u64 = 1 << 20;
/// Largest cache file read.
pub const MAX_CACHE_BYTES: u64 = 256 << 20;
/// Most entries kept.
pub const MAX_ENTRIES: usize = 200_000;

/// A file's identity: what must not change for a cached result to stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity(String);

impl Identity {
    /// The identity of the file at `path` now (without following a final symlink), or `None`
    /// when it cannot be had (then the file is simply read).
    pub fn of(path: &Path) -> Option<Identity> {
        let m = fs::symlink_metadata(path).ok()?;
        if !m.is_file() {
            return None;
        }
        Some(Identity(format!(
            "{}\0{}",
            path.display(),
            platform_identity(&m)?
        )))
    }
}

#[cfg(unix)]
fn platform_identity(m: &fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    Some(format!(
        "{}:{}:{}:{}.{}:{}.{}",
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    ))
}

/// Without inodes and change times the identity is too weak to skip a read: no caching.
#[cfg(not(unix))]
fn platform_identity(_: &fs::Metadata) -> Option<String> {
    None
}

/// One cached scan result, in a layout of its own (not the model's types), so the cache file's
/// format is pinned by [`CACHE_VERSION`] alone.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    size: u64,
    sha256: Option<String>,
    sha512: Option<String>,
    format: Option<String>,
    kind: Option<String>,
    facts: Map<String, Value>,
    detections: Vec<CachedDetection>,
    tensors: Option<BTreeMap<String, u64>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CachedDetection {
    rule: String,
    severity: String,
    message: String,
    line: Option<u64>,
    column: Option<u64>,
    offset: Option<u64>,
    member: Option<String>,
    evidence: BTreeMap<String, Value>,
    key: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    salt: String,
    entries: BTreeMap<String, Entry>,
}

/// The cache for one scan.
pub struct Cache {
    path: PathBuf,
    salt: String,
    old: BTreeMap<String, Entry>,
    new: Mutex<BTreeMap<String, Entry>>,
    /// Why the existing cache file was not used, if it was not.
    pub note: Option<String>,
}

impl Cache {
    /// Opens (or starts) the cache in `dir` for results bound to `salt_parts`.
    pub fn open(dir: &Path, salt_parts: &[&str]) -> Cache {
        let mut h = Sha256::new();
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        if let Ok(exe) = std::env::current_exe()
            && let Ok(m) = fs::metadata(exe)
        {
            h.update(format!("{}:{:?}", m.len(), m.modified().ok()).as_bytes());
        }
        for p in salt_parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
        }
        let salt = hex(&h.finalize());
        let path = dir.join(FILE_NAME);
        let (old, note) = match read_cache(&path, &salt) {
            Ok(entries) => (entries, None),
            Err(note) => (BTreeMap::new(), note),
        };
        Cache {
            path,
            salt,
            old,
            new: Mutex::new(BTreeMap::new()),
            note,
        }
    }

    /// The cached result for a file with this identity, if any.
    pub fn get(&self, id: &Identity) -> Option<FileScan> {
        let e = self.old.get(&id.0)?;
        let scan = decode(e)?;
        let mut new = self.new.lock().unwrap_or_else(|p| p.into_inner());
        new.insert(id.0.clone(), e.clone());
        Some(scan)
    }

    /// Records a fresh result for a file whose identity was `before` when the read started and is
    /// still the same now (a file that changed during the read is not cached).
    pub fn put(&self, before: &Identity, open: &Path, scan: &FileScan) {
        if scan.size < MIN_CACHED_BYTES || scan.card.is_some() || scan.text.is_some() {
            return;
        }
        if scan.sha256.is_none() || Identity::of(open).as_ref() != Some(before) {
            return;
        }
        let mut new = self.new.lock().unwrap_or_else(|p| p.into_inner());
        if new.len() < MAX_ENTRIES {
            new.insert(before.0.clone(), encode(scan));
        }
    }

    /// Writes the entries of this scan (and older ones, up to the bound) atomically.
    pub fn save(self) -> std::io::Result<()> {
        let mut entries = self.new.into_inner().unwrap_or_else(|p| p.into_inner());
        for (k, v) in self.old {
            if entries.len() >= MAX_ENTRIES {
                break;
            }
            entries.entry(k).or_insert(v);
        }
        let file = CacheFile {
            version: CACHE_VERSION,
            salt: self.salt,
            entries,
        };
        let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
        if bytes.len() as u64 > MAX_CACHE_BYTES {
            return Err(std::io::Error::other(
                "cache would exceed its size bound; not written",
            ));
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir)?;
        let tmp = dir.join(format!("{FILE_NAME}.{}.tmp", std::process::id()));
        {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
        }
        fs::rename(&tmp, &self.path)
    }
}

/// Reads the cache file; `Err(Some(note))` when it exists but cannot be used.
fn read_cache(path: &Path, salt: &str) -> Result<BTreeMap<String, Entry>, Option<String>> {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return Err(None);
    };
    if !meta.is_file() {
        return Err(Some(format!(
            "{} is not a regular file; ignored",
            path.display()
        )));
    }
    if meta.len() > MAX_CACHE_BYTES {
        return Err(Some(format!(
            "{} is larger than {MAX_CACHE_BYTES} bytes; ignored",
            path.display()
        )));
    }
    let mut bytes = Vec::new();
    fs::File::open(path)
        .and_then(|f| f.take(MAX_CACHE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| Some(format!("cannot read {}: {e}; ignored", path.display())))?;
    let file: CacheFile = serde_json::from_slice(&bytes).map_err(|e| {
        Some(format!(
            "{} is not a modelgate cache ({e}); ignored",
            path.display()
        ))
    })?;
    if file.version != CACHE_VERSION {
        return Err(Some(format!(
            "{} has cache version {}, this modelgate writes {CACHE_VERSION}; ignored",
            path.display(),
            file.version
        )));
    }
    if file.salt != salt {
        return Err(Some(format!(
            "{} was written by another modelgate build, policy or options; ignored",
            path.display()
        )));
    }
    // Every entry must decode: a cache with one bad entry is not trusted at all.
    if file.entries.values().any(|e| decode(e).is_none()) {
        return Err(Some(format!(
            "{} holds an entry that does not decode; ignored",
            path.display()
        )));
    }
    Ok(file.entries)
}

const SEVERITIES: [Severity; 5] = [
    Severity::Info,
    Severity::Low,
    Severity::Medium,
    Severity::High,
    Severity::Critical,
];
const KINDS: [Kind; 7] = [
    Kind::Weights,
    Kind::Code,
    Kind::Config,
    Kind::ModelCard,
    Kind::Tokenizer,
    Kind::Data,
    Kind::Other,
];

fn encode(s: &FileScan) -> Entry {
    Entry {
        size: s.size,
        sha256: s.sha256.clone(),
        sha512: s.sha512.clone(),
        format: s.format.map(|f| f.as_str().to_string()),
        kind: s.kind.map(|k| k.as_str().to_string()),
        facts: s.facts.clone(),
        detections: s
            .detections
            .iter()
            .map(|d| CachedDetection {
                rule: d.rule.code().to_string(),
                severity: d.severity.as_str().to_string(),
                message: d.message.clone(),
                line: d.location.line,
                column: d.location.column,
                offset: d.location.offset,
                member: d.location.member.clone(),
                evidence: d.evidence.clone(),
                key: d.key.clone(),
            })
            .collect(),
        tensors: s.tensors.clone(),
    }
}

fn decode(e: &Entry) -> Option<FileScan> {
    let format = match &e.format {
        None => None,
        Some(name) => Some(*Format::ALL.iter().find(|f| f.as_str() == name)?),
    };
    let kind = match &e.kind {
        None => None,
        Some(name) => Some(*KINDS.iter().find(|k| k.as_str() == name)?),
    };
    let mut detections = Vec::with_capacity(e.detections.len());
    for d in &e.detections {
        let rule = RuleId::lookup(&d.rule)?;
        let severity = *SEVERITIES.iter().find(|s| s.as_str() == d.severity)?;
        let mut det = Detection::new(rule, "", d.key.clone(), d.message.clone())
            .severity(severity)
            .at(Location {
                line: d.line,
                column: d.column,
                offset: d.offset,
                member: d.member.clone(),
            });
        det.evidence = d.evidence.clone();
        detections.push(det);
    }
    Some(FileScan {
        size: e.size,
        sha256: e.sha256.clone(),
        sha512: e.sha512.clone(),
        format,
        kind,
        facts: e.facts.clone(),
        detections,
        tensors: e.tensors.clone(),
        text: None,
        card: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::facts::{Fact, FactMap};

    #[test]
    fn a_result_round_trips_through_an_entry() {
        let mut s = FileScan {
            size: 5 << 20,
            sha256: Some("ab".repeat(32)),
            format: Some(Format::PytorchZip),
            kind: Some(Kind::Weights),
            ..FileScan::default()
        };
        s.facts.set_fact(Fact::PickleCount, Value::from(1));
        s.detections.push(
            Detection::new(
                RuleId::PickleUnsafeGlobal,
                "",
                "os.system",
                "calls os.system",
            )
            .severity(Severity::Critical)
            .at(Location::offset(7))
            .with("global", "os.system"),
        );
        let back = decode(&encode(&s)).unwrap();
        assert_eq!(back.sha256, s.sha256);
        assert_eq!(back.format, s.format);
        assert_eq!(back.kind, s.kind);
        assert_eq!(back.facts, s.facts);
        assert_eq!(back.detections, s.detections);
    }

    #[test]
    fn an_unknown_rule_or_format_does_not_decode() {
        let mut e = encode(&FileScan {
            format: Some(Format::Pickle),
            ..FileScan::default()
        });
        e.format = Some("no-such-format".into());
        assert!(decode(&e).is_none());
    }
}
