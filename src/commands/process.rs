//! What a command takes from its process: the output stream, the status line on stderr, the
//! run's clock and the default worker count. The folder's leaf: it imports nothing from
//! `commands`, so every command can use it without an arrow back up to `mod.rs`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// Standard output, or a file created at `path`, buffered.
pub(super) fn output(path: Option<&Path>) -> Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) => Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    })
}

/// A status line on stderr (commands talk to the terminal only through here and `output`).
pub(super) fn status(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "{msg}");
}

/// The run's clock; an invalid `SOURCE_DATE_EPOCH` stops the command (exit 2).
pub(super) fn clock() -> Result<modelgate::model::clock::Clock> {
    Ok(modelgate::model::clock::Clock::from_env()?)
}

/// Worker threads when not given: one per CPU.
pub(super) fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
