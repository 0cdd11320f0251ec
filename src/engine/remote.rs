//! A remote scan (`hf://ns/name@rev`) through the same engine: the Hub's tree at one commit
//! stands in for the crawl, each file's download stream is its one read (`inspect::scan_reader`:
//! digests and inspectors, nothing written to disk), the streamed digests are checked against
//! the Hub's record (HUB001) and its own verdict (HUB002), and the same repository checks,
//! policy evaluation and report assembly follow.

use crate::model::facts::{Fact, FactMap};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::{Map, Value, json};

use super::scanner::{ScanError, Scanner, Stats};
use super::{root, schedule};
use crate::hub::api::TreeEntry;
use crate::hub::client::Client;
use crate::hub::{self, RemoteMode, Target};
use crate::inspect::blocks::Blocks;
use crate::inspect::ranged::{self, Coverage, Level, RangeSource};
use crate::inspect::read::Positioned;
use crate::inspect::{self, FileScan};
use crate::model::finding::Detection;
use crate::model::format::{Format, Kind};
use crate::model::report::{FileRecord, Report};
use crate::model::rules::RuleId;
use crate::progress::Progress;
use crate::repository::{self, RepoOptions};

/// A full-mode file up to this size is held in memory as it streams, so its positioned checks
/// (HDF5, TFLite, the polyglot probes) read it there at no extra cost; a larger one reads those
/// structures with range requests besides the stream (a few blocks of
/// [`crate::inspect::blocks::BLOCK`] bytes per check, capped like header mode).
pub const POSITIONED_MEMORY_BYTES: u64 = 16 << 20;

/// One remote file's result: the scan, the git blob id of streamed non-LFS files, what header
/// mode covered, and the total size a `Content-Range` stated.
#[derive(Default)]
struct Fetched {
    scan: FileScan,
    blob: Option<String>,
    coverage: Option<Coverage>,
    served_total: Option<u64>,
}

/// A file's byte ranges over HTTP (header mode), remembering the total size the server states.
struct HubRange<'c> {
    client: &'c Client,
    url: String,
    what: String,
    total: Option<u64>,
}

impl RangeSource for HubRange<'_> {
    fn read_at(&mut self, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
        let (bytes, total) = self
            .client
            .read_range(&self.url, &self.what, offset, len)
            .map_err(std::io::Error::other)?;
        if total.is_some() {
            self.total = total;
        }
        Ok(bytes)
    }
}

impl Scanner {
    /// Scans a Hub repository at the commit its revision resolves to, streaming every file once.
    pub fn scan_remote(
        &self,
        target: &Target,
        client: &Client,
    ) -> Result<(Report, Stats), ScanError> {
        self.scan_remote_mode(target, client, RemoteMode::Full)
    }

    /// [`Scanner::scan_remote`] in either mode: `Headers` reads byte ranges only (see
    /// `inspect::ranged`) and records what was not read.
    pub fn scan_remote_mode(
        &self,
        target: &Target,
        client: &Client,
        mode: RemoteMode,
    ) -> Result<(Report, Stats), ScanError> {
        if self.options.jobs == 0 {
            return Err(ScanError::NoJobs);
        }
        let mut stats = Stats::default();
        let started = Instant::now();
        let commit = client.resolve(target)?;
        let (entries, problems) =
            client.list_tree(target, &commit, self.policy.limits.max_files)?;
        stats.walk = started.elapsed();

        let started = Instant::now();
        let total = entries
            .iter()
            .map(TreeEntry::content_size)
            .fold(0u64, u64::saturating_add);
        let bar = Progress::new(entries.len() as u64, total, self.options.progress);
        // Which Python files are model code, from the Hub's tree (as a local crawl decides it).
        let cfg = inspect::ScanConfig {
            model_code: std::sync::Arc::new(repository::model_code_paths(
                entries.iter().map(|e| e.path.as_str()),
            )),
            ..self.cfg.clone()
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.options.jobs)
            .stack_size(crate::model::limits::WORKER_STACK_BYTES)
            .build()?;
        let fetch = |cfg: &inspect::ScanConfig, e: &TreeEntry| {
            let mut fetched = Fetched::default();
            fetched.scan = schedule::scan_guarded(&e.path, || {
                let mut f = match mode {
                    RemoteMode::Full => self.stream_one(cfg, client, target, &commit, e),
                    RemoteMode::Headers => self.ranges_one(cfg, client, target, &commit, e),
                };
                let scan = std::mem::take(&mut f.scan);
                fetched = f;
                scan
            });
            fetched
        };
        // `collect` on an indexed parallel iterator keeps input (path) order: the report is the
        // same for any --jobs.
        let mut scans: Vec<Fetched> = pool.install(|| {
            entries
                .par_iter()
                .map(|e| {
                    let fetched = fetch(&cfg, e);
                    bar.file_done(e.content_size());
                    fetched
                })
                .collect()
        });
        // Code beside weights found by their content is model code too: fetched and judged
        // again as such (see `schedule::rescan_late_model_code`).
        let paths = entries.iter().map(|e| e.path.as_str());
        let kinds = scans.iter().map(|f| f.scan.kind);
        if let Some((late, cfg)) = schedule::late_model_code(paths, kinds, &cfg) {
            let again: Vec<(usize, Fetched)> = pool.install(|| {
                late.par_iter()
                    .filter_map(|&i| Some((i, fetch(&cfg, entries.get(i)?))))
                    .collect()
            });
            for (i, f) in again {
                if let Some(slot) = scans.get_mut(i) {
                    *slot = f;
                }
            }
        }
        bar.finish();
        stats.read = started.elapsed();
        stats.files = scans.len() as u64;
        stats.bytes = scans
            .iter()
            .map(|f| match &f.coverage {
                Some(c) => c.bytes_read,
                None => f.scan.size,
            })
            .fold(0, u64::saturating_add);

        let started = Instant::now();
        let collected =
            self.collect_remote(target, client, &commit, mode, (&entries, &problems), &scans);
        stats.provenance = started.elapsed();

        let started = Instant::now();
        let report = self.assemble(
            &[PathBuf::from(target.display())],
            vec![(String::new(), collected)],
        );
        stats.policy = started.elapsed();
        Ok((report, stats))
    }

