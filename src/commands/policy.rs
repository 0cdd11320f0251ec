//! `modelgate policy check | init`.

use std::io::Write;

use anyhow::{Context, Result, bail};
use modelgate::policy;

use crate::cli::PolicyCommand;

/// Runs a `policy` subcommand.
pub fn run(cmd: PolicyCommand) -> Result<u8> {
    match cmd {
        PolicyCommand::Check { file } => {
            let policy = policy::load_file(&file)?;
            let mut w = super::output(None)?;
            policy::render_effective(&policy, &mut w)?;
            w.flush()?;
            Ok(0)
        }
        PolicyCommand::Init {
            preset,
            output,
            force,
        } => {
            let Some(text) = policy::starter_toml(&preset) else {
                let names: Vec<&str> = policy::PRESETS.iter().map(|(n, _)| *n).collect();
                bail!("unknown preset `{preset}` (presets: {})", names.join(", "));
            };
            if output.as_os_str() == "-" {
                let mut w = super::output(None)?;
                w.write_all(text.as_bytes())?;
                w.flush()?;
                return Ok(0);
            }
            if !force && std::fs::symlink_metadata(&output).is_ok() {
                bail!(
                    "{} already exists (use --force to overwrite)",
                    output.display()
                );
            }
            std::fs::write(&output, text)
                .with_context(|| format!("cannot write {}", output.display()))?;
            super::status(&format!("wrote {} (preset {preset})", output.display()));
            Ok(0)
        }
    }
}
