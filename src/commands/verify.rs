//! `modelgate verify --sbom FILE [PATH]`: are the files still the ones the SBOM recorded?

use std::io::Write;

use anyhow::{Result, bail};

use crate::cli::{TextOrJson, VerifyArgs};

/// Exit 1 when any file differs from the SBOM.
pub fn run(args: VerifyArgs) -> Result<u8> {
    if std::fs::symlink_metadata(&args.path).is_err() {
        bail!("path does not exist: {}", args.path.display());
    }
    let result = modelgate::verify::verify(&args.sbom, &args.path, super::default_jobs())?;
    let mut w = super::output(None)?;
    match args.format {
        TextOrJson::Text => result.render_text(&mut w)?,
        TextOrJson::Json => result.render_json(&mut w)?,
    }
    w.flush()?;
    Ok(u8::from(!result.is_clean()))
}