    /// Header mode for one file: files outside LFS (small by the Hub's rules) and tiny ones are
    /// streamed whole; the rest are read in ranges, with the Hub's SHA-256 as their digest.
    fn ranges_one(
        &self,
        cfg: &inspect::ScanConfig,
        client: &Client,
        target: &Target,
        commit: &str,
        entry: &TreeEntry,
    ) -> Fetched {
        let size = entry.content_size();
        let Some(lfs) = entry.lfs.as_ref().filter(|_| size > ranged::HEAD_BYTES) else {
            let mut f = self.stream_one(cfg, client, target, commit, entry);
            let mut cov = Coverage::new(Level::Complete);
            cov.bytes_read = f.scan.size;
            cov.requests = 1;
            if f.scan.sha256.is_none() {
                cov.level = Level::Partial;
                cov.reason = Some("the file could not be read".into());
            }
            f.scan.facts.set_fact(Fact::Coverage, cov.to_fact(size));
            f.coverage = Some(cov);
            return f;
        };
        let mut src = HubRange {
            client,
            url: client.file_url(target, commit, entry),
            what: format!("file `{}`", entry.path),
            total: None,
        };
        let (mut scan, cov) = ranged::scan_ranges(&mut src, &entry.path, size, cfg);
        if scan.sha256.is_none() && scan.format.is_some() {
            // Not computed: the Hub's record stands in, and the report says so.
            scan.sha256 = Some(lfs.oid.clone());
            scan.size = size;
        }
        Fetched {
            scan,
            blob: None,
            coverage: Some(cov),
            served_total: src.total,
        }
    }

