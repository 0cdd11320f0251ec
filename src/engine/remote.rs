//! A remote scan (`hf://ns/name@rev`) through the same engine: the Hub's tree at one commit
//! stands in for the crawl, each file's download stream is its one read (`inspect::scan_reader`:
//! digests and inspectors, nothing written to disk), the streamed digests are checked against
//! the Hub's record (HUB001) and its own verdict (HUB002), and the same repository checks,
//! policy evaluation and report assembly follow.

use crate::model::facts::{Fact, FactMap};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::{Map, Value, json};

use super::{ScanError, Scanner, Stats, root, schedule};
use crate::hub::api::TreeEntry;
use crate::hub::client::Client;
use crate::hub::{self, Target};
use crate::inspect::{self, FileScan};
use crate::model::finding::Detection;
use crate::model::format::{Format, Kind};
use crate::model::report::{FileRecord, Report};
use crate::model::rules::RuleId;
use crate::progress::Progress;
use crate::repository::{self, RepoOptions};

impl Scanner {
    /// Scans a Hub repository at the commit its revision resolves to, streaming every file once.
    pub fn scan_remote(
        &self,
        target: &Target,
        client: &Client,
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
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.options.jobs)
            .build()?;
        // `collect` on an indexed parallel iterator keeps input (path) order: the report is the
        // same for any --jobs.
        let scans: Vec<(FileScan, Option<String>)> = pool.install(|| {
            entries
                .par_iter()
                .map(|e| {
                    let mut blob = None;
                    let scan = schedule::scan_guarded(&e.path, || {
                        let (scan, b) = self.stream_one(client, target, &commit, e);
                        blob = b;
                        scan
                    });
                    bar.file_done(e.content_size());
                    (scan, blob)
                })
                .collect()
        });
        bar.finish();
        stats.read = started.elapsed();
        stats.files = scans.len() as u64;
        stats.bytes = scans
            .iter()
            .map(|(s, _)| s.size)
            .fold(0, u64::saturating_add);

        let started = Instant::now();
        let collected = self.collect_remote(target, client, &commit, &entries, &problems, &scans);
        stats.provenance = started.elapsed();

        let started = Instant::now();
        let report = self.assemble(
            &[PathBuf::from(target.display())],
            vec![(String::new(), collected)],
        );
        stats.policy = started.elapsed();
        Ok((report, stats))
    }

    /// Streams one file through the one-read scan. Returns the scan and, for files outside LFS,
    /// the git blob id of the bytes read.
    fn stream_one(
        &self,
        client: &Client,
        target: &Target,
        commit: &str,
        entry: &TreeEntry,
    ) -> (FileScan, Option<String>) {
        let size = entry.content_size();
        if size > self.cfg.limits.max_file_bytes {
            // Not even opened: scan_reader reports the limit without reading.
            let scan = inspect::scan_reader(
                std::io::empty(),
                Path::new(""),
                &entry.path,
                size,
                &self.cfg,
            );
            return (scan, None);
        }
        match client.open_file(target, commit, entry) {
            Ok(mut stream) => {
                // An empty path: nothing on disk to reopen for positioned-read formats.
                let scan =
                    inspect::scan_reader(&mut stream, Path::new(""), &entry.path, size, &self.cfg);
                (scan, stream.git_blob())
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
                (scan, None)
            }
        }
    }

    /// File records, detections and repository checks of a remote scan, as one root.
    fn collect_remote(
        &self,
        target: &Target,
        client: &Client,
        commit: &str,
        entries: &[TreeEntry],
        problems: &[hub::api::EntryProblem],
        scans: &[(FileScan, Option<String>)],
    ) -> root::Collected {
        let mut files = Vec::with_capacity(entries.len());
        let mut detections = Vec::new();
        let mut side: BTreeMap<&str, &FileScan> = BTreeMap::new();
        let mut texts: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut seen = std::collections::BTreeSet::new();
        for (e, (scan, blob)) in entries.iter().zip(scans) {
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
            let mut facts = scan.facts.clone();
            facts.set_fact(Fact::Hub, hub::entry_facts(e));
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

        let repo = RepoOptions {
            required_fields: self.policy.card.required_fields.clone(),
            allowed_licenses: self.policy.card.allowed_licenses.clone(),
            json_bytes: self.cfg.limits.json_bytes,
        };
        detections.extend(repository::check_shards(&files, &side, &repo));
        detections.extend(repository::check_onnx_external_data(&files));
        repository::mark_lfs_coverage(&mut files, &texts);
        repository::check_model_confusion(&files, &mut detections);
        repository::scope_native_library_loads(&files, &mut detections);
        let (d, model_dirs) = repository::check_model_dirs(&files, &side, &repo);
        detections.extend(d);

        let mut repository = Map::new();
        repository.set_fact(
            Fact::Hub,
            hub::hub_facts(target, commit, client.endpoint(), files.len()),
        );
        // The SBOM names a Hugging Face repository from these two keys (the same ones a local
        // HF cache scan records): pkg:huggingface/ns/name@commit.
        repository.set_fact(
            Fact::Huggingface,
            json!({"repo_id": target.repo, "commit": commit, "source": "remote"}),
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
