//! The binary's commands, one file each: parse (already done by clap), call the library, render,
//! return the exit code. Exit codes: 0 nothing denied, 1 denied (or a `verify` mismatch), 2 the
//! tool could not do its job (an `Err` here, printed by `main`).

mod explain;
mod inspect;
mod policy;
mod process;
mod rules;
mod scan;
mod selftest;
mod sign;
mod verify;

use anyhow::Result;

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