    /// Streams one file through the one-read scan. Returns the scan and, for files outside LFS,
    /// the git blob id of the bytes read.
    fn stream_one(
        &self,
        cfg: &inspect::ScanConfig,
        client: &Client,
        target: &Target,
        commit: &str,
        entry: &TreeEntry,
    ) -> Fetched {
        let size = entry.content_size();
        if size > cfg.limits.max_file_bytes {
            // Not even opened: scan_reader reports the limit without reading.
            let scan =
                inspect::scan_reader(std::io::empty(), Path::new(""), &entry.path, size, cfg);
            return Fetched {
                scan,
                ..Fetched::default()
            };
        }
        match client.open_file(target, commit, entry) {
            Ok(mut stream) if size <= POSITIONED_MEMORY_BYTES => {
                // Held in memory as it streams: positioned checks read it there, for free.
                let mut bytes = Vec::new();
                let scan = match stream.read_to_end(&mut bytes) {
                    Ok(_) => inspect::scan_reader_at(
                        &bytes[..],
                        Positioned::Memory(&bytes),
                        &entry.path,
                        size,
                        cfg,
                    ),
                    Err(e) => FileScan {
                        detections: vec![inspect::unreadable(&entry.path, &e)],
                        ..FileScan::default()
                    },
                };
                Fetched {
                    scan,
                    blob: stream.git_blob(),
                    ..Fetched::default()
                }
            }
            Ok(mut stream) => {
                // Streamed once for the digests; positioned checks read small structures with
                // range requests under header mode's per-file caps, and the coverage fact says
                // what they cost.
                let mut src = HubRange {
                    client,
                    url: client.file_url(target, commit, entry),
                    what: format!("file `{}`", entry.path),
                    total: None,
                };
                let cell = RefCell::new(Blocks::new(
                    &mut src,
                    size,
                    ranged::BUDGET_BYTES,
                    ranged::MAX_REQUESTS,
                ));
                let mut scan = inspect::scan_reader_at(
                    &mut stream,
                    Positioned::Source(&cell),
                    &entry.path,
                    size,
                    cfg,
                );
                let stats = cell.into_inner().stats();
                if stats.requests > 0 || !stats.not_checked.is_empty() {
                    let mut cov = Coverage::new(Level::Complete);
                    cov.mode = "full";
                    cov.add_positioned(&stats);
                    cov.bytes_read = stream.offset().saturating_add(stats.fetched);
                    cov.requests = 1 + stats.requests;
                    scan.facts.set_fact(Fact::Coverage, cov.to_fact(size));
                }
                Fetched {
                    scan,
                    blob: stream.git_blob(),
                    ..Fetched::default()
                }
            }
            Err(e) => {
                let mut scan = FileScan::default();
                scan.detections.push(
                    Detection::new(
                        RuleId::UnreadableFile,
                        entry.path.as_str(),
                        "download",
                        format!("cannot download file: {e}"),
                    )
                    .with("error", e.to_string()),
                );
                Fetched {
                    scan,
                    ..Fetched::default()
                }
            }
        }
    }

    /// File records, detections and repository checks of a remote scan, as one root.
    fn collect_remote(
        &self,
        target: &Target,
        client: &Client,
        commit: &str,
        mode: RemoteMode,
        (entries, problems): (&[TreeEntry], &[hub::api::EntryProblem]),
        scans: &[Fetched],
    ) -> root::Collected {
        let mut files = Vec::with_capacity(entries.len());
        let mut detections = Vec::new();
        let mut side: BTreeMap<&str, &FileScan> = BTreeMap::new();
        let mut texts: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut seen = std::collections::BTreeSet::new();
        let mut totals = CoverageTotals::default();
        for (e, fetched) in entries.iter().zip(scans) {
            let (scan, blob) = (&fetched.scan, &fetched.blob);
            if !seen.insert(e.path.as_str()) {
                // A tree listing one path twice: the first entry was scanned; say so.
                detections.push(Detection::new(
                    RuleId::UnreadableFile,
                    e.path.as_str(),
                    "duplicate-path",
                    "the Hub's file list names this path more than once; only the first entry is reported",
                ));
                continue;
            }
            side.insert(e.path.as_str(), scan);
            if let Some(t) = &scan.text {
                texts.insert(e.path.clone(), t.clone());
            }
            for d in &scan.detections {
                let mut d = d.clone();
                d.path = e.path.clone();
                detections.push(d);
            }
            detections.extend(hub::check_entry(e, scan, blob.as_deref()));
            let digest_source = match &fetched.coverage {
                Some(c) if c.level != Level::Complete && scan.sha256.is_some() => "hub",
                _ => "computed",
            };
            if let Some(c) = &fetched.coverage {
                totals.add(e, c, digest_source);
                detections.extend(check_coverage(e, c, fetched.served_total));
            }
            let mut facts = scan.facts.clone();
            facts.set_fact(Fact::Hub, hub::entry_facts(e, digest_source));
            files.push(FileRecord {
                path: e.path.clone(),
                size: scan.size,
                sha256: scan.sha256.clone(),
                sha512: scan.sha512.clone(),
                kind: scan.kind.unwrap_or(Kind::Other),
                format: scan.format.unwrap_or(Format::Unknown),
                facts,
            });
        }
        for p in problems {
            // Never used as a path: the detection sits on the repository and quotes it.
            detections.push(
                Detection::new(
                    RuleId::UnreadableFile,
                    "",
                    format!("tree-entry:{}", p.path),
                    format!(
                        "the Hub's file list has an entry that was not scanned ({}): {:?}",
                        p.reason, p.path
                    ),
                )
                .with("entry", p.path.clone())
                .with("reason", p.reason.clone()),
            );
        }
        detections.extend(hub::check_pinned(target, commit));
        if mode == RemoteMode::Headers {
            detections.push(totals.detection());
        }

        let repo = RepoOptions {
            required_fields: self.policy.card.required_fields.clone(),
            allowed_licenses: self.policy.card.allowed_licenses.clone(),
            json_bytes: self.cfg.limits.json_bytes,
        };
        detections.extend(repository::check_shards(&files, &side, &repo));
        detections.extend(repository::check_onnx_external_data(&files));
        repository::check_openvino_weights(&mut files, &mut detections);
        detections.extend(repository::check_coreml_packages(&files));
        repository::mark_lfs_coverage(&mut files, &texts);
        repository::check_model_confusion(&files, &mut detections);
        repository::scope_native_library_loads(&files, &mut detections);
        let (d, model_dirs) = repository::check_model_dirs(&files, &side, &repo);
        detections.extend(d);

        let mut repository = Map::new();
        let digest_source = if totals.hub_digests > 0 {
            "hub"
        } else {
            "computed"
        };
        repository.set_fact(
            Fact::Hub,
            hub::hub_facts(
                target,
                commit,
                client.endpoint(),
                files.len(),
                mode,
                digest_source,
            ),
        );
        if mode == RemoteMode::Headers {
            repository.set_fact(Fact::Coverage, totals.fact());
        }
        // The SBOM names a Hugging Face repository from these two keys (the same ones a local
        // HF cache scan records): pkg:huggingface/ns/name@commit.
        repository.set_fact(
            Fact::Huggingface,
            json!({"repo_id": target.repo, "commit": commit, "source": "remote", "repo_type": target.kind.as_str()}),
        );
        repository.set_fact(Fact::ModelDirs, Value::Array(model_dirs));
        drop(side);
        root::Collected {
            files,
            detections,
            repository,
            git: None,
            excluded: Vec::new(),
        }
    }
}

