//! The read stage's scheduler: every file of every root through one rayon pool, largest first,
//! results back in input order, a panic or a lost result turned into a finding for that file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::cache::{Cache, Identity, MIN_CACHED_BYTES};
use crate::inspect::{self, FileScan, ScanConfig};
use crate::model::finding::Detection;
use crate::model::rules::RuleId;
use crate::progress::Progress;

/// One file to read: where to open it, its display path and the size the crawl saw.
#[derive(Debug, Clone)]
pub struct Unit {
    /// The path to open.
    pub open: PathBuf,
    /// The display path (root-prefixed in multi-root scans).
    pub rel: String,
    /// The size the crawl saw.
    pub size: u64,
}

/// CPU time the workers spent, summed over threads.
#[derive(Debug, Default)]
pub struct Cpu {
    /// Time in the scan of each file (read, hash and inspect together).
    pub total_nanos: AtomicU64,
    /// Files whose result came from the cache (not read).
    pub cache_hits: AtomicU64,
}

impl Cpu {
    /// The summed time.
    pub fn total(&self) -> Duration {
        Duration::from_nanos(self.total_nanos.load(Ordering::Relaxed))
    }
}

/// Scans `units` with `jobs` threads, largest first (so one huge shard does not finish last
/// alone), and returns one result per unit in input order: output is identical for any thread
/// count.
pub fn scan_all(
    units: &[Unit],
    cfg: &ScanConfig,
    jobs: usize,
    progress: bool,
    cpu: &Cpu,
    cache: Option<&Cache>,
) -> Result<Vec<FileScan>, rayon::ThreadPoolBuildError> {
    let total_bytes = units.iter().map(|u| u.size).fold(0u64, u64::saturating_add);
    let bar = Progress::new(units.len() as u64, total_bytes, progress);
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| units[b].size.cmp(&units[a].size).then(a.cmp(&b)));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<FileScan>>> = Mutex::new(vec![None; units.len()]);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .stack_size(crate::model::limits::WORKER_STACK_BYTES)
        .build()?;
    pool.scope(|s| {
        for _ in 0..jobs {
            s.spawn(|_| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&idx) = order.get(i) else { break };
                    let u = &units[idx];
                    let started = Instant::now();
                    // Model code is judged by where it sits (next to weights or a config),
                    // which the file's identity does not cover: never from the cache.
                    let id = cache
                        .filter(|_| u.size >= MIN_CACHED_BYTES && !cfg.model_code.contains(&u.rel))
                        .and_then(|_| Identity::of(&u.open));
                    let hit = cache.zip(id.as_ref()).and_then(|(c, id)| c.get(id));
                    if hit.is_some() {
                        cpu.cache_hits.fetch_add(1, Ordering::Relaxed);
                    }
                    let scan = hit.unwrap_or_else(|| {
                        let scan = scan_guarded(&u.rel, || {
                            inspect::scan_file(&u.open, &u.rel, u.size, cfg)
                        });
                        if let (Some(c), Some(id)) = (cache, &id) {
                            c.put(id, &u.open, &scan);
                        }
                        scan
                    });
                    let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    cpu.total_nanos.fetch_add(nanos, Ordering::Relaxed);
                    bar.file_done(u.size);
                    // A poisoned lock still holds every result stored so far; keep storing.
                    let mut r = results.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Some(slot) = r.get_mut(idx) {
                        *slot = Some(scan);
                    }
                }
            });
        }
    });
    bar.finish();
    let results = results.into_inner().unwrap_or_else(PoisonError::into_inner);
    Ok(results
        .into_iter()
        .zip(units)
        .map(|(r, u)| r.unwrap_or_else(|| lost_result(&u.rel)))
        .collect())
}

/// A unit whose worker stored nothing: never a clean record, which would pass a file nobody read.
fn lost_result(rel: &str) -> FileScan {
    let mut out = FileScan::default();
    out.detections.push(Detection::new(
        RuleId::UnreadableFile,
        rel,
        "no-result",
        "internal error: the worker returned no result for this file; it was not scanned",
    ));
    out
}

