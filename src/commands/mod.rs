//! The binary's commands, one file each: parse (already done by clap), call the library, render,
//! return the exit code. Exit codes: 0 nothing denied, 1 denied (or a `verify` mismatch), 2 the
//! tool could not do its job (an `Err` here, printed by `main`).

mod explain;
mod inspect;
mod policy;
mod rules;
mod scan;
mod selftest;
mod sign;
mod verify;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::{Cli, Command};

/// Runs a parsed command line and returns the process exit code.
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Scan(args) => scan::run(args),
        Command::Rules(args) => rules::run(args.format),
        Command::Inspect(args) => inspect::run(args),
        Command::Policy(cmd) => policy::run(cmd),
        Command::Explain(args) => explain::run(&args.rule),
        Command::Verify(args) => verify::run(args),
        Command::Sign(args) => sign::run(args),
        Command::Selftest => selftest::run(),
    }
}

/// Standard output, or a file created at `path`, buffered.
fn output(path: Option<&Path>) -> Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) => Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    })
}

/// A status line on stderr (commands talk to the terminal only through here and `output`).
fn status(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "{msg}");
}

/// The run's clock; an invalid `SOURCE_DATE_EPOCH` stops the command (exit 2).
fn clock() -> Result<modelgate::model::clock::Clock> {
    Ok(modelgate::model::clock::Clock::from_env()?)
}

/// Worker threads when not given: one per CPU.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
