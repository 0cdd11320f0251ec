//! What a scan is configured with and gives back besides its report: [`Scanner`] (a policy
//! plus [`ScanOptions`]), [`ScanError`] and [`Stats`]. The folder's leaf: it imports nothing from
//! `engine`, so the local scan (`mod.rs`) and the remote one (`remote`) both build on it without
//! an arrow back up. The scans themselves are `impl Scanner` blocks in those two files.

use std::path::PathBuf;
use std::time::Duration;

use crate::inspect::ScanConfig;
use crate::model::clock::Clock;
use crate::model::report::FailOn;
use crate::policy::Policy;
use crate::walk::WalkError;

/// How to scan, beyond what the policy says.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Exclude globs on top of the defaults and the policy's `[scan] exclude`.
    pub excludes: Vec<String>,
    /// Worker threads (at least 1).
    pub jobs: usize,
    /// Skip git provenance.
    pub no_git: bool,
    /// Scan float tensors for NaN/Inf even when the policy does not ask for it.
    pub check_values: bool,
    /// Also compute SHA-512 in the same read.
    pub sha512: bool,
    /// Read block size (0: the default).
    pub block_size: usize,
    /// What makes the report's exit code 1.
    pub fail_on: FailOn,
    /// Show a progress bar on stderr (the caller decided stderr is a terminal).
    pub progress: bool,
    /// The run's clock: exception expiry is judged on its date.
    pub clock: Clock,
    /// Opt-in result cache directory (`--cache DIR`): unchanged files are not read again.
    pub cache: Option<PathBuf>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            excludes: Vec::new(),
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            no_git: false,
            check_values: false,
            sha512: false,
            block_size: 0,
            fail_on: FailOn::Deny,
            progress: false,
            clock: Clock::system(),
            cache: None,
        }
    }
}

/// Failures of the scan itself (exit 2), never of a scanned file.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// A root is missing or unreadable, or an exclude glob is invalid.
    #[error(transparent)]
    Walk(#[from] WalkError),
    /// The worker threads could not start.
    #[error("cannot start worker threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    /// `jobs` was 0.
    #[error("--jobs must be at least 1")]
    NoJobs,
    /// No root was given.
    #[error("nothing to scan: no path given")]
    NoRoots,
    /// A remote scan could not resolve, list or reach the repository (`hf://`).
    #[error(transparent)]
    Hub(#[from] crate::hub::client::HubError),
}

/// Where the time of one scan went (`--verbose`).
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Crawling every root.
    pub walk: Duration,
    /// The read stage, wall clock (read, hash and inspect every file, in parallel).
    pub read: Duration,
    /// The same stage's time summed over worker threads.
    pub read_cpu: Duration,
    /// Of which: reading blocks and hashing them (SHA-256, SHA-512), summed over threads; the
    /// rest of `read_cpu` is the inspectors.
    pub hash_cpu: Duration,
    /// Repository checks, model cards and git, every root.
    pub provenance: Duration,
    /// Policy evaluation and the report's assembly.
    pub policy: Duration,
    /// Files read.
    pub files: u64,
    /// Bytes read (or, for cache hits, recorded).
    pub bytes: u64,
    /// Files whose result came from the cache.
    pub cache_hits: u64,
    /// Notes about the cache: an existing cache file that was ignored (and why), or a cache that
    /// could not be written.
    pub cache_notes: Vec<String>,
}

/// A configured scan: a policy plus options. Reusable for any number of scans.
#[derive(Debug, Clone)]
pub struct Scanner {
    pub(super) policy: Policy,
    pub(super) options: ScanOptions,
    pub(super) cfg: ScanConfig,
    pub(super) excludes: Vec<String>,
}
