//! The `modelgate` binary: parse the command line, run one command, map the result to an exit
//! code. Everything else lives in the library (`modelgate::Scanner` and the stages).

mod cli;
mod commands;

use std::process::ExitCode;

use clap::Parser;

#[allow(clippy::disallowed_macros)] // the one place that prints errors
fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // A broken pipe (e.g. `| head`) is not a tool failure worth a message.
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::from(0);
            }
            // Policy errors are already rendered diagnostics (file:line:col, carets).
            match e.downcast_ref::<modelgate::policy::PolicyError>() {
                Some(policy_error) => eprintln!("{policy_error}"),
                None => eprintln!("modelgate: error: {e:#}"),
            }
            ExitCode::from(2)
        }
    }
}
