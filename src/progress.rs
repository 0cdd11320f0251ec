//! The progress bar of long scans: bytes and files done, rate and ETA, on stderr only.
//!
//! A gate run in CI must keep stdout (the report) and captured stderr clean, so the bar exists
//! only when the caller says stderr is an interactive terminal and the scan is big enough to be
//! worth watching; otherwise every call is a no-op. Workers report each finished file; the file
//! count is an atomic read by the bar's own template, so a tree of 100,000 small files costs one
//! atomic add per file and no lock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// Scans smaller than this (bytes) and ...
const MIN_BYTES: u64 = 512 << 20;
/// ... with fewer files than this finish in about a second: no bar for them.
const MIN_FILES: u64 = 10_000;

/// A thread-safe progress reporter; a no-op when disabled.
pub struct Progress {
    bar: Option<ProgressBar>,
    files: Arc<AtomicU64>,
}

impl Progress {
    /// A bar for `total_files` files holding `total_bytes` bytes. `enabled` is the caller's
    /// decision that stderr is a terminal and output is wanted (not `--quiet`); the bar is
    /// shown only if the scan is also large enough to take more than a moment.
    pub fn new(total_files: u64, total_bytes: u64, enabled: bool) -> Progress {
        let files = Arc::new(AtomicU64::new(0));
        let big = total_bytes >= MIN_BYTES || total_files >= MIN_FILES;
        if !enabled || !big {
            return Progress { bar: None, files };
        }
        let counter = Arc::clone(&files);
        let style = ProgressStyle::with_template(
            "{bar:30} {binary_bytes}/{binary_total_bytes} {files} files, \
             {binary_bytes_per_sec}, ETA {eta}",
        )
        .map(|s| {
            s.with_key(
                "files",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{}/{total_files}", counter.load(Ordering::Relaxed));
                },
            )
        })
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        let bar =
            ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr_with_hz(4))
                .with_style(style);
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress {
            bar: Some(bar),
            files,
        }
    }

    /// Whether a bar is being drawn.
    pub fn is_shown(&self) -> bool {
        self.bar.is_some()
    }

    /// Records one finished file of `bytes` bytes.
    pub fn file_done(&self, bytes: u64) {
        if let Some(bar) = &self.bar {
            self.files.fetch_add(1, Ordering::Relaxed);
            bar.inc(bytes);
        }
    }

    /// Removes the bar (the report follows on stdout, the terminal stays clean).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_progress_is_silent() {
        let p = Progress::new(200_000, 10 << 30, false);
        assert!(!p.is_shown());
        p.file_done(1 << 20);
        p.finish();
    }

    #[test]
    fn small_scans_get_no_bar() {
        let p = Progress::new(10, 1 << 20, true);
        assert!(!p.is_shown());
    }

    #[test]
    fn bar_counts_files() {
        // A hidden draw target keeps the test's stderr clean while exercising the counters.
        let p = Progress::new(20_000, 1 << 30, true);
        if let Some(bar) = &p.bar {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        p.file_done(1 << 20);
        p.file_done(1 << 20);
        assert_eq!(p.files.load(Ordering::Relaxed), 2);
        assert_eq!(p.bar.as_ref().map(ProgressBar::position), Some(2 << 20));
        p.finish();
    }
}
