//! The `modelgate` binary: parse the command line, run, map the result to an exit code.

use std::process::ExitCode;

use clap::Parser;

#[allow(clippy::disallowed_macros)] // the one place that prints errors
fn main() -> ExitCode {
    let cli = modelgate::cli::Cli::parse();
    match modelgate::app::run(cli) {
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