/// Header-mode coverage over the whole repository.
#[derive(Default)]
struct CoverageTotals {
    files: [u64; 3],
    bytes: u64,
    bytes_read: u64,
    hub_digests: u64,
}

impl CoverageTotals {
    fn add(&mut self, e: &TreeEntry, c: &Coverage, digest_source: &str) {
        let i = match c.level {
            Level::Complete => 0,
            Level::Structure => 1,
            Level::Partial => 2,
        };
        self.files[i] += 1;
        self.bytes = self.bytes.saturating_add(e.content_size());
        self.bytes_read = self.bytes_read.saturating_add(c.bytes_read);
        if digest_source == "hub" {
            self.hub_digests += 1;
        }
    }

    /// Per mille of the repository's bytes that were fetched (integer: stable output).
    fn permille(&self) -> u64 {
        if self.bytes == 0 {
            return 1000;
        }
        let p = u128::from(self.bytes_read) * 1000 / u128::from(self.bytes);
        u64::try_from(p).unwrap_or(1000).min(1000)
    }

    fn fact(&self) -> Value {
        let level = if self.files[2] > 0 {
            Level::Partial
        } else if self.files[1] > 0 {
            Level::Structure
        } else {
            Level::Complete
        };
        json!({
            "mode": "headers",
            "level": level.as_str(),
            "files_complete": self.files[0],
            "files_structure": self.files[1],
            "files_partial": self.files[2],
            "bytes": self.bytes,
            "bytes_read": self.bytes_read,
            "read_permille": self.permille(),
            "hub_digests": self.hub_digests,
        })
    }

    /// HUB004: the scan read headers only; the message states the coverage.
    fn detection(&self) -> Detection {
        let p = self.permille();
        Detection::new(
            RuleId::HubHeaderMode,
            "",
            "header-mode",
            format!(
                "header-mode scan: {} of {} bytes read ({}.{}%); {} file(s) read whole, {} by structure (tensor data not read), {} not covered; {} digest(s) are the Hub's, not computed",
                self.bytes_read,
                self.bytes,
                p / 10,
                p % 10,
                self.files[0],
                self.files[1],
                self.files[2],
                self.hub_digests
            ),
        )
        .with("bytes", self.bytes)
        .with("bytes_read", self.bytes_read)
        .with("files_partial", self.files[2])
    }
}

/// HUB003 for a file header mode could not cover; HUB001 when the server states another size.
fn check_coverage(e: &TreeEntry, c: &Coverage, served_total: Option<u64>) -> Vec<Detection> {
    let mut out = Vec::new();
    if c.level == Level::Partial {
        let why = c.reason.clone().unwrap_or_else(|| "not read".into());
        out.push(
            Detection::new(
                RuleId::HubUnread,
                e.path.as_str(),
                "unread",
                format!("header mode did not check this file's content: {why}"),
            )
            .with("reason", why),
        );
    }
    let size = e.content_size();
    if let Some(total) = served_total
        && total != size
    {
        out.push(
            Detection::new(
                RuleId::HubDigestMismatch,
                e.path.as_str(),
                "size",
                format!(
                    "the Hub records {size} bytes for this file, the server's Content-Range says {total}"
                ),
            )
            .with("expected", size)
            .with("actual", total),
        );
    }
    out
}