/// Runs `work` on a thread with the workers' stack ([`WORKER_STACK_BYTES`]), for scan work
/// that would otherwise run on the calling (main) thread, whose stack the platform decides
/// (1 MiB on Windows). When no thread can be started, `work` runs here.
///
/// [`WORKER_STACK_BYTES`]: crate::model::limits::WORKER_STACK_BYTES
pub fn on_worker_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .stack_size(crate::model::limits::WORKER_STACK_BYTES)
        .build();
    match pool {
        // `install` returns the result and carries a panic in `work` back here.
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    }
}

/// Runs one file's scan so that a panic in it becomes a `SCAN001 unreadable-file` detection for
/// that file and the other files are still scanned. This is defence in depth, not the
/// error-handling strategy: inspectors turn malformed input into findings and must not panic;
/// a panic caught here is a bug to fix.
pub fn scan_guarded(rel: &str, scan: impl FnOnce() -> FileScan) -> FileScan {
    // AssertUnwindSafe: the closure's result is discarded on panic and nothing it borrowed
    // (the file path, the shared read-only config) is left half-updated.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(scan)) {
        Ok(scan) => scan,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let mut out = FileScan::default();
            out.detections.push(
                Detection::new(
                    RuleId::UnreadableFile,
                    rel,
                    "panic",
                    "internal error while inspecting this file; it was not fully scanned",
                )
                .with("error", what),
            );
            out
        }
    }
}

/// The second pass's scope, when weights found by their content (`kinds`, in the order of
/// `paths`) make more files model code than their names did
/// (`repository::model_code_with_weights`): the indices of those files, and `cfg` with the
/// model-code set that includes them. `None` when there are none (nearly always).
pub fn late_model_code<'a>(
    paths: impl IntoIterator<Item = &'a str> + Clone,
    kinds: impl IntoIterator<Item = Option<crate::classify::Kind>>,
    cfg: &ScanConfig,
) -> Option<(Vec<usize>, ScanConfig)> {
    let weights = paths
        .clone()
        .into_iter()
        .zip(kinds)
        .filter(|(_, k)| *k == Some(crate::classify::Kind::Weights))
        .map(|(p, _)| p);
    let all = crate::repository::model_code_with_weights(paths.clone(), weights);
    let late: Vec<usize> = paths
        .into_iter()
        .enumerate()
        .filter(|(_, p)| all.contains(*p) && !cfg.model_code.contains(*p))
        .map(|(i, _)| i)
        .collect();
    (!late.is_empty()).then(|| {
        let cfg = ScanConfig {
            model_code: std::sync::Arc::new(all),
            ..cfg.clone()
        };
        (late, cfg)
    })
}

/// Scans again, as model code, the code that weights found by their content make model code
/// (a pickle named `weights.data` beside `helper.py`): the first read judged it by the names
/// alone. Rare, and each such file is read twice; the second scan replaces the first.
pub fn rescan_late_model_code(
    units: &[Unit],
    scans: &mut [crate::inspect::FileScan],
    cfg: &ScanConfig,
    jobs: usize,
    cpu: &Cpu,
) -> Result<(), rayon::ThreadPoolBuildError> {
    let paths = units.iter().map(|u| u.rel.as_str());
    let Some((at, cfg)) = late_model_code(paths, scans.iter().map(|s| s.kind), cfg) else {
        return Ok(());
    };
    let again: Vec<Unit> = at.iter().filter_map(|&i| units.get(i).cloned()).collect();
    let rescanned = scan_all(&again, &cfg, jobs, false, cpu, None)?;
    for (i, scan) in at.into_iter().zip(rescanned) {
        if let Some(slot) = scans.get_mut(i) {
            *slot = scan;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn panic_in_one_file_becomes_unreadable_file_detection() {
        let scan = scan_guarded("bad.bin", || panic!("boom"));
        assert_eq!(scan.detections.len(), 1);
        let d = &scan.detections[0];
        assert_eq!(d.rule, RuleId::UnreadableFile);
        assert_eq!(d.evidence.get("error"), Some(&json!("boom")));
        assert!(scan.sha256.is_none());
    }

    #[test]
    fn a_lost_result_is_a_finding_not_a_clean_record() {
        let scan = lost_result("gone.bin");
        assert!(scan.sha256.is_none());
        assert_eq!(scan.detections[0].rule, RuleId::UnreadableFile);
        assert_eq!(scan.detections[0].path, "gone.bin");
    }
}
